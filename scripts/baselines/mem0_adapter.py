#!/usr/bin/env python3
"""Mem0 (PyPI `mem0ai`) behind memskill's adapter protocol (docs/adapter-protocol.md).

    scripts/baselines/setup.sh mem0
    memskill eval --adapter "$HOME/.cache/memskill/mem0-venv/bin/python scripts/baselines/mem0_adapter.py" \
        --method mem0 --config configs/quickstart.toml --split test ...

Mem0 decides what to store: every span goes through `Memory.add` with inference on (its own LLM
extraction prompt, on the run's OpenAI-compatible endpoint), one Mem0 user per sample. A
question gets `Memory.search` (its own ranking, the first k results). Local everything: an
in-memory Qdrant under a temporary folder, the history database beside it, and the embedder of
the run (its /embeddings server) or the MiniLM asset through sentence-transformers.
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _adapter  # noqa: E402

os.environ.setdefault("MEM0_TELEMETRY", "False")


def embedder_config(args, api_key):
    ep = _adapter.embed_endpoint(args)
    if ep:
        base, model = ep
        from openai import OpenAI

        dims = len(OpenAI(base_url=base, api_key=api_key).embeddings.create(
            input=["dimension probe"], model=model).data[0].embedding)
        return {"provider": "openai",
                "config": {"model": model, "openai_base_url": base, "api_key": api_key}}, dims
    return {"provider": "huggingface", "config": {"model": _adapter.minilm_dir()}}, 384


class Mem0Memory:
    def __init__(self, args):
        try:
            from mem0 import Memory
        except ImportError as e:
            _adapter.fail(f"mem0 is not installed in this Python ({e}): run scripts/baselines/setup.sh mem0")
        base, model, key = _adapter.llm_endpoint(args)
        embedder, dims = embedder_config(args, key)
        self.dir = tempfile.mkdtemp(prefix="memskill-mem0-")
        config = {
            "llm": {"provider": "openai", "config": {
                "model": model, "openai_base_url": base, "api_key": key,
                "temperature": 0.0, "max_tokens": args.max_tokens}},
            "embedder": embedder,
            "vector_store": {"provider": "qdrant", "config": {
                "collection_name": "memskill", "path": os.path.join(self.dir, "qdrant"),
                "embedding_model_dims": dims, "on_disk": False}},
            "history_db_path": os.path.join(self.dir, "history.db"),
        }
        self.memory = Memory.from_config(config)
        self.threshold = args.threshold
        self.user = None

    def reset(self, sample_id):
        self.user = sample_id

    def add(self, req):
        meta = {"span_id": req["span_id"], "span_index": req["index"]}
        if req.get("date"):
            meta["date"] = req["date"]
        self.memory.add([{"role": "user", "content": req["text"]}],
                        user_id=self.user, metadata=meta)

    def retrieve(self, req):
        found = self.memory.search(req["question"], top_k=int(req["k"]),
                                   filters={"user_id": self.user}, threshold=self.threshold)
        return {"memories": [r["memory"] for r in found.get("results", [])]}


def options(p):
    p.add_argument("--max-tokens", type=int, default=2000, help="Mem0's LLM reply budget")
    p.add_argument("--threshold", type=float, default=0.1,
                   help="Mem0's search score threshold (its default 0.1)")


if __name__ == "__main__":
    _adapter.main(__doc__, Mem0Memory, options)
