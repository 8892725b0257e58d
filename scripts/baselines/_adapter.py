"""What memskill's real adapters share (docs/adapter-protocol.md): the request loop, the run's
OpenAI-compatible endpoint, a local embedder, the conversation's turns rebuilt from memskill's
spans, and the import of a system from the user's checkout. Standard library only (numpy where
an embedder is made); each adapter imports its memory system itself.

The loop keeps the protocol's stdout to itself: the memory libraries print and log freely, so
file descriptor 1 is pointed at stderr (memskill keeps its tail for error messages) and replies
go to a private copy of the original stdout.
"""

import json
import os
import re
import subprocess
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


def sentence_transformer_model(args, api_key):
    """The model name to hand a library that embeds through sentence-transformers.

    With an OpenAI-compatible /embeddings server (--embed-base-url, MEMSKILL_EMBED_BASE_URL) a
    stand-in `sentence_transformers` module is installed first: its SentenceTransformer sends
    every text to that server (each text once, then cached), so the library runs without
    PyTorch. Without one, the real package with the MiniLM asset folder (the model these
    systems' own evaluations use), or a clear stop."""
    ep = embed_endpoint(args)
    if ep:
        base, model = ep
        sys.modules["sentence_transformers"] = _embeddings_module(base, model, api_key)
        return model
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        minilm_dir()  # stops with the message on how to get an embedder
        fail("sentence-transformers is not installed in this Python: "
             "WITH_SENTENCE_TRANSFORMERS=1 scripts/baselines/setup.sh ...")
    return minilm_dir()


def _embeddings_module(base, model, api_key):
    """A module standing in for `sentence_transformers`: SentenceTransformer(...).encode()
    through the /embeddings server at `base` (batches of 64, each distinct text sent once)."""
    import types
    import urllib.request

    import numpy as np

    cache = {}
    url = base.rstrip("/") + "/embeddings"

    def vectors(texts):
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        for i in range(0, len(missing), 64):
            batch = missing[i:i + 64]
            req = urllib.request.Request(
                url, data=json.dumps({"model": model, "input": batch}).encode(),
                headers={"Content-Type": "application/json",
                         "Authorization": f"Bearer {api_key}"})
            with urllib.request.urlopen(req, timeout=300) as r:
                data = json.load(r)["data"]
            for d in data:
                cache[batch[d["index"]]] = np.asarray(d["embedding"], dtype=np.float32)
        return [cache[t] for t in texts]

    class SentenceTransformer:
        def __init__(self, model_name_or_path=None, *args, **kwargs):
            self.model_name_or_path = model_name_or_path

        def encode(self, sentences, *args, normalize_embeddings=False, **kwargs):
            one = isinstance(sentences, str)
            vecs = vectors([sentences] if one else list(sentences))
            arr = np.stack(vecs) if vecs else np.zeros((0, 0), dtype=np.float32)
            if normalize_embeddings and len(vecs):
                arr = arr / np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), 1e-12)
            return arr[0] if one else arr

        def get_sentence_embedding_dimension(self):
            return len(vectors(["dimension probe"])[0])

    m = types.ModuleType("sentence_transformers")
    m.SentenceTransformer = SentenceTransformer
    m.MEMSKILL_STAND_IN = f"OpenAI-compatible /embeddings at {base} (model {model})"
    return m


def checkout(env_var, what, pinned, clone_url):
    """The user's checkout at $env_var (a folder), its commit said on stderr beside the pinned
    one this adapter was tested with, or a clear stop naming the one-line fetch."""
    where = os.environ.get(env_var)
    fetch = f"git clone {clone_url} DIR && git -C DIR checkout {pinned}"
    if not where or not os.path.isdir(where):
        fail(f"{env_var} is not set to a checkout of {what} ({fetch}, then {env_var}=DIR)")
    try:
        commit = subprocess.run(["git", "-C", where, "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=30).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    note = "the pinned commit" if commit == pinned else f"not the pinned {pinned}"
    sys.stderr.write(f"{what} from {where} at commit {commit} ({note})\n")
    return where


def import_from_checkout(env_var, what, module, name, pinned=None, clone_url=None, sub=""):
    """`name` from `module` of the user's checkout at $env_var (its folder `sub` on sys.path;
    the module itself when `name` is None), or a clear stop."""
    import importlib

    where = checkout(env_var, what, pinned or "(none)", clone_url or "REPO")
    sys.path.insert(0, os.path.join(where, sub))
    try:
        m = importlib.import_module(module)
        return m if name is None else getattr(m, name)
    except (ImportError, AttributeError) as e:
        fail(f"cannot import {module}.{name} from {env_var}={where}: {e} "
             "(scripts/baselines/setup.sh installs its requirements)")


# --- the conversation's turns, rebuilt from memskill's spans -------------------------------

# `NAME said, "` at a line's start (LoCoMo's rendering in memskill's spans), after an optional
# `[marker] ` (the synthetic task's); a name of at most 3 words.
_TURN_START = re.compile(r'^(?:\[[^\]]*\]\s*)?(?P<name>[^\s"][^"\n]{0,39}?) said, "')
_CAPTION = '" and shared '
_HEADER = re.compile(r"^(DATE|Session Date): .*$|^CONVERSATION:$")
# the least overlap (characters) taken for a window's repeat of the previous one
_MIN_OVERLAP = 32


class Turn:
    """One turn: `speaker` (None for a line without one), `text`, the `caption` of a shared
    image (LoCoMo's blip_caption) or None, and its session's number and date."""

    __slots__ = ("speaker", "text", "caption", "session", "date")

    def __init__(self, speaker, text, caption, session, date):
        self.speaker, self.text, self.caption = speaker, text, caption
        self.session, self.date = session, date

    def __repr__(self):
        return f"Turn({self.speaker!r}, {self.text!r}, {self.caption!r}, {self.session!r}, {self.date!r})"


def _closed(text):
    """Whether a turn's text (from `NAME said, "`) has reached its end."""
    return text.endswith('"') or bool(re.search(r'" and shared .*\.$', text, re.S))


def parse_turn(text, session=None, date=None):
    """A Turn from one rendered turn (`NAME said, "TEXT"` with or without ` and shared
    CAPTION.`); a text in another form is a turn without a speaker."""
    m = _TURN_START.match(text)
    if not m or len(m.group("name").split()) > 3:
        return Turn(None, text.strip(), None, session, date)
    rest = text[m.end():]
    caption = None
    if rest.endswith('"'):
        rest = rest[:-1]
    elif _CAPTION in rest and _closed(rest):
        i = rest.rfind(_CAPTION)
        rest, caption = rest[:i], rest[i + len(_CAPTION):-1]
    return Turn(m.group("name").strip(), rest, caption, session, date)


def _merge(a, b):
    """`b` appended to `a`, without the start of `b` that repeats the end of `a` (memskill's
    fixed-token windows overlap: each window is cut and stripped on its own, so the repeat is
    exact but for a character cut at a window's edge, U+FFFD); without such a repeat of at
    least _MIN_OVERLAP characters, on a new line."""
    a2, b2 = a.rstrip("\ufffd"), b.lstrip("\ufffd")
    probe = b2[:_MIN_OVERLAP]
    if len(probe) == _MIN_OVERLAP:
        tail_from = max(0, len(a2) - 8000)
        i = a2.find(probe, tail_from)
        while i != -1:
            if b2.startswith(a2[i:]):
                return a2 + b2[len(a2) - i:]
            i = a2.find(probe, i + 1)
    return a + "\n" + b


class Conversation:
    """A sample's turns in order, each once, rebuilt from the spans memskill sends, whatever
    the span mode: a span's header lines (`DATE: ...`, `CONVERSATION:`) are dropped; spans of
    one session are joined, a fixed-token window's overlap with the previous one taken out; a
    turn continued over several lines (or cut by a window's edge) is given whole once it ends.
    `add(request)` gives the turns that are complete so far, `finish()` the rest."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.key = None
        self.started = False
        self.session = self.date = None
        self.text = ""
        self.done = 0  # lines of self.text already taken
        self.open = None  # the lines of a turn not ended yet

    def add(self, req):
        session = req.get("session")
        key = (session, req.get("date")) if session is None else session
        lines = req.get("text", "").split("\n")
        while lines and _HEADER.match(lines[0].strip()):
            lines.pop(0)
        body = "\n".join(lines).strip()
        out = []
        if not self.started or key != self.key:
            out += self.finish()
            self.started, self.key = True, key
            self.session, self.date = session, req.get("date")
            self.text, self.done = body, 0
        elif body:
            self.text = _merge(self.text, body) if self.text else body
        lines = self.text.split("\n")
        # the last line may be cut by the window's edge: taken with the next span or at the end
        for line in lines[self.done:-1]:
            out += self._line(line)
        self.done = max(self.done, len(lines) - 1)
        return out

    def finish(self):
        """The turns still held (the session's last line, a turn not ended)."""
        out = []
        if self.started:
            for line in self.text.split("\n")[self.done:]:
                out += self._line(line)
            self.done = len(self.text.split("\n"))
        if self.open:
            out.append(parse_turn("\n".join(self.open), self.session, self.date))
            self.open = None
        return out

    def _line(self, line):
        if self.open is not None:
            self.open.append(line)
            text = "\n".join(self.open)
            if _closed(text):
                self.open = None
                return [parse_turn(text, self.session, self.date)]
            return []
        if not line.strip():
            return []
        m = _TURN_START.match(line)
        if m and not _closed(line[m.end():]):
            self.open = [line]
            return []
        return [parse_turn(line, self.session, self.date)]


def main(doc, make_memory, add_args=None):
    """Parse the common options (and `add_args(parser)`'s), then serve `make_memory(args)`."""
    import argparse

    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--llm-base-url")
    p.add_argument("--llm-model")
    p.add_argument("--embed-base-url")
    p.add_argument("--embed-model")
    p.add_argument("--check", action="store_true",
                   help="import the memory system and stop (placeholders for endpoints not given)")
    if add_args:
        add_args(p)
    args = p.parse_args()
    if args.check:
        check(args, make_memory)
    serve(lambda: make_memory(args))


def check(args, make_memory):
    """Make the memory system once, with placeholder endpoints where none is given (nothing is
    sent to them), say so and exit: what setup.sh runs to check a checkout and its venv."""
    placeholder = "http://127.0.0.1:9/v1"
    if not (args.llm_base_url or os.environ.get("MEMSKILL_LLM_BASE_URL")):
        args.llm_base_url = placeholder
    if not (args.llm_model or os.environ.get("MEMSKILL_LLM_MODEL")):
        args.llm_model = "check"
    if not embed_endpoint(args):
        try:
            import sentence_transformers  # noqa: F401
        except ImportError:
            args.embed_base_url = placeholder
    sys.stdout = sys.stderr
    make_memory(args)
    print("check: ok", file=sys.stderr)
    sys.exit(0)


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
