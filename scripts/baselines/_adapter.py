"""What memskill's real adapters share (docs/adapter-protocol.md): the request loop, the run's
OpenAI-compatible endpoint, and a local embedder. Standard library only; each adapter imports
its memory system itself.

The loop keeps the protocol's stdout to itself: the memory libraries print and log freely, so
file descriptor 1 is pointed at stderr (memskill keeps its tail for error messages) and replies
go to a private copy of the original stdout.
"""

import json
import os
import sys


def fail(msg):
    """Stop at start-up with a message memskill shows (the adapter's stderr tail)."""
    sys.stderr.write(f"adapter error: {msg}\n")
    sys.stderr.flush()
    sys.exit(2)


def llm_endpoint(args):
    """(base_url, model, api_key) of the run's LLM: --llm-base-url / --llm-model, else what
    memskill passes from the eval config's executor (MEMSKILL_LLM_BASE_URL / _MODEL)."""
    base = args.llm_base_url or os.environ.get("MEMSKILL_LLM_BASE_URL")
    model = args.llm_model or os.environ.get("MEMSKILL_LLM_MODEL")
    if not base or not model:
        fail(
            "no LLM endpoint: the eval config's executor must be backend = \"openai\" "
            "(memskill passes MEMSKILL_LLM_BASE_URL / MEMSKILL_LLM_MODEL), or give "
            "--llm-base-url and --llm-model"
        )
    return base, model, os.environ.get("MEMSKILL_LLM_API_KEY", "memskill")


def embed_endpoint(args):
    """(base_url, model) of an OpenAI-compatible /embeddings server, or None: --embed-base-url,
    else MEMSKILL_EMBED_BASE_URL (memskill passes the run's embeddings server when its encoder
    is one; set it yourself to use another)."""
    base = args.embed_base_url or os.environ.get("MEMSKILL_EMBED_BASE_URL")
    if not base:
        return None
    return base, args.embed_model or os.environ.get("MEMSKILL_EMBED_MODEL", "embed")


def minilm_dir():
    """The MiniLM asset folder for sentence-transformers, when there is one."""
    d = os.environ.get("MEMSKILL_MINILM_DIR")
    if d and os.path.isdir(d):
        return d
    fail(
        "no embedder: set MEMSKILL_EMBED_BASE_URL to an OpenAI-compatible /embeddings "
        "server, or fetch the MiniLM asset (scripts/fetch-assets.sh) and install "
        "sentence-transformers into this venv (WITH_SENTENCE_TRANSFORMERS=1 "
        "scripts/baselines/setup.sh ...)"
    )


def import_from_checkout(env_var, what, module, name):
    """`name` from `module` of the user's checkout at $env_var, or a clear stop."""
    import importlib

    where = os.environ.get(env_var)
    if not where or not os.path.isdir(where):
        fail(f"{env_var} is not set to a checkout of {what}")
    sys.path.insert(0, where)
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        fail(f"cannot import {module}.{name} from {env_var}={where}: {e} (install its requirements)")


def main(doc, make_memory, add_args=None):
    """Parse the common options (and `add_args(parser)`'s), then serve `make_memory(args)`."""
    import argparse

    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--llm-base-url")
    p.add_argument("--llm-model")
    p.add_argument("--embed-base-url")
    p.add_argument("--embed-model")
    if add_args:
        add_args(p)
    args = p.parse_args()
    serve(lambda: make_memory(args))


def serve(make_memory):
    """Answer requests until `close` or EOF. `make_memory()` (called once stdout is guarded)
    gives an object with reset(sample_id), add(request), retrieve(request) ->
    {"memories": [...]} or {"answer": "..."}, and optionally build() and close()."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    memory = make_memory()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        try:
            if op == "reset":
                body = memory.reset(req["sample_id"]) or {}
            elif op == "add":
                body = memory.add(req) or {}
            elif op == "build":
                body = getattr(memory, "build", lambda: None)() or {}
            elif op == "retrieve":
                body = memory.retrieve(req)
            elif op == "close":
                body = getattr(memory, "close", lambda: None)() or {}
            else:
                raise ValueError(f"unknown op {op!r}")
            reply = {"id": req["id"], "ok": True, **body}
        except Exception as e:  # counted by memskill as a failed request, never a score
            import traceback

            traceback.print_exc(file=sys.stderr)
            reply = {"id": req.get("id", 0), "ok": False, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
        if op == "close":
            return
