"""Differential fixture `ppo_update`: ONE call of the reference's BaseTrainer.update_controller
(GAE, batch advantage normalisation, PPO epochs, compute_ppo_loss with the new-action bias
re-applied from the current logits, Adam, clip_grad_norm_, KL early stop) on a randomly
initialised reference PPOController and a random batch. The case records the initial weights
(state_dict), the batch and the hyper-parameters; expected: the updated weights, the averaged
loss statistics and the pre-clip gradient norms. One minibatch = the whole batch
(minibatch_size 0), so the reference's shuffle only reorders the rows of one mean; 1-3 epochs
(several Adam steps; the early stop may end them; lr 1e-4 when more than one).

Usage: gen_ppo_update.py --reference MEMSKILL_CHECKOUT --out DIR
Cases: $FIDELITY_PPO_CASES (default 26, the committed fixture's size: each case carries whole
weight sets, ~9 KB); scripts/fidelity/diff.sh runs 300.
"""
import os
import random
import types

import numpy as np
import torch

from ppo_reference import args, f32, import_reference, write


def main():
    a = args(__doc__)
    ref = import_reference(a.reference)
    rng = random.Random(a.seed)
    cases = []
    for i in range(int(os.environ.get("FIDELITY_PPO_CASES", "26"))):
        d = rng.choice([3, 4])
        h = rng.choice([5, 6])
        k = rng.choice([1, 2, 3])
        hp = dict(
            # the reference trains at 1e-4; at 1e-2 the up-to-lr Adam moves of zero-gradient
            # weights (below) shift other rows' probabilities past the tolerance (1 of 300)
            lr=rng.choice([1e-4, 1e-3, 1e-3]),
            gamma=rng.choice([0.99, 0.9]),
            gae_lambda=rng.choice([0.95, 0.8]),
            clip=rng.choice([0.2, 0.1]),
            value_coef=rng.choice([0.5, 1.0]),
            entropy_coef=rng.choice([0.01, 0.1]),
            max_grad_norm=rng.choice([0.5, 0.05, 10.0]),
            ppo_epochs=rng.choice([1, 2, 3]),
            target_kl=rng.choice([0.02, 0.0, 0.001, 1.0]),
        )
        if hp["ppo_epochs"] > 1:
            # With a larger lr, the arbitrary Adam moves of the noise-gradient weights (see
            # below) in the first epoch shift later epochs' activations in each implementation
            # differently, by more than the tolerance.
            hp["lr"] = 1e-4
        use_bias = i % 3 != 0
        p_min = rng.choice([0.3, 0.6])
        delta_max = ref.config._compute_new_action_delta_max(p_min, ref.config._NEW_ACTION_P_REF)
        scale = rng.choice([1.0, 0.52, 0.04]) if use_bias else 0.0
        torch.manual_seed(1000 + i)
        ctrl = ref.controller.PPOController(
            state_dim=2 * d,
            op_dim=d,
            hidden_dim=h,
            device="cpu",
            gamma=hp["gamma"],
            gae_lambda=hp["gae_lambda"],
            clip_epsilon=hp["clip"],
            entropy_coef=hp["entropy_coef"],
            value_coef=hp["value_coef"],
            new_action_p_min=p_min if use_bias else 0.0,
            new_action_delta_max=delta_max if use_bias else 0.0,
            action_top_k=k,
        )
        ctrl.set_new_action_bias_scale(scale)
        init = {name: [f32(x) for x in t.detach().reshape(-1).tolist()] for name, t in ctrl.state_dict().items()}
        shapes = {name: list(t.shape) for name, t in ctrl.state_dict().items()}
        buf = ref.controller.PPOBuffer()
        episodes = []
        for _ in range(rng.randint(1, 3)):
            ep = []
            for _ in range(rng.randint(1, 3)):
                n_ops = rng.randint(max(k, 2), 5)
                state = [f32(rng.gauss(0, 1)) for _ in range(2 * d)]
                ops = [[f32(rng.gauss(0, 1)) for _ in range(d)] for _ in range(n_ops)]
                mask = [bool(use_bias and rng.random() < 0.4) for _ in range(n_ops)]
                actions = rng.sample(range(n_ops), k)
                with torch.no_grad():
                    st = torch.tensor(state, dtype=torch.float32)
                    ot = torch.tensor(ops, dtype=torch.float32)
                    sh = ctrl.encode_state(st.unsqueeze(0))
                    oh = ctrl.encode_ops(ot.unsqueeze(0))
                    logits = ctrl.get_action_logits(sh, oh)[0]
                    value = float(ctrl.get_value(sh)[0])
                    mt = torch.tensor([1.0 if m else 0.0 for m in mask])
                    if any(mask):
                        logits = ctrl._apply_new_action_bias(logits, mt)
                    lp = float(ctrl._compute_topk_log_prob(logits, torch.tensor(actions)))
                old_lp = f32(lp + rng.gauss(0, 0.05))
                old_v = f32(value + rng.gauss(0, 0.1))
                reward = f32(rng.gauss(0, 0.5))
                buf.push(
                    np.array(state, dtype=np.float32),
                    np.array(ops, dtype=np.float32),
                    actions if k > 1 else actions[0],
                    old_lp,
                    old_v,
                    reward=reward,
                    new_op_mask=np.array([1.0 if m else 0.0 for m in mask], dtype=np.float32) if any(mask) else None,
                )
                ep.append(
                    {
                        "state": state,
                        "ops": ops,
                        "new_mask": mask,
                        "actions": actions,
                        "old_log_prob": old_lp,
                        "old_value": old_v,
                        "reward": reward,
                    }
                )
            buf.finish_episode(final_reward=0.0, redistribute=False)
            episodes.append(ep)
        norms = []
        orig = torch.nn.utils.clip_grad_norm_

        def recording(params, max_norm, *args, **kw):
            n = orig(params, max_norm, *args, **kw)
            norms.append(float(n))
            return n

        fake = types.SimpleNamespace(
            controller=ctrl,
            optimizer=torch.optim.Adam(ctrl.parameters(), lr=hp["lr"]),
            ppo_epochs=hp["ppo_epochs"],
            minibatch_size=0,
            max_grad_norm=hp["max_grad_norm"],
            target_kl=hp["target_kl"],
            total_steps=0,
        )
        # Largest |gradient| each weight received over the update's steps: a weight whose
        # gradient is float noise (mathematically 0: the actor's output bias, and the actor's
        # first-layer state half / bias for units active on every skill of a row, since the
        # softmax is shift-invariant) is moved by Adam's normalisation in an arbitrary direction
        # in any implementation; the checker compares those through the updated policy instead.
        gmax = {name: torch.zeros_like(t) for name, t in ctrl.named_parameters()}
        step = fake.optimizer.step

        def recording_step(*args, **kw):
            for name, t in ctrl.named_parameters():
                if t.grad is not None:
                    gmax[name] = torch.maximum(gmax[name], t.grad.detach().abs())
            return step(*args, **kw)

        fake.optimizer.step = recording_step
        np.random.seed(2000 + i)
        torch.nn.utils.clip_grad_norm_ = recording
        try:
            info = ref.trainer.BaseTrainer.update_controller(fake, buf)
        finally:
            torch.nn.utils.clip_grad_norm_ = orig
        final = {name: [f32(x) for x in t.detach().reshape(-1).tolist()] for name, t in ctrl.state_dict().items()}
        noise = []
        offset = 0
        for name, t in ctrl.state_dict().items():
            g = gmax[name].reshape(-1).tolist()
            # Below 1e-6, exactly 0 included: torch's summation order can cancel a mathematically
            # zero gradient to exactly 0.0 where ours leaves float noise (or the reverse), and
            # Adam turns either into a step of up to lr (seen at 300 cases).
            noise.extend(offset + j for j, x in enumerate(g) if x < 1e-6)
            offset += t.numel()
        # the updated policy on every row of the batch: unbiased probabilities and the value
        probs, values = [], []
        with torch.no_grad():
            for ep in episodes:
                for tr in ep:
                    sh = ctrl.encode_state(torch.tensor([tr["state"]], dtype=torch.float32))
                    oh = ctrl.encode_ops(torch.tensor([tr["ops"]], dtype=torch.float32))
                    probs.append([f32(x) for x in torch.softmax(ctrl.get_action_logits(sh, oh)[0], -1).tolist()])
                    values.append(f32(ctrl.get_value(sh)[0]))
        # topk_bin_entropy is NaN in float32 when the chosen skills hold all the mass (the
        # reference clamps the mass to 1 - 1e-8, which rounds to 1): recorded as null.
        stats = {
            key: (float(info[key]) if np.isfinite(info[key]) else None)
            for key in (
                "policy_loss",
                "value_loss",
                "entropy",
                "approx_kl",
                "clip_frac",
                "topk_entropy",
                "topk_mass",
                "topk_bin_entropy",
            )
        }
        stats["n_updates"] = int(info["n_updates"])
        cases.append(
            {
                "input": {
                    "emb_dim": d,
                    "hidden": h,
                    "hyper": hp,
                    "bias": {"p_min": p_min, "scale": scale} if use_bias else None,
                    "shapes": shapes,
                    "weights": init,
                    "episodes": episodes,
                },
                "expected": {
                    "weights": final,
                    "noise_weights": noise,
                    "probs": probs,
                    "values": values,
                    "stats": stats,
                    "grad_norms": norms,
                },
            }
        )
    write(a.out, "ppo_update", 1e-5, cases)


if __name__ == "__main__":
    main()
