#!/usr/bin/env python3
"""Differential fixture `query_quotas`: how many training queries of each category the
reference's LoCoMo sampler keeps for a sampling ratio (LoCoMoEvaluator.sample_train_qa_list:
ceil(n * ratio) in all, split by _allocate_category_quotas), on generated category sizes. Only
the counts are compared: the reference then draws the items with Python's `random`.
Usage: gen_query_quotas.py --reference REF --out DIR [--cases N] [--seed S]"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refenv_data as R  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=31)
    a = ap.parse_args()
    R.add_reference(a.reference)
    from src.eval.locomo import LoCoMoEvaluator

    rng = random.Random(a.seed)
    cases = []
    for _ in range(a.cases):
        k = rng.randint(1, 5)
        sizes = [rng.choice([1, 1, 2, 3, 5, 8, 13, 40, 90]) for _ in range(k)]
        ratio = rng.choice([0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.75, 0.9, 0.99])
        n = sum(sizes)
        target = max(1, min(n, int(math.ceil(n * ratio))))
        # The method does not use `self`.
        q = LoCoMoEvaluator._allocate_category_quotas(
            None, bucket_sizes={c + 1: s for c, s in enumerate(sizes)}, target_total=target)
        if target >= n or n <= 1:
            quotas = sizes  # the sampler keeps everything
        else:
            quotas = [min(sizes[c], q.get(c + 1, 0)) for c in range(k)]
        cases.append({"input": {"sizes": sizes, "ratio": ratio}, "expected": {"quotas": quotas}})
    R.write_fixture(a.out, "query_quotas", cases)


if __name__ == "__main__":
    main()
