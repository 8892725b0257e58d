"""Run the reference MemSkill trainer for a few PPO updates on a (reduced) LoCoMo file against
an OpenAI-compatible server, and write one JSON line per update saying how long it took and
where the time went. Used by scripts/bench/e2e-reference.sh; the reference checkout is only
read, never changed: what has to differ is swapped in here, at run time.

What is swapped in, and why:
- the encoders: the reference's state and skill encoders load a sentence-transformers model by
  Hub name; the name `sentence-transformers/all-MiniLM-L6-v2` is pointed at the local folder
  given by --encoder (no network). Its question/memory retriever (`--retriever contriever`)
  loads `facebook/contriever` from the Hub; here the same mean-pooled, normalised BERT path
  runs on the --encoder folder instead, so both trainers retrieve with the one MiniLM.
- tiktoken: the LoCoMo processor builds a cl100k tokenizer (a download) that full-session
  spans never use; it gets a stand-in that fails loudly if it is used after all.
Timers are wrapped around the LLM calls, the encoder calls and the PPO update; nothing else
changes.

Usage: python e2e_reference_runner.py --reference DIR --encoder DIR --data FILE
         --base-url URL --updates N --out FILE --work DIR [--batch 4 --top-k 3 --retrieve 20
         --ppo-epochs 2 --minibatch 32 --seed 42 --reward-metric f1|llm_judge]
"""
import argparse
import json
import os
import sys
import threading
import time

ENCODER_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def cli():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reference", required=True)
    p.add_argument("--encoder", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--base-url", required=True)
    p.add_argument("--updates", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("--retrieve", type=int, default=20)
    p.add_argument("--ppo-epochs", type=int, default=2)
    p.add_argument("--minibatch", type=int, default=32)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--reward-metric", default="f1", choices=["f1", "llm_judge"])
    a = p.parse_args()
    for flag, path in (("--reference", a.reference), ("--encoder", a.encoder)):
        if not os.path.isdir(path):
            sys.exit(f"{flag} {path}: not a directory")
    if not os.path.isfile(os.path.join(a.reference, "src", "trainer.py")):
        sys.exit(f"--reference {a.reference}: no src/trainer.py (not a MemSkill checkout?)")
    if a.updates < 1:
        sys.exit("--updates must be >= 1")
    return a


class Intervals:
    """Start/end times of calls of one kind, from any thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.spans = []

    def wrap(self, fn):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                with self.lock:
                    self.spans.append((t0, time.perf_counter()))
        return timed

    def union_within(self, lo, hi):
        """Seconds of [lo, hi] during which at least one call was running."""
        with self.lock:
            cut = sorted((max(s, lo), min(e, hi)) for s, e in self.spans if e > lo and s < hi)
        total, cur_s, cur_e = 0.0, None, None
        for s, e in cut:
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    total += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_e is not None:
            total += cur_e - cur_s
        return total

    def count_within(self, lo, hi):
        with self.lock:
            return sum(1 for s, _ in self.spans if lo <= s < hi)


class NoTokenizer:
    """Stands in for the cl100k tokenizer that full-session spans never use."""

    def __getattr__(self, name):
        raise RuntimeError("e2e runner: the reference used its tiktoken tokenizer; "
                           "only --session-mode full-session is supported here")


def swap_encoders(encoder_dir):
    """Point the reference's encoders at the local MiniLM folder (see the module docs)."""
    import rag_utils
    import src.controller as controller
    import src.trainer as trainer
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    def local_st(name, *args, **kwargs):
        if name != ENCODER_NAME:
            raise RuntimeError(f"e2e runner: unexpected encoder {name!r}")
        return SentenceTransformer(encoder_dir, *args, **kwargs)

    controller.SentenceTransformer = local_st
    loaded, lock = {}, threading.Lock()

    def retriever(mode):
        def load(name):
            if name != "contriever":
                raise RuntimeError(f"e2e runner: unexpected retriever {name!r}")
            with lock:
                if mode not in loaded:
                    model = AutoModel.from_pretrained(encoder_dir)
                    model.eval()
                    loaded[mode] = (AutoTokenizer.from_pretrained(encoder_dir), model)
                return loaded[mode]
        return load

    for mod in (rag_utils, trainer):
        mod.init_context_model = retriever("context")
        mod.init_query_model = retriever("query")


def install_timers(t):
    """Wrap the reference's LLM, encoder and PPO calls and mark update boundaries."""
    import llm_utils
    import rag_utils
    import src.controller as controller
    import src.executor as executor
    import src.trainer as trainer

    llm = t["llm"].wrap(llm_utils.get_llm_response_via_api)
    llm_utils.get_llm_response_via_api = llm
    executor.get_llm_response_via_api = llm
    emb = t["encode"].wrap(rag_utils.get_embeddings)
    for mod in (rag_utils, trainer, executor):
        mod.get_embeddings = emb
    controller.BaseTextEncoder.encode = t["encode"].wrap(controller.BaseTextEncoder.encode)
    trainer.BaseTrainer.update_controller = t["ppo"].wrap(trainer.BaseTrainer.update_controller)

    prewarm = trainer.BaseTrainer._prewarm_retriever_models

    def prewarm_then_mark(self):
        prewarm(self)
        t["marks"].append(time.perf_counter())

    log = trainer.BaseTrainer._wandb_log

    def log_then_mark(self, payload, step=None):
        log(self, payload, step)
        if "train/reward" in payload:
            t["marks"].append(time.perf_counter())

    trainer.BaseTrainer._prewarm_retriever_models = prewarm_then_mark
    trainer.BaseTrainer._wandb_log = log_then_mark


def reference_argv(a):
    w = a.work
    return [
        "main.py", "--dataset", "locomo", "--data-file", a.data,
        "--model", "scripted", "--api", "--api-base", a.base_url, "--api-key", "local",
        "--retriever", "contriever", "--session-mode", "full-session",
        "--state-encoder", ENCODER_NAME, "--op-encoder", ENCODER_NAME,
        "--encode-batch-size", "64", "--device", "cpu",
        "--outer-epochs", "1", "--inner-epochs", str(a.updates),
        "--batch-size", str(a.batch), "--action-top-k", str(a.top_k),
        "--mem-top-k", str(a.retrieve), "--mem-top-k-eval", str(a.retrieve),
        "--ppo-epochs", str(a.ppo_epochs), "--minibatch-size", str(a.minibatch),
        "--new-action-bias-steps", "25", "--reward-metric", a.reward_metric, "--seed", str(a.seed),
        "--save-dir", os.path.join(w, "checkpoints"), "--log-dir", os.path.join(w, "logs"),
        "--out-file", os.path.join(w, "results.json"), "--wandb-run-name", "e2e-bench",
    ]


def per_update(t):
    """One record per update: its wall time and where it went."""
    rows, marks = [], t["marks"]
    for i in range(1, len(marks)):
        lo, hi = marks[i - 1], marks[i]
        with t["ppo"].lock:
            ppo = [(s, e) for s, e in t["ppo"].spans if lo <= s < hi]
        ppo_s = sum(e - s for s, e in ppo)
        rollout_s = (ppo[0][0] - lo) if ppo else hi - lo
        rows.append({
            "step": i, "total_s": hi - lo, "rollout_s": rollout_s, "update_s": ppo_s,
            "other_s": hi - lo - rollout_s - ppo_s,
            "llm_inflight_s": t["llm"].union_within(lo, hi),
            "encode_busy_s": t["encode"].union_within(lo, hi),
            "llm_calls": t["llm"].count_within(lo, hi),
        })
    return rows


def main():
    a = cli()
    os.environ.setdefault("WANDB_MODE", "disabled")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.makedirs(a.work, exist_ok=True)
    sys.path.insert(0, os.path.abspath(a.reference))
    import numpy as np
    import random
    import tiktoken
    import torch

    tiktoken.get_encoding = lambda *_args, **_kw: NoTokenizer()
    import src.trainer as trainer
    from src.config import AgenticMemoryConfig, get_agentic_memory_args

    swap_encoders(a.encoder)
    t = {"llm": Intervals(), "encode": Intervals(), "ppo": Intervals(), "marks": []}
    install_timers(t)
    sys.argv = reference_argv(a)
    args = get_agentic_memory_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    config = AgenticMemoryConfig().update_from_args(args)
    with open(a.data, encoding="utf-8") as f:
        data = json.load(f)
    train_data = data[:6]  # LoCoMo's training conversations are the first six
    ref = trainer.get_trainer(args, config)
    ref.train(train_data)
    rows = per_update(t)
    if len(rows) != a.updates:
        sys.exit(f"e2e runner: timed {len(rows)} updates, expected {a.updates}")
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
