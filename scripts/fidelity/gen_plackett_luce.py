"""Differential fixture `plackett_luce`: the ordered top-K log-probability
(PPOController._compute_topk_log_prob), the single-step entropy the PPO loss uses
(torch.distributions.Categorical(logits).entropy(), as in evaluate_actions) and the top-K
diagnostics (_compute_topk_stats), from the reference's own code, on random logits and ordered
actions, including near-degenerate logits where the reference's 1e-8 clamps bind. Computed in
float64 so the comparison is of the formula, not of float32 rounding.

Usage: gen_plackett_luce.py --reference MEMSKILL_CHECKOUT --out DIR
"""
import random

import torch

from ppo_reference import args, import_reference, write


def main():
    a = args(__doc__)
    ref = import_reference(a.reference)
    C = ref.controller.PPOController
    rng = random.Random(a.seed)
    cases = []
    for i in range(500):
        n = rng.randint(2, 12)
        kind = i % 5
        if kind == 0:  # small logits (a freshly initialised policy)
            logits = [rng.gauss(0, 0.3) for _ in range(n)]
        elif kind == 1:
            logits = [rng.gauss(0, 2.0) for _ in range(n)]
        elif kind == 2:  # near-degenerate: one or two dominant skills
            logits = [rng.gauss(0, 1.0) for _ in range(n)]
            for _ in range(rng.randint(1, 2)):
                logits[rng.randrange(n)] += rng.uniform(15, 40)
        elif kind == 3:  # wide spread: tiny probabilities (< 1e-8) get chosen
            logits = [rng.gauss(0, 12.0) for _ in range(n)]
        else:  # ties
            logits = [round(rng.choice([-1.0, 0.0, 1.0]) * rng.choice([1, 5]), 1) for _ in range(n)]
        logits = [round(x, 6) for x in logits]
        k = rng.randint(1, min(5, n))
        if kind in (2, 3) and rng.random() < 0.5:
            order = sorted(range(n), key=lambda j: -logits[j])  # the likely picks first
            actions = order[:k]
        else:
            actions = rng.sample(range(n), k)
        lt = torch.tensor([logits], dtype=torch.float64)
        at = torch.tensor([actions], dtype=torch.long)
        if k == 1:
            # the reference's K = 1 branch (forward / evaluate_actions): Categorical.log_prob
            lp = torch.distributions.Categorical(logits=lt).log_prob(at[:, 0])
        else:
            lp = C._compute_topk_log_prob(None, lt, at)
        ent = torch.distributions.Categorical(logits=lt).entropy()
        te, tm, tb = C._compute_topk_stats(None, lt, at)
        cases.append(
            {
                "input": {"logits": logits, "actions": actions},
                "expected": {
                    "log_prob": float(lp[0]),
                    "entropy": float(ent[0]),
                    "topk_entropy": float(te[0]),
                    "topk_mass": float(tm[0]),
                    "topk_bin_entropy": float(tb[0]),
                },
            }
        )
    # 1e-7: the reference's cumulative remainder 1 - p_1 - ... cancels when the first picks
    # hold almost all the mass, so the summation order of the softmax shows at ~1e-8 in float64.
    write(a.out, "plackett_luce", 1e-7, cases)


if __name__ == "__main__":
    main()
