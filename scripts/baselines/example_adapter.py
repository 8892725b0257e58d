#!/usr/bin/env python3
"""The smallest memory system that speaks memskill's adapter protocol (docs/adapter-protocol.md).

It keeps every span it is given in a list and, for a question, returns the spans that share the
most words with it. Pure standard library; a template for real adapters:

    memskill eval --adapter 'python3 scripts/baselines/example_adapter.py' \
        --method word-overlap --config configs/quickstart.toml --split test

One JSON object per line on stdin (a request), one per line on stdout (its reply, echoing the
request's id). Anything else the adapter wants to say goes to stderr: memskill keeps its last
few KB and shows them when a request fails.
"""

import json
import re
import sys

WORD = re.compile(r"[a-z0-9]+")


def words(text):
    return set(WORD.findall(text.lower()))


class WordOverlapMemory:
    def __init__(self):
        self.spans = []

    def reset(self, sample_id):
        self.spans = []

    def add(self, text):
        self.spans.append((text, words(text)))

    def retrieve(self, question, k):
        q = words(question)
        # most shared words first; ties keep the conversation's order
        ranked = sorted(
            range(len(self.spans)), key=lambda i: (-len(q & self.spans[i][1]), i)
        )
        return [self.spans[i][0] for i in ranked[:k]]


def handle(memory, req):
    op = req.get("op")
    if op == "reset":
        memory.reset(req["sample_id"])
        return {}
    if op == "add":
        memory.add(req["text"])
        return {}
    if op in ("build", "close"):
        return {}
    if op == "retrieve":
        return {"memories": memory.retrieve(req["question"], int(req.get("k", 10)))}
    raise ValueError(f"unknown op {op!r}")


def main():
    memory = WordOverlapMemory()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = {"id": req["id"], "ok": True, **handle(memory, req)}
        except Exception as e:  # report it; memskill counts the failed request
            reply = {"id": req.get("id", 0), "ok": False, "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if req.get("op") == "close":
            return


if __name__ == "__main__":
    main()
