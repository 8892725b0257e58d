#!/usr/bin/env python3
"""Differential fixture `split_longmemeval`: which LongMemEval questions the reference
evaluates for a split: main.split_data (the splits file's 0-based indices, in the file's order,
indices past the end dropped) followed by the `_abs` skip that main.infer_text_dataset_memories /
evaluate_text_dataset_queries apply inline (a question whose question_id ends in `_abs` is
skipped; that two-line filter is not a callable function, so it is applied here the same way).
Question ids and split files are generated (shapes: small random ones, and 500 questions with
splits of 297 / 98 / 105 as MemSkill's file).
Usage: gen_split_longmemeval.py --reference REF --out DIR [--cases N] [--seed S]"""
import argparse
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refenv_data as R  # noqa: E402


def qid(rng, i):
    r = rng.random()
    base = "%d" % rng.randint(0, 99) if r < 0.05 else "%08x" % rng.getrandbits(32)
    return base + ("_abs" if rng.random() < 0.15 else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    R.add_reference(a.reference)
    with R.quiet():
        import main as ref_main  # the reference's main.py

    rng = random.Random(a.seed)
    cases = []
    work = tempfile.mkdtemp()
    os.makedirs(os.path.join(work, "data"), exist_ok=True)
    cwd = os.getcwd()
    try:
        os.chdir(work)  # split_data reads ./data/longmemeval_s_splits.json
        for i in range(a.cases):
            if i < 4:
                n = 500
                perm = list(range(n))
                rng.shuffle(perm)
                splits = {"train": perm[:297], "val": perm[297:395], "test": perm[395:]}
            else:
                n = rng.randint(0, 40)
                pool = list(range(n + rng.randint(0, 4)))  # a few indices past the end
                rng.shuffle(pool)
                c1, c2 = sorted(rng.randint(0, len(pool)) for _ in range(2))
                splits = {"train": pool[:c1], "val": pool[c1:c2], "test": pool[c2:]}
            qids = [qid(rng, j) for j in range(n)]
            data = [{"question_id": q} for q in qids]
            with open(os.path.join("data", "longmemeval_s_splits.json"), "w") as f:
                json.dump(splits, f)
            split = rng.choice(["test", "test", "train", "val"])
            with R.quiet():
                train, val, test = ref_main.split_data(data, "longmemeval")
            chosen = {"train": train, "val": val, "test": test}[split]
            kept = [str(x.get("question_id", "")) for x in chosen
                    if not str(x.get("question_id", "")).endswith("_abs")]
            cases.append({"input": {"question_ids": qids, "splits": splits, "split": split},
                          "expected": {"question_ids": kept}})
    finally:
        os.chdir(cwd)
    R.write_fixture(a.out, "split_longmemeval", cases)


if __name__ == "__main__":
    main()
