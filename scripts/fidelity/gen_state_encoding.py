#!/usr/bin/env python3
"""Differential fixture `state_encoding`: the controller's state for a span, given embeddings.

Reference (src/trainer.py _process_session): the span's state-encoder embedding retrieves the
top-k memories by their state-encoder embeddings (src/memory_bank.py MemoryBank.retrieve with
use_state_encoder=True, return_embeddings=True: cosine, best first), then
src/controller.py StateEncoder.encode(..., session_embedding=, memory_embeddings=) concatenates
the span embedding with the mean of the retrieved embeddings (fusion "mean", the default;
zeros when nothing was retrieved). Inputs are random, un-normalised vectors (so the mean of
the raw stored vectors is checked) without exact similarity ties.

Usage: gen_state_encoding.py --reference REF --out DIR [--cases N]
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _encoder_common import load_reference_module  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    mb_mod = load_reference_module(a.reference, "src/memory_bank.py", "memskill_ref_memory_bank")
    ctrl = load_reference_module(a.reference, "src/controller.py", "memskill_ref_controller")
    se = object.__new__(ctrl.StateEncoder)  # no model: every embedding is given
    se.fusion_mode, se.fusion_tau, se._base_encoder = "mean", 1.0, None
    rng = np.random.default_rng(a.seed)
    cases = []
    for c in range(a.cases):
        d = int(rng.choice([3, 4, 6]))
        n = 0 if c % 25 == 0 else int(rng.integers(1, 25))
        k = int(rng.choice([1, 3, 5, 20]))
        scale = float(rng.choice([0.1, 1.0, 3.0]))
        span = np.round(rng.normal(size=d) * scale, 4).astype(np.float32)
        mems = np.round(rng.normal(size=(n, d)) * scale, 4).astype(np.float32)
        bank = mb_mod.MemoryBank(retriever_name="contriever", top_k=k)
        for i in range(n):
            bank.add_memory(f"memory {i}", embedding=None, state_encoder_embedding=mems[i])
        contents, idx, embs = bank.retrieve(span, use_state_encoder=True, return_embeddings=True)
        state = se.encode("span text", contents, session_embedding=span, memory_embeddings=embs)
        cases.append({
            "input": {"span": [round(float(x), 4) for x in span],
                      "memories": [[round(float(x), 4) for x in m] for m in mems],
                      "top_k": k},
            "expected": {"retrieved": [int(i) for i in idx],
                         "state": [round(float(x), 7) for x in state]},
        })
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "state_encoding.json"), "w") as f:
        json.dump({"component": "state_encoding", "reference": "cda41f3", "tolerance": 1e-6,
                   "cases": cases}, f, separators=(",", ":"))
    print(f"gen_state_encoding: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
