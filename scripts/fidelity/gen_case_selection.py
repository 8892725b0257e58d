"""Differential fixture: choosing the hard cases shown to the designer.

The reference's `Designer.prepare_analysis_cases` (dedupe by question, cluster, importance-ranked
picks per cluster, fill with the most important rest) runs on random failure cases; its KMeans is
replaced by one that returns seeded random labels, which are recorded in the fixture so ours
selects given the same labels. Expected: the selected query ids, in order.
Usage: gen_case_selection.py --reference CHECKOUT --out DIR
"""
import argparse
import json
import os
import random
import types

import numpy as np
import sklearn.cluster

from _designer_common import load_reference_designer


class _Encoder:
    def encode(self, texts):
        return np.zeros((len(texts), 2), dtype=np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=320)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    d = load_reference_designer(a.reference)
    rng = random.Random(a.seed)
    captured = {}

    class FakeKMeans:
        def __init__(self, n_clusters, **_kw):
            self.k = n_clusters

        def fit_predict(self, emb):
            labels = [rng.randrange(self.k) for _ in range(len(emb))]
            captured["labels"] = labels
            return np.array(labels)

    sklearn.cluster.KMeans = FakeKMeans
    cases = []
    for _ in range(a.cases):
        clusters = rng.randint(1, 6)
        per = rng.randint(1, 4)
        n = rng.choice([rng.randint(1, 6), rng.randint(5, 40)])
        n_questions = max(1, n - rng.randint(0, n // 3))
        items = []
        for i in range(n):
            qn = rng.randrange(n_questions)
            text = f"when did p{qn} go?"
            # Same question spelt differently: the reference strips and lower-cases only.
            variant = rng.random()
            if variant < 0.2:
                text = "  " + text.upper() + " "
            elif variant < 0.25:
                text = text.replace(" ", "  ", 1)
            # [query id, question, score, fail count]
            items.append(
                [
                    f"c{i}",
                    text,
                    rng.choice([0.0, 0.0, 0.1, 0.25, 0.4, round(rng.random() * 0.5, 3)]),
                    rng.choice([1, 1, 1, 2, 2, 3, 5]),
                ]
            )
        args = types.SimpleNamespace(model="m", reward_metric="f1")
        des = d.Designer(args, num_clusters=clusters, samples_per_cluster=per, encoder=_Encoder())
        pool = [
            d.DesignerCase(
                query_id=it[0],
                question=it[1],
                ground_truth="g",
                is_correct=False,
                f1_score=it[2],
                fail_count=it[3],
            )
            for it in items
        ]
        captured.clear()
        chosen = des.prepare_analysis_cases(pool)
        cases.append(
            {
                "input": {
                    "clusters": clusters,
                    "per_cluster": per,
                    "cases": items,
                    "labels": captured.get("labels"),
                },
                "expected": [c.query_id for c in chosen],
            }
        )
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "case_selection.json")
    with open(path, "w") as f:
        json.dump(
            {"component": "case_selection", "reference": "cda41f3", "tolerance": 0.0, "cases": cases},
            f,
            separators=(",", ":"),
        )
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
