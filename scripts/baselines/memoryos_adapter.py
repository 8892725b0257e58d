#!/usr/bin/env python3
"""MemoryOS (BAI-LAB/MemoryOS) behind memskill's adapter protocol (docs/adapter-protocol.md).

    scripts/baselines/setup.sh memoryos      # the venv; MEMORYOS_DIR names your checkout
    export MEMORYOS_DIR=/path/to/MemoryOS    # git clone ... && git -C ... checkout PINNED
    memskill eval --adapter "$HOME/.cache/memskill/memoryos-venv/bin/python scripts/baselines/memoryos_adapter.py" \
        --method memoryos --config configs/locomo.toml --split test
    # the row where MemoryOS answers itself (its LoCoMo answer prompt):
    memskill eval --adapter ".../python scripts/baselines/memoryos_adapter.py --answer" --method memoryos-answers ...

MemoryOS is run from the checkout's `eval/` folder, the code of MemoryOS's own LoCoMo
evaluation (eval/main_loco_parse.py), with that evaluation's settings:

- memory building: per sample a short-term memory of capacity 1, a mid-term memory of capacity
  2000, a long-term memory, the dynamic updater (topic similarity threshold 0.6) and the
  retriever (queue capacity 10). The conversation's turns become question-answer pairs by the
  evaluation's own `process_conversation` (a turn of the conversation's first speaker opens a
  pair, the other speaker's turn is its reply; an image's caption is appended as there); each
  pair goes to short-term memory, a full short-term memory is evicted to mid-term memory
  (`bulk_evict_and_update_mid_term`: continuity, meta-summary, topic summaries, session
  merge), and the hottest mid-term segment updates the profile and knowledge
  (`update_user_profile_from_top_segment`, heat threshold 5).
- retrieval: `RetrievalAndAnswer.retrieve` with the evaluation's thresholds (segment, page and
  knowledge 0.1): the 10 best pages, then the long-term knowledge found. The memories given
  to memskill are the pages (both speakers, time, chain overview), then that knowledge, then
  the speaker's profile and the assistant knowledge, in that order; memskill's answer prompt
  takes the first `k`.
- the answer: memskill's answerer and scorer; with --answer, MemoryOS answers itself with the
  evaluation's `generate_system_response_with_meta` (its role-play prompt over the short-term
  history, pages, profile and knowledge), recorded as `answered_by: adapter`.

memskill's samples do not say which speaker LoCoMo calls speaker_a (the evaluation's user, the
first of a pair): the adapter reads it from the LoCoMo file (--locomo, by default the one in
memskill's data cache) for a sample found there, else the conversation's first speaker takes
that role (in 6 of LoCoMo's 10 conversations the other speaker opens). The evaluation's code calls a fixed endpoint and model and loads its
embedder on every call; here its LLM client is one that sends every call to the run's
OpenAI-compatible endpoint and model (the evaluation's temperatures and token limits kept),
and its `get_embedding` is one embedder loaded once: the run's /embeddings server, else the
MiniLM asset (all-MiniLM-L6-v2, the evaluation's model) through sentence-transformers. A pair
whose storing fails (an LLM call, a reply MemoryOS cannot read) fails that request, counted
by memskill; the request's other pairs are still stored.
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _adapter  # noqa: E402

# The commit of github.com/BAI-LAB/MemoryOS this adapter was tested with (docs/adapter-protocol.md).
PINNED = "1d717060350931af33d1d0dc3d4e50a72c125a48"
CLONE = "https://github.com/BAI-LAB/MemoryOS"

# eval/main_loco_parse.py's settings
SHORT_TERM_CAPACITY = 1
MID_TERM_CAPACITY = 2000
TOPIC_SIMILARITY = 0.6
QUEUE_CAPACITY = 10
THRESHOLD = 0.1


def locomo_roles(path):
    """{sample_id: (speaker_a, speaker_b)} of the LoCoMo file at `path` (--locomo), else of
    memskill's cached locomo10.json when there is one, else {}."""
    if path is None:
        cache = os.environ.get("MEMSKILL_CACHE") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memskill")
        path = os.path.join(cache, "data", "locomo", "locomo10.json")
        if not os.path.isfile(path):
            return {}
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return {s["sample_id"]: (s["conversation"]["speaker_a"], s["conversation"]["speaker_b"])
                for s in data if "sample_id" in s}
    except (OSError, ValueError, KeyError, TypeError) as e:
        _adapter.fail(f"--locomo {path}: not a LoCoMo file ({e})")


class RunClient:
    """The evaluation's LLM client (`chat_completion(model, messages, temperature,
    max_tokens)` -> the reply's text) on the run's endpoint and model: the model the
    evaluation names in each call (gpt-4o-mini) is replaced by the run's."""

    def __init__(self, base, model, key):
        from openai import OpenAI

        self.model = model
        self.client = OpenAI(base_url=base, api_key=key, max_retries=2)

    def chat_completion(self, model, messages, temperature=0.7, max_tokens=2000):
        r = self.client.chat.completions.create(model=self.model, messages=messages,
                                                temperature=temperature, max_tokens=max_tokens)
        return r.choices[0].message.content.strip()


def embedder(model_name):
    """The evaluation's get_embedding(text) with one model, loaded once (it loads
    SentenceTransformer(model) on every call)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_name)
    cache = {}

    def get_embedding(text, model_name=None):
        if text not in cache:
            cache[text] = model.encode([text], convert_to_numpy=True)[0]
        return cache[text]

    return get_embedding


class MemoryOSMemory:
    def __init__(self, args):
        base, model, key = _adapter.llm_endpoint(args)
        st_model = _adapter.sentence_transformer_model(args, key)
        where = os.environ.get("MEMORYOS_DIR", "")
        # the repository's root; the memoryos-pypi folder (what earlier docs named) also does
        if where and not os.path.isdir(os.path.join(where, "eval")) and os.path.isdir(
                os.path.join(where, "..", "eval")):
            os.environ["MEMORYOS_DIR"] = os.path.dirname(os.path.abspath(where))
        self.loco = _adapter.import_from_checkout(
            "MEMORYOS_DIR", "MemoryOS (github.com/BAI-LAB/MemoryOS)", "main_loco_parse",
            None, PINNED, CLONE, sub="eval")
        import dynamic_update
        import long_term_memory
        import mid_term_memory
        import retrieval_and_answer
        import short_term_memory
        import utils

        self.client = RunClient(base, model, key)
        get_embedding = embedder(st_model)
        for m in (utils, mid_term_memory, long_term_memory):
            m.get_embedding = get_embedding
        # module-level clients of the evaluation (a fixed endpoint) -> the run's
        mid_term_memory.client = self.client
        self.loco.client = self.client
        self.short_cls = short_term_memory.ShortTermMemory
        self.mid_cls = mid_term_memory.MidTermMemory
        self.long_cls = long_term_memory.LongTermMemory
        self.updater_cls = dynamic_update.DynamicUpdate
        self.retrieval_cls = retrieval_and_answer.RetrievalAndAnswer
        self.answer = args.answer
        self.roles = locomo_roles(args.locomo)
        self.root = tempfile.mkdtemp(prefix="memskill-memoryos-")
        self.conversation = _adapter.Conversation()

    def reset(self, sample_id):
        self.sample_id = sample_id
        path = os.path.join(self.root, sample_id.replace("/", "_"))
        self.short = self.short_cls(max_capacity=SHORT_TERM_CAPACITY,
                                    file_path=f"{path}_short_term.json")
        self.mid = self.mid_cls(max_capacity=MID_TERM_CAPACITY, file_path=f"{path}_mid_term.json")
        self.long = self.long_cls(file_path=f"{path}_long_term.json")
        self.updater = self.updater_cls(self.short, self.mid, self.long,
                                        topic_similarity_threshold=TOPIC_SIMILARITY,
                                        client=self.client)
        self.retrieval = self.retrieval_cls(self.short, self.mid, self.long, self.updater,
                                            queue_capacity=QUEUE_CAPACITY)
        self.conversation.reset()
        self.speaker_a, self.speaker_b = self.roles.get(sample_id, (None, None))
        self.held = []  # turns from the last turn of speaker_a on: their pair is not complete

    def add(self, req):
        self.store(self.conversation.add(req), final=False)

    def build(self):
        self.store(self.conversation.finish(), final=True)

    def store(self, turns, final):
        for t in turns:
            if t.speaker and self.speaker_a is None:
                self.speaker_a = t.speaker
            elif t.speaker and t.speaker != self.speaker_a and self.speaker_b is None:
                self.speaker_b = t.speaker
        self.held += turns
        cut = len(self.held)
        if not final:
            opens = [i for i, t in enumerate(self.held) if t.speaker == self.speaker_a]
            cut = opens[-1] if opens else 0
        ready, self.held = self.held[:cut], self.held[cut:]
        if not ready:
            return
        failures = []
        for dialog in self.loco.process_conversation(self.conversation_data(ready)):
            try:
                self.short.add_qa_pair(dialog)
                if self.short.is_full():
                    self.updater.bulk_evict_and_update_mid_term()
                self.loco.update_user_profile_from_top_segment(
                    self.mid, self.long, self.sample_id, self.client)
            except Exception as e:  # the pair is lost; the others are still stored
                import traceback

                traceback.print_exc(file=sys.stderr)
                failures.append(f"{type(e).__name__}: {e}")
        if failures:
            raise RuntimeError(f"{len(failures)} pair(s) not stored; the first: {failures[0]}")

    def conversation_data(self, turns):
        """`turns` in LoCoMo's conversation form, what process_conversation reads."""
        data = {"speaker_a": self.speaker_a or "", "speaker_b": self.speaker_b or ""}
        for n, t in enumerate(turns):
            key = f"session_{t.session if t.session is not None else 'x'}"
            if key not in data:
                data[key] = []
                data[f"{key}_date_time"] = t.date or ""
            dialog = {"speaker": t.speaker or "", "text": t.text}
            if t.caption is not None:
                dialog["blip_caption"] = t.caption
            data[key].append(dialog)
        return data

    def retrieve(self, req):
        found = self.retrieval.retrieve(req["question"], segment_threshold=THRESHOLD,
                                        page_threshold=THRESHOLD, knowledge_threshold=THRESHOLD,
                                        client=self.client)
        a, b = self.speaker_a or "User", self.speaker_b or "Assistant"
        if self.answer:
            meta = {"sample_id": self.sample_id, "speaker_a": a, "speaker_b": b,
                    "category": None, "evidence": None}
            reply, _, _ = self.loco.generate_system_response_with_meta(
                req["question"], self.short, self.long, found["retrieval_queue"],
                found["long_term_knowledge"], self.client, self.sample_id, a, b, meta)
            return {"answer": reply}
        memories = []
        for p in found["retrieval_queue"]:
            m = f"{a}: {p.get('user_input', '')}\n{b}: {p.get('agent_response', '')}\nTime: {p.get('timestamp', '')}"
            if p.get("meta_info"):
                m += f"\nConversation chain overview: {p['meta_info']}"
            memories.append(m)
        memories += [k["knowledge"] for k in found["long_term_knowledge"] if k.get("knowledge")]
        profile = self.long.get_raw_user_profile(self.sample_id)
        if profile:
            memories.append(f"Profile of {a}: {profile}")
        memories += [k["knowledge"] for k in self.long.get_assistant_knowledge() if k.get("knowledge")]
        return {"memories": memories}


def options(p):
    p.add_argument("--answer", action="store_true",
                   help="let MemoryOS answer itself (its LoCoMo evaluation's answer prompt)")
    p.add_argument("--locomo", help="the LoCoMo file that names each conversation's speaker_a "
                   "(default: locomo10.json in memskill's data cache, when there)")


if __name__ == "__main__":
    _adapter.main(__doc__, MemoryOSMemory, options)
