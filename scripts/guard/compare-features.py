#!/usr/bin/env python3
"""Compare the classifier's features across authors (issue 40; docs/safety.md).

Joins, line by line, `guard-model eval --json NGRAM.jsonl` (the n-gram classifier's
leave-one-author-out P(unsafe), field `p`) and the `guard_features` example's output
(`p_emb`, sentence embeddings, same folds and order), and prints for each scorer (n-grams,
embeddings, their mean), classifier alone, no rules:
  - the unsafe catch rate where the ordinary false-rejection rate of the labelled sets is
    1%, 2% and 3% (threshold-free: each scorer at its own threshold),
  - at the shipped threshold 0.7: pooled catch and false-rejection rates, and the domain
    (calibration) sets' false-rejection rate.

usage: compare-features.py NGRAM.jsonl EMB.jsonl
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def rate(a, b):
    return f"{a}/{b} ({100.0 * a / b:.1f}%)" if b else "-"


def at_fr(unsafe, ordinary, fr):
    """Catch rate at the threshold whose ordinary false-rejection rate is <= fr."""
    ordinary = sorted(ordinary, reverse=True)
    k = int(fr * len(ordinary))
    tau = ordinary[k] if k < len(ordinary) else 0.0
    caught = sum(p > tau for p in unsafe)
    return caught, len(unsafe)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ngram, emb = load(sys.argv[1]), load(sys.argv[2])
    if len(ngram) != len(emb):
        sys.exit(f"{sys.argv[1]} has {len(ngram)} rows, {sys.argv[2]} {len(emb)}: not the same folds")
    for i, (a, b) in enumerate(zip(ngram, emb)):
        if a["set"] != b["set"] or a["unsafe"] != b["unsafe"]:
            sys.exit(f"row {i + 1}: {a['set']}/{a['unsafe']} vs {b['set']}/{b['unsafe']}: not the same order")
    scorers = {
        "n-grams": [r["p"] for r in ngram],
        "MiniLM": [r["p_emb"] for r in emb],
        "mean": [(r["p"] + s["p_emb"]) / 2 for r, s in zip(ngram, emb)],
    }
    domain = [r["set"].startswith("domain") for r in ngram]
    labels = [r["unsafe"] for r in ngram]
    cats = sorted({r["category"] for r in ngram if r["category"]})
    print(f"{len(ngram)} left-out texts, classifier alone (no rules)")
    for name, ps in scorers.items():
        uns = [p for p, u, d in zip(ps, labels, domain) if u and not d]
        ords = [p for p, u, d in zip(ps, labels, domain) if not u and not d]
        dom = [p for p, d in zip(ps, domain) if d]
        parts = [f"at {int(fr * 100)}% ordinary: {rate(*at_fr(uns, ords, fr))}" for fr in (0.01, 0.02, 0.03)]
        print(f"{name:>8}: unsafe caught {'; '.join(parts)}")
        print(
            f"{'':>8}  at 0.7: unsafe {rate(sum(p >= 0.7 for p in uns), len(uns))}, "
            f"ordinary {rate(sum(p >= 0.7 for p in ords), len(ords))}, "
            f"domain ordinary {rate(sum(p >= 0.7 for p in dom), len(dom))}"
        )
        for c in cats:
            cu = [p for p, u, d, r in zip(ps, labels, domain, ngram) if u and not d and r["category"] == c]
            co = [p for p, u, d, r in zip(ps, labels, domain, ngram) if not u and not d and r["category"] == c]
            print(f"{'':>10}{c:>15}: at 2% ordinary: {rate(*at_fr(cu, co, 0.02))}")


if __name__ == "__main__":
    main()
