#!/usr/bin/env python3
"""Differential fixture `apply_actions`: memory bank + retrieved indices + parsed results ->
the bank's contents, in order, after the reference's `Executor.apply_to_memory_bank`
(src/executor.py over src/memory_bank.py).

Random banks (0-9 memories, duplicates possible), a retrieved list (a random ordered subset of
the bank's positions, as retrieval returns it), and random results (successful and failed
INSERT / UPDATE / DELETE / NOOP, indices into the retrieved list, repeated indices, repeated
texts). Records the memory contents after application.

Usage: gen_apply_actions.py --reference CHECKOUT --out DIR [--seed N]
"""
import argparse
import importlib.util
import json
import logging
import os
import random
import sys
import types

import numpy as np


def load(ref, name, path):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ref, path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_reference(ref):
    sys.path.insert(0, ref)
    llm = types.ModuleType("llm_utils")
    llm.get_llm_response_via_api = lambda *a, **k: None
    llm.get_llm_response = lambda *a, **k: []
    rag = types.ModuleType("rag_utils")
    # embeddings only decide retrieval, not application: a constant vector per text
    rag.get_embeddings = lambda name, texts, kind: [np.ones(4, dtype=np.float32) for _ in texts]
    sys.modules.setdefault("llm_utils", llm)
    sys.modules.setdefault("rag_utils", rag)
    ex = load(ref, "ref_executor", "src/executor.py")
    mb = load(ref, "ref_memory_bank", "src/memory_bank.py")
    logging.getLogger("AgenticMemory").disabled = True
    return ex, mb


TEXTS = ["Alice lives in Rome", "Bob likes tea", "Carol has a cat", "Dave plays chess",
         "Eve runs marathons", "Frank moved to Oslo", "Grace is a nurse", "Heidi loves jazz"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--cases", type=int, default=500)
    args = ap.parse_args()
    ex_mod, mb_mod = load_reference(os.path.abspath(args.reference))
    executor = ex_mod.Executor(types.SimpleNamespace(retriever="contriever"))
    R = ex_mod.ExecutionResult
    r = random.Random(args.seed)
    cases = []
    for _ in range(args.cases):
        bank_texts = [r.choice(TEXTS) + (f" #{i}" if r.random() < 0.8 else "") for i in range(r.randint(0, 9))]
        k = r.randint(0, min(5, len(bank_texts)))
        retrieved = r.sample(range(len(bank_texts)), k)
        results = []
        for _ in range(r.randint(0, 6)):
            kind = r.choice(["INSERT", "UPDATE", "DELETE", "NOOP", "FAIL"])
            text = r.choice(TEXTS + bank_texts) if r.random() < 0.5 else f"new fact {r.randint(0, 9)}"
            if kind == "INSERT":
                results.append(R("INSERT", True, memory_content=text))
            elif kind in ("UPDATE", "DELETE"):
                if k == 0:
                    continue
                idx = r.randrange(k)
                if results and r.random() < 0.3 and results[-1].memory_index >= 0:
                    idx = results[-1].memory_index  # repeat the previous index
                if kind == "UPDATE":
                    results.append(R("UPDATE", True, memory_index=idx, memory_content=text))
                else:
                    results.append(R("DELETE", True, memory_index=idx))
            elif kind == "NOOP":
                results.append(R("NOOP", True))
            else:
                results.append(R("NOOP", False, reasoning="parse failed"))
        bank = mb_mod.MemoryBank(retriever_name="contriever")
        for t in bank_texts:
            bank.add_memory(t, np.ones(4, dtype=np.float32))
        executor.apply_to_memory_bank(results, bank, list(retrieved), operation_name=["skill"])
        cases.append({
            "input": {
                "bank": bank_texts,
                "retrieved": retrieved,
                "results": [[x.action_type, bool(x.success), int(x.memory_index), x.memory_content] for x in results],
            },
            "expected": bank.get_all_contents(),
        })
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "apply_actions.json"), "w", encoding="utf-8") as f:
        json.dump({"component": "apply_actions", "reference": "cda41f3", "tolerance": 0.0, "cases": cases},
                  f, ensure_ascii=False, separators=(",", ":"))
    print(f"apply_actions: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
