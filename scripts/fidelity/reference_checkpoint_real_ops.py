#!/usr/bin/env python3
"""A checkpoint saved the way the reference's trainer saves it (see gen_reference_checkpoint.py),
holding the reference's OWN initial operations (texts from the checkout given, NOOP included)
instead of placeholders, written to --pt (a temp path: the texts must stay out of this
repository). Used by trainer/tests/reference_real_ops.rs: `import-reference` then `eval`.

Usage: reference_checkpoint_real_ops.py --reference REF --pt OUT.pt
"""
import argparse
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _encoder_common import load_reference_module  # noqa: E402
from gen_reference_checkpoint import build_case  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--pt", required=True)
    a = ap.parse_args()
    ctrl = load_reference_module(a.reference, "src/controller.py", "ref_controller")
    ob = load_reference_module(a.reference, "src/operation_bank.py", "ref_operation_bank")
    case = build_case(types.SimpleNamespace(controller=ctrl), ob, 11, emb_dim=64, hidden=8,
                      with_new=False, train_step=True, real_ops=True)
    with open(a.pt, "wb") as f:
        f.write(bytes.fromhex(case["input"]["checkpoint_hex"]))
    names = [o["name"] for o in case["expected"]["operations"]]
    print(f"wrote {a.pt}: the reference's operations {names}", file=sys.stderr)


if __name__ == "__main__":
    main()
