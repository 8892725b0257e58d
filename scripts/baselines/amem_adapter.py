#!/usr/bin/env python3
"""A-MEM (agiresearch/A-mem) behind memskill's adapter protocol (docs/adapter-protocol.md).

UNTESTED here: the A-MEM repository is not reachable from memskill's build machines, so this
adapter was written against its published interface (`agentic_memory.memory_system.
AgenticMemorySystem`: `add_note(content, time=...)`, `search_agentic(query, k)`) and never run.
Run it from your own checkout, in a Python that has A-MEM's requirements installed:

    export AMEM_DIR=/path/to/A-mem
    memskill eval --adapter "python3 scripts/baselines/amem_adapter.py" --method a-mem --config C ...

A-MEM decides what to store (its LLM writes each note's keywords, context and tags and evolves
its neighbours) and what to retrieve (its agentic search); one fresh memory system per sample.
Its LLM calls go to the run's OpenAI-compatible endpoint (OPENAI_BASE_URL is set from
MEMSKILL_LLM_BASE_URL); its embedder is the MiniLM asset folder when memskill has one.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _adapter  # noqa: E402


class AMemMemory:
    def __init__(self, args):
        self.cls = _adapter.import_from_checkout(
            "AMEM_DIR", "A-MEM (github.com/agiresearch/A-mem)",
            "agentic_memory.memory_system", "AgenticMemorySystem")
        base, self.model, self.key = _adapter.llm_endpoint(args)
        os.environ["OPENAI_BASE_URL"] = base
        self.embedder = os.environ.get("MEMSKILL_MINILM_DIR", "all-MiniLM-L6-v2")
        self.system = None

    def reset(self, sample_id):
        self.system = self.cls(model_name=self.embedder, llm_backend="openai",
                               llm_model=self.model, api_key=self.key)

    def add(self, req):
        self.system.add_note(req["text"], time=req.get("date"))

    def retrieve(self, req):
        hits = self.system.search_agentic(req["question"], k=int(req["k"]))
        return {"memories": [h["content"] for h in hits]}


if __name__ == "__main__":
    _adapter.main(__doc__, AMemMemory)
