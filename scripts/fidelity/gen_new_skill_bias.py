"""Differential fixture `new_skill_bias`: delta_max (config._compute_new_action_delta_max with
p_ref = 0.01) and the biased logits of PPOController._apply_new_action_bias, from the
reference's own code, for random p_min, logits, new-skill masks and decay positions. The decay
scale is the trainer's schedule (src/trainer.py, train(): `max(0, 1 - step / bias_steps)` while
the bias is active, `step` counting the PPO updates since the bank change, inactive from
`step >= bias_steps`); it is recorded with the case and checked against ours too. Computed in
float64 on float32-representable logits.

Usage: gen_new_skill_bias.py --reference MEMSKILL_CHECKOUT --out DIR
"""
import random
import types

import torch

from ppo_reference import args, f32, import_reference, write


def main():
    a = args(__doc__)
    ref = import_reference(a.reference)
    C = ref.controller.PPOController
    rng = random.Random(a.seed)
    cases = []
    for i in range(500):
        p_min = rng.choice([0.3, 0.3, 0.0, round(rng.uniform(0.01, 0.99), 4)])
        delta_max = ref.config._compute_new_action_delta_max(p_min, ref.config._NEW_ACTION_P_REF)
        bias_steps = rng.choice([25, 25, 50, 1, 0])
        step = rng.randint(0, bias_steps + 2)
        # the trainer: bias active while step < bias_steps (it is switched off when step reaches it)
        active = bias_steps > 0 and step < bias_steps
        scale = max(0.0, 1.0 - step / bias_steps) if active else 0.0
        n = rng.randint(1, 10)
        spread = rng.choice([0.3, 1.0, 3.0, 8.0])
        logits = [f32(rng.gauss(0, spread)) for _ in range(n)]
        mask = [rng.random() < 0.3 for _ in range(n)]
        if i % 17 == 0:
            mask = [False] * n
        if i % 23 == 0:
            mask = [True] * n
        ctrl = types.SimpleNamespace(
            new_action_p_min=p_min, new_action_delta_max=delta_max, new_action_bias_scale=scale
        )
        out = C._apply_new_action_bias(
            ctrl,
            torch.tensor(logits, dtype=torch.float64),
            torch.tensor([1.0 if m else 0.0 for m in mask], dtype=torch.float64),
        )
        cases.append(
            {
                "input": {
                    "p_min": p_min,
                    "bias_steps": bias_steps,
                    "step": step,
                    "logits": logits,
                    "new_mask": mask,
                },
                "expected": {
                    "delta_max": delta_max,
                    "scale": scale,
                    "biased_logits": [float(x) for x in out.tolist()],
                },
            }
        )
    write(a.out, "new_skill_bias", 1e-5, cases)


if __name__ == "__main__":
    main()
