#!/usr/bin/env python3
"""MemoryOS (BAI-LAB/MemoryOS, its memoryos-pypi folder) behind memskill's adapter protocol.

UNTESTED here: the MemoryOS repository is not reachable from memskill's build machines, so this
adapter was written against its published interface (`memoryos.Memoryos`: `add_memory(
user_input, agent_response, timestamp)`, its retriever's `retrieve_context(user_query, user_id)`,
`get_response(query)`) and never run. Run it from your own checkout, in a Python that has
MemoryOS's requirements installed:

    export MEMORYOS_DIR=/path/to/MemoryOS/memoryos-pypi
    memskill eval --adapter "python3 scripts/baselines/memoryos_adapter.py" --method memoryos --config C ...

MemoryOS decides what to store (short-, mid- and long-term tiers, its LLM's summaries and
profile) and what to retrieve; each span is one interaction (`user_input` = the span, no
agent reply). By default a question gets the retrieved pages and knowledge as memories for
memskill's answer prompt; with --answer, MemoryOS answers itself (`get_response`, recorded as
`answered_by: adapter`). One fresh store per sample under a temporary folder.
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _adapter  # noqa: E402


class MemoryOSMemory:
    def __init__(self, args):
        self.cls = _adapter.import_from_checkout(
            "MEMORYOS_DIR", "MemoryOS's memoryos-pypi folder (github.com/BAI-LAB/MemoryOS)",
            "memoryos", "Memoryos")
        self.base, self.model, self.key = _adapter.llm_endpoint(args)
        self.answer = args.answer
        self.embedder = os.environ.get("MEMSKILL_MINILM_DIR", "all-MiniLM-L6-v2")
        self.root = tempfile.mkdtemp(prefix="memskill-memoryos-")
        self.system = None
        self.user = None

    def reset(self, sample_id):
        self.user = sample_id
        self.system = self.cls(user_id=sample_id, openai_api_key=self.key,
                               openai_base_url=self.base,
                               data_storage_path=os.path.join(self.root, sample_id),
                               llm_model=self.model, embedding_model_name=self.embedder)

    def add(self, req):
        self.system.add_memory(user_input=req["text"], agent_response="",
                               timestamp=req.get("date"))

    def retrieve(self, req):
        if self.answer:
            return {"answer": self.system.get_response(req["question"])}
        ctx = self.system.retriever.retrieve_context(user_query=req["question"], user_id=self.user)
        memories = [p.get("user_input", "") for p in ctx.get("retrieved_pages", [])]
        memories += [k.get("knowledge", "") for k in ctx.get("retrieved_user_knowledge", [])]
        return {"memories": [m for m in memories if m][: int(req["k"])]}


if __name__ == "__main__":
    _adapter.main(__doc__, MemoryOSMemory, lambda p: p.add_argument(
        "--answer", action="store_true", help="let MemoryOS answer itself"))
