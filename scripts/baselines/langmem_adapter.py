#!/usr/bin/env python3
"""LangMem (PyPI `langmem`) behind memskill's adapter protocol (docs/adapter-protocol.md).

    scripts/baselines/setup.sh langmem
    memskill eval --adapter "$HOME/.cache/memskill/langmem-venv/bin/python scripts/baselines/langmem_adapter.py" \
        --method langmem --config configs/quickstart.toml --split test ...

LangMem decides what to store: every span goes to its memory manager
(`langmem.create_memory_manager`, tool-calling extraction through trustcall, on the run's
OpenAI-compatible endpoint through langchain-openai) together with the sample's memories so
far, which it may extend or revise. The memories live in LangGraph's in-memory store with a
vector index (the store LangMem's own search tool reads); a question gets the store's semantic
search, the first k results. The embedder is the run's /embeddings server or the MiniLM asset
through sentence-transformers.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _adapter  # noqa: E402

os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")


def embed_function(args, api_key):
    """(embed(texts) -> vectors, dims)."""
    ep = _adapter.embed_endpoint(args)
    if ep:
        from langchain_openai import OpenAIEmbeddings

        base, model = ep
        # no tiktoken length check: it would download its tokenizer files
        emb = OpenAIEmbeddings(model=model, base_url=base, api_key=api_key,
                               check_embedding_ctx_length=False)
        return emb.embed_documents, len(emb.embed_query("dimension probe"))
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        _adapter.minilm_dir()  # fails with the message on how to get an embedder
        raise
    st = SentenceTransformer(_adapter.minilm_dir(), device="cpu")
    return (lambda texts: st.encode(list(texts), normalize_embeddings=True).tolist()), 384


class LangMemMemory:
    def __init__(self, args):
        try:
            from langchain_openai import ChatOpenAI
            from langgraph.store.memory import InMemoryStore
            from langmem import create_memory_manager
        except ImportError as e:
            _adapter.fail(f"langmem is not installed in this Python ({e}): run scripts/baselines/setup.sh langmem")
        base, model, key = _adapter.llm_endpoint(args)
        llm = ChatOpenAI(model=model, base_url=base, api_key=key, temperature=0.0,
                         max_tokens=args.max_tokens, max_retries=1)
        self.manager = create_memory_manager(llm, enable_inserts=True, enable_deletes=False)
        embed, dims = embed_function(args, key)
        self.store = InMemoryStore(index={"dims": dims, "embed": embed, "fields": ["content"]})
        self.namespace = None
        self.memories = []

    def reset(self, sample_id):
        self.namespace = ("memskill", sample_id)
        self.memories = []

    def add(self, req):
        self.memories = self.manager.invoke(
            {"messages": [{"role": "user", "content": req["text"]}], "existing": self.memories})
        for m in self.memories:
            content = getattr(m.content, "content", None) or str(m.content)
            self.store.put(self.namespace, str(m.id), {"content": content})

    def retrieve(self, req):
        hits = self.store.search(self.namespace, query=req["question"], limit=int(req["k"]))
        return {"memories": [h.value["content"] for h in hits]}


if __name__ == "__main__":
    _adapter.main(__doc__, LangMemMemory, lambda p: p.add_argument(
        "--max-tokens", type=int, default=2000, help="the extraction reply budget"))
