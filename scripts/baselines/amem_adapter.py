#!/usr/bin/env python3
"""A-MEM (agiresearch/A-mem) behind memskill's adapter protocol (docs/adapter-protocol.md).

    scripts/baselines/setup.sh amem          # the venv; AMEM_DIR names your checkout
    export AMEM_DIR=/path/to/A-mem           # git clone ... && git -C ... checkout PINNED
    memskill eval --adapter "$HOME/.cache/memskill/amem-venv/bin/python scripts/baselines/amem_adapter.py" \
        --method a-mem --config configs/locomo.toml --split test

A-MEM is used through its library (`agentic_memory.memory_system.AgenticMemorySystem`) the way
the A-MEM paper's LoCoMo evaluation (github.com/WujiangXu/AgenticMemory, test_advanced.py)
uses its memory system:

- memory building: one fresh memory system per sample; one note per conversation turn, in
  order, with the content `Speaker NAMEsays : TEXT` (an image's caption in front as
  `[Image: CAPTION]`) and the session's date as its time; each note's keywords, context and
  tags written by A-MEM's own LLM analysis (`analyze_content`, which that evaluation's notes
  run on creation), then `add_note` (A-MEM's linking and memory evolution).
- retrieval: the question turned into search keywords by the LLM (that evaluation's step; the
  prompt here is in memskill's words, the reply a JSON object as there; a reply without
  keywords falls back to the question), then `find_related_memories_raw(keywords, k=10)`:
  the 10 nearest notes, each followed by its linked notes, in A-MEM's own text form, one
  memory per note. memskill's answer prompt takes the first `k` of them.
- the answer: memskill's answerer and scorer. A-MEM's own answer prompts are not used: they
  are chosen by the question's category and, for adversarial questions, are given the gold
  answer, neither of which an adapter is told.

memskill rebuilds the conversation's turns from its spans (whatever eval.span_mode is), so each
turn becomes one note once. A-MEM's LLM calls go to the run's OpenAI-compatible endpoint
(OPENAI_BASE_URL is set from MEMSKILL_LLM_BASE_URL: A-MEM's OpenAI client takes no base URL);
its embedder is the run's /embeddings server, else the MiniLM asset through
sentence-transformers. A failed LLM call inside A-MEM is A-MEM's to handle (it logs and goes
on); anything that escapes fails that request, counted by memskill.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _adapter  # noqa: E402

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: no download at import
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # chromadb

# The commit of github.com/agiresearch/A-mem this adapter was tested with (docs/adapter-protocol.md).
PINNED = "ceffb860f0712bbae97b184d440df62bc910ca8d"
CLONE = "https://github.com/agiresearch/A-mem"

KEYWORDS_PROMPT = """Which words would find, in a memory of a long conversation, what answers this question? Give several search keywords, separated by commas.

Question: {question}

Reply with a JSON object: {{"keywords": "keyword1, keyword2, keyword3"}}"""

KEYWORDS_FORMAT = {"type": "json_schema", "json_schema": {
    "name": "response",
    "schema": {"type": "object", "properties": {"keywords": {"type": "string"}},
               "required": ["keywords"], "additionalProperties": False},
    "strict": True}}

# the memory's text form (find_related_memories_raw): one line per note, each starting so
MEMORY_LINE = "talk start time:"


def note_content(turn):
    """A turn as the evaluation's note content."""
    text = turn.text
    if turn.caption is not None:
        text = f"[Image: {turn.caption}] {text}" if text else f"[Image: {turn.caption}]"
    if turn.speaker is None:
        return text
    return "Speaker " + turn.speaker + "says : " + text


def split_memories(raw):
    """find_related_memories_raw's text as one memory per note (a note's content may hold
    line breaks: a note starts at a line that starts with MEMORY_LINE)."""
    out = []
    for line in (raw or "").split("\n"):
        if line.startswith(MEMORY_LINE) or not out:
            out.append(line)
        else:
            out[-1] += "\n" + line
    return [m.strip() for m in out if m.strip()]


class AMemMemory:
    def __init__(self, args):
        base, self.model, self.key = _adapter.llm_endpoint(args)
        os.environ["OPENAI_BASE_URL"] = base
        self.embedder = _adapter.sentence_transformer_model(args, self.key)
        self.cls = _adapter.import_from_checkout(
            "AMEM_DIR", "A-MEM (github.com/agiresearch/A-mem)",
            "agentic_memory.memory_system", "AgenticMemorySystem", PINNED, CLONE)
        self.k = args.retrieve_k
        self.analyze = not args.no_analysis
        self.conversation = _adapter.Conversation()
        self.system = None

    def reset(self, sample_id):
        # A-MEM's constructor empties its (process-wide, in-memory) Chroma collection
        self.system = self.cls(model_name=self.embedder, llm_backend="openai",
                               llm_model=self.model, api_key=self.key)
        self.conversation.reset()

    def add(self, req):
        for turn in self.conversation.add(req):
            self.note(turn)

    def build(self):
        for turn in self.conversation.finish():
            self.note(turn)

    def note(self, turn):
        content = note_content(turn)
        meta = {}
        if self.analyze:
            analysis = self.system.analyze_content(content)
            if isinstance(analysis, dict):
                for field in ("keywords", "context", "tags"):
                    if analysis.get(field):
                        meta[field] = analysis[field]
        self.system.add_note(content, time=turn.date, **meta)

    def keywords(self, question):
        reply = self.system.llm_controller.llm.get_completion(
            KEYWORDS_PROMPT.format(question=question), response_format=KEYWORDS_FORMAT)
        try:
            words = json.loads(reply).get("keywords")
        except (ValueError, TypeError, AttributeError):
            words = None
        return words.strip() if isinstance(words, str) and words.strip() else question

    def retrieve(self, req):
        raw = self.system.find_related_memories_raw(self.keywords(req["question"]), k=self.k)
        return {"memories": split_memories(raw)}


def options(p):
    p.add_argument("--retrieve-k", type=int, default=10,
                   help="notes searched per question (A-MEM's LoCoMo evaluation: 10)")
    p.add_argument("--no-analysis", action="store_true",
                   help="add notes without A-MEM's LLM analysis (keywords, context, tags)")


if __name__ == "__main__":
    _adapter.main(__doc__, AMemMemory, options)
