"""Differential fixture `reference_checkpoint`: checkpoints saved the way the reference's trainer
saves them (src/trainer.py save_checkpoint: `torch.save` of a dict holding
controller_state_dict, optimizer_state_dict, operation_bank.to_dict(), the new operation names,
total_steps, the new-action bias state, RNG states, ...), built with the reference's own
PPOController, OperationBank and Operation classes, and the logits its controller computes on
50 random states. `memskill fidelity check` imports each checkpoint (`memskill
import-reference`) and compares the logits and the skill texts.

The operation texts are memskill's own short placeholders (never the reference's skill texts):
the reference's seed operations are replaced through its own OperationBank.load_from_templates
and one operation is added through add_operation (so it is new). Small dimensions keep the
fixture small; the embedding size 64 matches configs/synthetic.toml's hashing encoder.

Usage: gen_reference_checkpoint.py --reference MEMSKILL_CHECKOUT --out DIR
"""
import io
import random
import types

import numpy as np
import torch

from _encoder_common import load_reference_module
from ppo_reference import args, write

PLACEHOLDER_OPS = {
    "insert": ("insert", "Placeholder skill one: keeps facts the chunk adds.",
               "Placeholder card one. Write each new fact of the chunk as one memory."),
    "update": ("update", "Placeholder skill two: revises a stored fact.",
               "Placeholder card two. Rewrite the retrieved memory the chunk corrects."),
    "delete": ("delete", "Placeholder skill three: drops a wrong fact.",
               "Placeholder card three. Remove a memory the chunk shows to be wrong."),
    "noop": ("noop", "Placeholder skill four: changes nothing.",
             "Placeholder card four. Leave the memory as it is."),
}
NEW_OP = ("track_dates", "insert", "Placeholder skill five: keeps dates and times.",
          "Placeholder card five. Store each date the chunk mentions with its event.")


class FakeEncoder:
    """Stands in for the reference's OpEncoder: seeded vectors per text."""

    def __init__(self, dim):
        self.dim = dim

    def encode(self, texts):
        out = []
        for t in texts:
            r = np.random.default_rng(sum(t.encode("utf-8")) * 7919 + len(t))
            out.append(r.standard_normal(self.dim).astype(np.float32))
        return np.stack(out)


def build_case(ref, ob, seed, emb_dim, hidden, with_new, train_step, real_ops=False):
    """One checkpoint and its expected values. `real_ops`: keep the reference's own seed
    operations (its OperationBank built from get_initial_operations, NOOP included) instead of
    the placeholders; the texts then come from the checkout and must not be written into this
    repository (reference_checkpoint_real_ops.py writes such a checkpoint to a temp folder)."""
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)
    ctrl = ref.controller.PPOController(state_dim=2 * emb_dim, op_dim=emb_dim,
                                        hidden_dim=hidden, device="cpu")
    opt = torch.optim.Adam(ctrl.parameters(), lr=1e-3)
    bank = ob.OperationBank(encoder=None)
    templates = {
        k: {"name": n, "description": d, "instruction_template": t, "update_type": n,
            "meta_info": {"usage_count": 3, "avg_reward": 0.25, "recent_rewards": [0.5, 0.0],
                          "recent_usage_ema": 0.1, "created_at": "x", "last_modified": "x"}}
        for k, (n, d, t) in PLACEHOLDER_OPS.items()
    }
    if not real_ops:
        bank.load_from_templates(templates)
    bank.set_encoder(FakeEncoder(emb_dim))
    if with_new:
        name, kind, d, t = NEW_OP
        bank.add_operation(ob.Operation(name=name, description=d, instruction_template=t,
                                        update_type=kind))
    ops = bank.get_candidate_operations()
    op_embs = torch.tensor(np.stack([o.embedding for o in ops]), dtype=torch.float32)
    if train_step:
        # one optimiser step so the optimiser state holds tensors, as after training
        s = torch.randn(4, 2 * emb_dim)
        loss = ctrl.get_action_logits(ctrl.encode_state(s),
                                      ctrl.encode_ops(op_embs.expand(4, -1, -1))).sum()
        loss = loss + ctrl.get_value(ctrl.encode_state(s)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    checkpoint = {
        "epoch": 3,
        "completed_outer_epoch": 2,
        "controller_state_dict": ctrl.state_dict(),
        "optimizer_state_dict": opt.state_dict(),
        "operation_bank": bank.to_dict(),
        "operation_bank_new_operation_names": sorted(bank.new_operation_names),
        "total_steps": 40 if with_new else 7,
        "new_action_bias_active": with_new,
        "new_action_bias_step": 5 if with_new else 0,
        "wandb_step_cursor": -1,
        "args": {"dataset": "locomo", "action_top_k": 3, "hidden_dim": hidden, "lr": 1e-3},
        "config": vars(types.SimpleNamespace(state_dim=2 * emb_dim, hidden_dim=hidden,
                                             skip_noop=False, encoder=None)),
        "rng_state": {
            "python_random_state": random.getstate(),
            "numpy_random_state": np.random.get_state(),
            "torch_rng_state": torch.get_rng_state(),
        },
        "snapshot_manager": None,
        "designer_state": {},
        # numpy scalars, as np.mean gives them in a real run
        "stage_rewards": [np.float64(0.125), 0.5],
        "training_logs": [{"epoch": 0, "reward": 0.25}],
    }
    buf = io.BytesIO()
    torch.save(checkpoint, buf)
    g = torch.Generator().manual_seed(seed + 1)
    # three decimals: the same float32 values on both sides, a smaller fixture
    states = torch.round(torch.randn(50, 2 * emb_dim, generator=g) * 500) / 1000
    rows = [[round(float(x), 3) for x in s] for s in states]
    states = torch.tensor(rows, dtype=torch.float32)
    with torch.no_grad():
        logits = ctrl.get_action_logits(ctrl.encode_state(states),
                                        ctrl.encode_ops(op_embs.expand(50, -1, -1)))
    new = set(bank.new_operation_names)
    return {
        "input": {"checkpoint_hex": buf.getvalue().hex(),
                  "states": rows},
        "expected": {
            "emb_dim": emb_dim,
            "hidden": hidden,
            "total_steps": checkpoint["total_steps"],
            "bias_active": with_new,
            "bias_step": checkpoint["new_action_bias_step"],
            "stage_rewards": [float(x) for x in checkpoint["stage_rewards"]],
            "operations": [
                {"name": o.name, "description": o.description,
                 "instructions": o.instruction_template, "update_type": o.update_type,
                 "new": o.name in new}
                for o in ops
            ],
            "logits": [[float(x) for x in row] for row in logits],
        },
    }


def main():
    a = args(__doc__)
    # the two files by path: the package's __init__ pulls in modules this check does not need
    ctrl = load_reference_module(a.reference, "src/controller.py", "ref_controller")
    ob = load_reference_module(a.reference, "src/operation_bank.py", "ref_operation_bank")
    ref = types.SimpleNamespace(controller=ctrl)

    cases = [
        build_case(ref, ob, a.seed, emb_dim=64, hidden=8, with_new=True, train_step=True),
        build_case(ref, ob, a.seed + 7, emb_dim=16, hidden=12, with_new=False, train_step=False),
    ]
    write(a.out, "reference_checkpoint", 1e-5, cases)


if __name__ == "__main__":
    main()
