"""Differential fixture: the hard-case (failure) pool.

Each case is a random sequence of scored queries fed to the reference's rolling failure pool
(`CaseCollector.add_case`: threshold, repeat failures refreshing fail counts, window pruning in
global inner epochs, size-cap eviction); the expected output is the pool's contents in order.
Usage: gen_hard_case_pool.py --reference CHECKOUT --out DIR
"""
import argparse
import json
import os
import random

from _designer_common import load_reference_designer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=320)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    d = load_reference_designer(a.reference)
    rng = random.Random(a.seed)
    cases = []
    for _ in range(a.cases):
        window = rng.choice([0, 1, 2, 3, 5, 8])
        max_size = rng.choice([0, 2, 3, 5, 8, 12])
        threshold = rng.choice([0.5, 0.5, 1.0])
        n_samples = rng.randint(1, 3)
        n_queries = rng.randint(2, 8)
        n_ops = rng.randint(5, 30)
        step = 0
        ops = []
        for _ in range(n_ops):
            r = rng.random()
            if r < 0.3:
                step += 1
            elif r < 0.35:
                step += rng.randint(2, 6)
            elif r < 0.4 and step > 0:
                step -= 1  # an episode of an earlier update finishing late
            score = rng.choice([0.0, 0.0, 0.2, 0.25, 0.5, 0.7, 1.0, round(rng.random(), 3)])
            ops.append([rng.randrange(n_samples), rng.randrange(n_queries), step, score])
        pool = d.CaseCollector(failure_window_epochs=window, failure_pool_size=max_size)
        for s, q, ep, score in ops:
            correct = (score == 1.0) if threshold == 1.0 else (score >= threshold)
            pool.add_case(
                d.DesignerCase(
                    query_id=f"s{s}_q{q}",
                    question=f"question {q} of sample {s}",
                    ground_truth="gold",
                    prediction=f"prediction at {ep}",
                    is_correct=correct,
                    f1_score=score,
                    llm_judge_score=score,
                    conversation_id=f"s{s}",
                    epoch=ep,
                )
            )
        expected = [[c.query_id, c.fail_count, c.epoch, c.f1_score] for c in pool.get_all_cases()]
        cases.append(
            {
                "input": {"window": window, "max_size": max_size, "threshold": threshold, "ops": ops},
                "expected": expected,
            }
        )
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "hard_case_pool.json")
    with open(path, "w") as f:
        json.dump(
            {"component": "hard_case_pool", "reference": "cda41f3", "tolerance": 0.0, "cases": cases},
            f,
            separators=(",", ":"),
        )
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
