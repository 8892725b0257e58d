"""Differential fixture: the snapshot / early-stopping rules of the outer loop.

Random sequences of stage rewards run through the reference's `EvolutionSnapshotManager` in the
order of `src/trainer.py`'s outer loop (add_snapshot -> should_stop_evolving -> (rollback,
designer) -> increment_evolve_count); expected per stage: whether it became the best, the
stages without improvement, the best reward, the number of failed attempts kept, and whether
training stopped there.
Usage: gen_snapshot_rules.py --reference CHECKOUT --out DIR
"""
import argparse
import json
import os
import random

from _designer_common import load_reference_designer


class _Bank:
    def to_dict(self):
        return {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    d = load_reference_designer(a.reference)
    rng = random.Random(a.seed)
    cases = []
    for _ in range(a.cases):
        patience = rng.randint(1, 5)
        max_evolves = rng.randint(1, 8)
        n = rng.randint(1, 12)
        grid = rng.choice([None, 4, 10])
        rewards = [
            round(rng.random(), 3) if grid is None else rng.randint(0, grid) / grid for _ in range(n)
        ]
        m = d.EvolutionSnapshotManager()
        stages = []
        for r in rewards:
            best = m.add_snapshot(_Bank(), r)
            stop = m.should_stop_evolving(max_evolves, patience)
            stages.append(
                [
                    best,
                    m.consecutive_no_improvement,
                    m.get_best_snapshot().avg_reward,
                    len(m.failed_evolution_attempts),
                    stop,
                ]
            )
            if stop:
                break
            m.set_pending_evolution_result({"action": "no_change"})
            m.increment_evolve_count()
        cases.append(
            {
                "input": {"patience": patience, "max_evolves": max_evolves, "rewards": rewards},
                "expected": stages,
            }
        )
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "snapshot_rules.json")
    with open(path, "w") as f:
        json.dump(
            {"component": "snapshot_rules", "reference": "cda41f3", "tolerance": 0.0, "cases": cases},
            f,
            separators=(",", ":"),
        )
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
