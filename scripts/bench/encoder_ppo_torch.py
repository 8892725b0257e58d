#!/usr/bin/env python3
"""PyTorch twin of `cargo bench -p memskill-controller`.

Runs the same two workloads on CPU:
  1. all-MiniLM-L6-v2 (sentence-transformers, loaded from the memskill asset cache) on the first
     512 LoCoMo turns (same selection rule as the Rust bench), batch 32 and batch 1 (128 texts);
  2. one PPO update of the same actor-critic (state_net/skill_net MLPs, hidden 256, actor over
     [h_state; h_skill], critic), 64 transitions, 30 skills, K=3, 4 epochs, minibatch 32,
     Plackett-Luce log-prob, clipped surrogate, 0.5*MSE, entropy 0.01, clip_grad_norm_ 0.5, Adam.

Prints human-readable lines and writes JSON (keys match the Rust bench) to --json.
Usage: python3 scripts/bench/encoder_ppo_torch.py [--json out.json] [--threads N]
"""
import argparse
import json
import os
import time


def cache_dir():
    c = os.environ.get("MEMSKILL_CACHE")
    if not c:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        c = os.path.join(base, "memskill")
    return os.path.join(c, "assets")


def texts(n=512):
    path = os.environ.get("LOCOMO_JSON") or os.path.join(
        os.environ.get("MEMSKILL_CACHE")
        or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memskill"),
        "data", "locomo", "locomo10.json")
    try:
        with open(path) as f:
            data = json.load(f)
        out = []
        for sample in data:
            conv = sample.get("conversation", {})
            k = 1
            while isinstance(conv.get(f"session_{k}"), list):
                for t in conv[f"session_{k}"]:
                    if isinstance(t.get("text"), str):
                        out.append(t["text"])
                k += 1
        if len(out) >= n:
            return out[:n], "locomo10.json"
    except (OSError, ValueError):
        pass
    return [
        f"Sentence number {i} talks about topic {i % 17} and mentions item {i * 7 % 31} with some extra words."
        for i in range(n)
    ], "synthetic"


def make_encoder():
    """Loads MiniLM as sentence-transformers does and returns (run(batch) -> texts/s, texts)."""
    from sentence_transformers import SentenceTransformer, models

    d = os.path.join(cache_dir(), "all-MiniLM-L6-v2")
    word = models.Transformer(d, max_seq_length=256)
    pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(modules=[word, pool, models.Normalize()], device="cpu")
    ts, src = texts()
    a, b = model.encode(["A man is eating food.", "A man is eating a piece of bread."])
    print(f"sentence-transformers cosine check: {float((a * b).sum()):.4f}")
    model.encode(ts[:32], batch_size=32)

    def run(bs):
        sub = ts if bs == 32 else ts[:128]
        t = time.perf_counter()
        model.encode(sub, batch_size=bs)
        return len(sub) / (time.perf_counter() - t)

    return run, src


def bench_encoder(res):
    run, src = make_encoder()
    for bs in (32, 1):
        n = 512 if bs == 32 else 128
        tps = run(bs)
        print(f"pytorch encoder batch {bs:>2}: {n} texts ({src}) = {tps:.1f} texts/s")
        res[f"encoder_b{bs}_texts_per_s"] = tps


def make_ppo():
    """Builds the PPO twin and returns run() -> milliseconds of one update."""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    d, h, n_sk, k = 384, 256, 30, 3

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.state_net = nn.Sequential(nn.Linear(2 * d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
            self.skill_net = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
            self.actor = nn.Sequential(nn.Linear(2 * h, h), nn.ReLU(), nn.Linear(h, 1))
            self.critic = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1))

        def forward(self, s, e):  # s [B,2d], e [B,N,d]
            hs = self.state_net(s)
            hk = self.skill_net(e)
            x = torch.cat([hs.unsqueeze(1).expand(-1, hk.shape[1], -1), hk], dim=-1)
            return self.actor(x).squeeze(-1), self.critic(hs).squeeze(-1)

    def pl_log_prob(logits, actions):
        logp = torch.log_softmax(logits, -1)
        sel = logp.gather(1, actions)
        cum = torch.cumsum(sel.exp(), 1) - sel.exp()
        return (sel - torch.log(torch.clamp(1 - cum, min=1e-6))).sum(1)

    pol = Policy()
    opt = torch.optim.Adam(pol.parameters(), lr=1e-4)
    B = 64
    states = nn.functional.normalize(torch.randn(B, 2 * d), dim=-1)
    skills = nn.functional.normalize(torch.randn(n_sk, d), dim=-1).unsqueeze(0).expand(B, -1, -1).contiguous()
    with torch.no_grad():
        logits, values = pol(states, skills)
        g = -torch.log(-torch.log(torch.rand_like(logits).clamp_min(1e-20)))
        actions = torch.topk(logits + g, k, dim=1).indices
        old_lp = pl_log_prob(logits, actions)
    adv = torch.randn(B)
    ret = torch.rand(B)

    def update():
        for _ in range(4):
            perm = torch.randperm(B)
            for i in range(0, B, 32):
                idx = perm[i:i + 32]
                lg, v = pol(states[idx], skills[idx])
                lp = pl_log_prob(lg, actions[idx])
                logp = torch.log_softmax(lg, -1)
                ent = -(logp.exp() * logp).sum(-1).mean()
                ratio = (lp - old_lp[idx]).exp()
                a = adv[idx]
                pl = -torch.min(ratio * a, ratio.clamp(0.8, 1.2) * a).mean()
                vl = ((v - ret[idx]) ** 2).mean()
                loss = pl + 0.5 * vl - 0.01 * ent
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(pol.parameters(), 0.5)
                opt.step()

    update()

    def run():
        t = time.perf_counter()
        update()
        return (time.perf_counter() - t) * 1e3

    return run


def bench_ppo(res):
    run = make_ppo()
    reps = 5
    ms = sum(run() for _ in range(reps)) / reps
    print(f"pytorch ppo update (64 transitions, 30 skills, 4 epochs, 8 minibatches): {ms:.1f} ms")
    res["ppo_update_ms"] = ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    res = {}
    bench_encoder(res)
    bench_ppo(res)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
