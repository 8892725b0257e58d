#!/usr/bin/env python3
"""The reference's own skill embeddings of its initial bank, for the differential check in
tests/tests/reference_bank.rs: the checkout's OperationBank (its seed operations, NOOP
included) with an OpEncoder on all-MiniLM-L6-v2 (src/controller.py, the sentence-transformers
path, the model name mapped to memskill's local asset). Prints JSON {operation name:
[384 floats]} in the bank's order. Nothing of the reference's text is written anywhere.

Usage: reference_op_embeddings.py --reference REF [--minilm DIR]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _encoder_common import default_minilm, load_reference_module  # noqa: E402

NAME = "sentence-transformers/all-MiniLM-L6-v2"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--minilm", default=default_minilm())
    a = ap.parse_args()
    ctrl = load_reference_module(a.reference, "src/controller.py", "memskill_ref_controller")
    orig = ctrl.SentenceTransformer
    ctrl.SentenceTransformer = lambda name, *args, **kw: orig(a.minilm if name == NAME else name, *args, **kw)
    encoder = ctrl.OpEncoder(model_name=NAME, device="cpu", encode_batch_size=64)
    ob = load_reference_module(a.reference, "src/operation_bank.py", "memskill_ref_operation_bank")
    bank = ob.OperationBank(encoder=encoder, skip_noop=False)
    print(json.dumps({name: op.embedding.tolist() for name, op in bank.operations.items()}))


if __name__ == "__main__":
    main()
