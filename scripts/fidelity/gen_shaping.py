"""Differential fixture `shaping`: process rewards of spans (from the chosen skills' action types
and the executor's parsed results) plus the terminal-reward redistribution of one episode,
computed by the reference's own BaseTrainer._build_process_reward_meta /
_compute_process_reward_from_meta and PPOBuffer.finish_episode.

Usage: gen_shaping.py --reference MEMSKILL_CHECKOUT --out DIR
"""
import random
import types

import numpy as np

from ppo_reference import args, import_reference, write

KINDS = ["insert", "update", "delete", "noop"]


def main():
    a = args(__doc__)
    ref = import_reference(a.reference)
    rng = random.Random(a.seed)
    Trainer = ref.trainer.BaseTrainer
    from src.executor import ExecutionResult
    cases = []
    for i in range(320):
        if i % 10 < 7:
            cfg = dict(quota=0.10, noop_factor=0.2, fail_penalty=0.05, terminal_share=0.6, decay=0.9)
        else:
            cfg = dict(
                quota=round(rng.uniform(0.0, 0.5), 3),
                noop_factor=round(rng.uniform(0.0, 1.0), 3),
                fail_penalty=round(rng.uniform(0.0, 0.3), 3),
                terminal_share=round(rng.choice([0.0, 1.0, rng.uniform(0, 1)]), 3),
                decay=round(rng.uniform(0.5, 1.0), 3),
            )
        fake = types.SimpleNamespace(
            config=types.SimpleNamespace(
                process_budget=cfg["quota"],
                failure_budget=cfg["fail_penalty"],
                noop_match_scale=cfg["noop_factor"],
                shaping_scale=1.0,
            )
        )
        n = rng.randint(1, 8)
        reward = round(rng.choice([0.0, 1.0, rng.uniform(0, 1), rng.uniform(-1, 2)]), 4)
        spans = []
        process = []
        for _ in range(n):
            chosen = [rng.choice(KINDS) for _ in range(rng.randint(1, 3))]
            u = rng.random()
            if u < 0.08:
                # executor call failed: the reference records one failed NOOP result
                results = [("noop", False)]
                call_failed = True
            elif u < 0.18:
                # reply parsed to nothing usable: only failed results
                results = [("noop", False)] * rng.randint(1, 2)
                call_failed = False
            else:
                results = [
                    (rng.choice(KINDS), rng.random() < 0.85) for _ in range(rng.randint(1, 4))
                ]
                call_failed = False
            ops = [types.SimpleNamespace(update_type=k) for k in chosen]
            res = [ExecutionResult(action_type=k.upper(), success=s) for k, s in results]
            meta = Trainer._build_process_reward_meta(fake, ops, res)
            process.append(Trainer._compute_process_reward_from_meta(fake, meta, n))
            spans.append(
                {"chosen": chosen, "results": [[k, s] for k, s in results], "call_failed": call_failed}
            )
        buf = ref.controller.PPOBuffer()
        for p in process:
            buf.push(np.zeros(1, dtype=np.float32), np.zeros((1, 1), dtype=np.float32), 0, 0.0, 0.0, reward=p)
        buf.finish_episode(
            final_reward=reward,
            redistribute=True,
            redistribution_decay=cfg["decay"],
            final_reward_last_ratio=cfg["terminal_share"],
        )
        cases.append(
            {
                "input": {"config": cfg, "task_reward": reward, "spans": spans},
                "expected": {"process": process, "rewards": [float(r) for r in buf.rewards]},
            }
        )
    write(a.out, "shaping", 1e-6, cases)


if __name__ == "__main__":
    main()
