"""Shared helpers of the controller / PPO differential generators (gen_shaping.py, gen_gae.py,
gen_plackett_luce.py, gen_new_skill_bias.py, gen_ppo_update.py).

Imports the reference implementation (MemSkill, commit cda41f3) from a checkout given on the
command line, so the generators call the reference's own functions; nothing of its text is
copied here. `wandb` is stubbed (imported at the top of the reference's trainer, unused by the
functions called).
"""
import argparse
import json
import os
import sys
import types

REFERENCE_COMMIT = "cda41f3"


def args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--reference", required=True, help="MemSkill checkout (commit cda41f3)")
    p.add_argument("--out", required=True, help="output folder for <component>.json")
    p.add_argument("--seed", type=int, default=11)
    return p.parse_args()


def import_reference(ref):
    ref = os.path.abspath(ref)
    if not os.path.isfile(os.path.join(ref, "src", "controller.py")):
        sys.exit(f"error: {ref} does not look like a MemSkill checkout (no src/controller.py)")
    if ref not in sys.path:
        sys.path.insert(0, ref)
    for name in ("wandb",):
        if name not in sys.modules:
            sys.modules[name] = types.ModuleType(name)
    devnull = open(os.devnull, "w")
    old = sys.stdout
    sys.stdout = devnull  # the reference prints import warnings (faiss, langchain)
    try:
        import src.controller as controller
        import src.config as config
        import src.trainer as trainer
    finally:
        sys.stdout = old
    return types.SimpleNamespace(controller=controller, config=config, trainer=trainer)


def f32(x):
    """A float that prints as the shortest decimal of its float32 rounding."""
    import numpy as np

    return float(str(np.float32(x)))


def write(out_dir, component, tolerance, cases):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{component}.json")
    doc = {
        "component": component,
        "reference": REFERENCE_COMMIT,
        "tolerance": tolerance,
        "cases": cases,
    }
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {len(cases)} cases, {os.path.getsize(path)} bytes", file=sys.stderr)
