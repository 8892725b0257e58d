"""Differential fixture `gae`: returns and advantages of a batch of terminal episodes
(PPOBuffer.compute_returns_and_advantages) and the advantages as BaseTrainer.update_controller
normalises them for the whole batch, all from the reference's own code. The normalised
advantages are read from the minibatch that update_controller hands to compute_ppo_loss
(a recording stand-in controller; one epoch, one minibatch = the whole batch; the reference's
shuffle is undone with the same numpy seed).

Usage: gen_gae.py --reference MEMSKILL_CHECKOUT --out DIR
"""
import random
import types

import numpy as np
import torch

from ppo_reference import args, f32, import_reference, write


class Recorder(torch.nn.Module):
    """Stands in for PPOController inside update_controller: records the minibatch."""

    def __init__(self, gamma, lam):
        super().__init__()
        self.gamma = gamma
        self.gae_lambda = lam
        self.w = torch.nn.Parameter(torch.zeros(1))
        self.seen = None

    def compute_ppo_loss(self, batch, returns, advantages):
        self.seen = (np.array(returns), np.array(advantages))
        return (self.w * 0.0).sum(), {}


def main():
    a = args(__doc__)
    ref = import_reference(a.reference)
    rng = random.Random(a.seed)
    cases = []
    for i in range(360):
        gamma = rng.choice([0.99, 0.99, 1.0, 0.9, round(rng.uniform(0, 1), 3)])
        lam = rng.choice([0.95, 0.95, 1.0, 0.0, round(rng.uniform(0, 1), 3)])
        n_eps = rng.randint(1, 4)
        eps = []
        for _ in range(n_eps):
            L = rng.randint(1, 6)
            scale = rng.choice([0.01, 0.1, 1.0])
            rewards = [f32(rng.gauss(0, 1) * scale) for _ in range(L)]
            values = [f32(rng.gauss(0, 0.5)) for _ in range(L)]
            eps.append({"rewards": rewards, "values": values})
        buf = ref.controller.PPOBuffer()
        for ep in eps:
            for r, v in zip(ep["rewards"], ep["values"]):
                buf.push(np.zeros(2, dtype=np.float32), np.zeros((2, 2), dtype=np.float32), [0, 1], 0.0, v, reward=r)
            buf.finish_episode(final_reward=0.0, redistribute=False)
        returns, adv = buf.compute_returns_and_advantages(gamma=gamma, gae_lambda=lam, last_value=0.0)
        rec = Recorder(gamma, lam)
        fake = types.SimpleNamespace(
            controller=rec,
            optimizer=torch.optim.SGD(rec.parameters(), lr=0.0),
            ppo_epochs=1,
            minibatch_size=0,
            max_grad_norm=0.5,
            target_kl=0.0,
            total_steps=0,
        )
        n = len(buf)
        np.random.seed(1000 + i)
        perm = np.random.RandomState(1000 + i).permutation(n)
        ref.trainer.BaseTrainer.update_controller(fake, buf)
        _, mb_adv = rec.seen
        norm = np.zeros(n, dtype=np.float64)
        norm[perm] = mb_adv
        cases.append(
            {
                "input": {"gamma": gamma, "lambda": lam, "episodes": eps},
                "expected": {
                    # float32, as they enter the PPO loss (torch.FloatTensor)
                    "returns": [f32(x) for x in returns],
                    "advantages": [f32(x) for x in adv],
                    "normalized": [f32(x) for x in norm],
                },
            }
        )
    write(a.out, "gae", 1e-5, cases)


if __name__ == "__main__":
    main()
