#!/usr/bin/env python3
"""Baseline side of `memskill bench`: a long-lived process that runs one baseline workload per
request so the Rust driver can interleave ours and theirs (A B A B ...) with the models loaded
once.

Protocol: one JSON object per line on stdin, one JSON object per line on stdout (all other
output goes to stderr).
  {"op": "info"}                               -> {"versions": {...}, "threads": n}
  {"op": "encoder", "batch": 32 | 1}           -> {"value": texts/s}   (512 or 128 LoCoMo turns)
  {"op": "encoder_dir", "model": dir, "texts": [..], "batch": b, "vectors": bool}
                                               -> {"seconds": s, "tokens": n[, "vectors": [..]]}
                                                  (sentence-transformers on that folder, f32)
  {"op": "ppo"}                                -> {"value": ms}        (one PPO update)
  {"op": "llm", "model": path, "prompt_ids": [..], "decode": n, "threads": t}
                                               -> {"prefill_tok_s": x, "decode_tok_s": y}
Workload definitions live in encoder_ppo_torch.py (PyTorch twin) and here (llama.cpp).
Usage: python3 scripts/bench/baseline.py          (started by `memskill bench`)
"""
import contextlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Baselines:
    def __init__(self):
        self.encoder = None
        self.st = {}
        self.ppo = None
        self.llama = {}

    def info(self, _req):
        versions = {}
        for mod in ("torch", "sentence_transformers", "llama_cpp"):
            try:
                versions[mod] = __import__(mod).__version__
            except Exception as e:  # noqa: BLE001 - reported, not fatal
                versions[mod] = f"unavailable ({type(e).__name__})"
        threads = None
        try:
            import torch

            threads = torch.get_num_threads()
        except Exception:  # noqa: BLE001
            pass
        return {"versions": versions, "threads": threads}

    def run_encoder(self, req):
        import encoder_ppo_torch as twin

        if self.encoder is None:
            self.encoder, _ = twin.make_encoder()
        return {"value": self.encoder(int(req.get("batch", 32)))}

    def run_encoder_dir(self, req):
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        path = req["model"]
        if path not in self.st:
            # f32 on the CPU, whatever dtype the weights are stored in (transformers 5 would
            # otherwise keep a bf16 checkpoint in bf16).
            key = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
            model = SentenceTransformer(path, device="cpu", model_kwargs={key: torch.float32})
            dtypes = {p.dtype for p in model.parameters()}
            if dtypes != {torch.float32}:
                raise ValueError(f"{path}: parameters loaded as {dtypes}, not float32")
            self.st[path] = model
        model = self.st[path]
        texts = req["texts"]
        t = time.perf_counter()
        vecs = model.encode(texts, batch_size=int(req.get("batch", 1)))
        secs = time.perf_counter() - t
        tokens = int(sum(int(m.sum()) for m in model.tokenize(texts)["attention_mask"]))
        out = {"seconds": secs, "tokens": tokens}
        if req.get("vectors"):
            out["vectors"] = [[float(x) for x in v] for v in vecs]
        return out

    def run_ppo(self, _req):
        import encoder_ppo_torch as twin

        if self.ppo is None:
            self.ppo = twin.make_ppo()
        return {"value": self.ppo()}

    def run_llm(self, req):
        from llama_cpp import Llama

        path = req["model"]
        threads = int(req.get("threads") or os.cpu_count() or 1)
        key = (path, threads)
        if key not in self.llama:
            self.llama[key] = Llama(
                model_path=path,
                n_ctx=2048,
                n_batch=512,
                n_threads=threads,
                n_threads_batch=threads,
                seed=42,
                verbose=False,
            )
        llm = self.llama[key]
        ids = [int(t) for t in req["prompt_ids"]]
        n = int(req.get("decode", 128))
        llm.reset()  # no KV prefix reuse between rounds: every round prefills the whole prompt
        t0 = time.perf_counter()
        gen = llm.generate(ids, top_k=1, top_p=1.0, min_p=0.0, temp=0.0, reset=True)
        next(gen)
        t1 = time.perf_counter()
        got = 1
        for _ in gen:
            got += 1
            if got >= n:
                break
        t2 = time.perf_counter()
        return {
            "prefill_tok_s": len(ids) / (t1 - t0),
            "decode_tok_s": (got - 1) / (t2 - t1) if got > 1 else 0.0,
            "completion_tokens": got,
        }


def main():
    b = Baselines()
    ops = {"info": b.info, "encoder": b.run_encoder, "encoder_dir": b.run_encoder_dir,
           "ppo": b.run_ppo, "llm": b.run_llm}
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            op = ops[req["op"]]
            with contextlib.redirect_stdout(sys.stderr):
                res = op(req)
        except Exception as e:  # noqa: BLE001 - the driver reports it
            res = {"error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(res) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
