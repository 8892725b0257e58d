"""Shared part of the DPR / DRAGON+ retriever checks (memskill's own code).

The reference's `--retriever dpr | dragon` (rag_utils.init_context_model / init_query_model /
get_embeddings, src/memory_bank.py MemoryBank.retrieve) embeds memories with a context encoder
and questions with a query encoder:
  dpr     DPRContextEncoder / DPRQuestionEncoder (facebook/dpr-*-single-nq-base): pooler_output
          (the last layer's [CLS] state; projection_dim 0), F.normalize
  dragon  AutoModel (BertModel) facebook/dragon-plus-context-encoder / -query-encoder:
          last_hidden_state[:, 0], not normalised (MemoryBank.retrieve normalises the memory
          vectors for dragon, and every question vector, before the inner product)

Here both encoders are model folders with the real layout (DPR's tensors under
ctx_encoder.bert_model. / question_encoder.bert_model., DRAGON+'s at the root with a pooler),
BERT sizes, and the bert-base-uncased WordPiece tokenizer (the MiniLM asset folder ships the
same 30522-entry vocabulary). The reference's own loaders read them: its from_pretrained calls
for the Hub names are redirected to the folders, nothing else of its code is changed.

Weights: "formula" (the integer-hash formula of _encoder_common.formula_tensor on each tensor's
name, prefixed per encoder, which the Rust checker rebuilds without a file: the committed tiny
fixtures) or "random" (transformers' own initialisation, seeded: scripts/fidelity/
retriever_random.py, full size, checked by loading the folders).
"""
import json
import os
import shutil
import sys

os.environ.setdefault("TQDM_DISABLE", "1")  # the reference's get_embeddings shows a bar per call

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _encoder_common import UNICODE, WORDS, formula_tensor, load_reference_module, seeded  # noqa: E402

# Hub name, asset-cache folder, and the name prefix of the formula weights, per encoder.
KINDS = {
    "dpr": {
        "context": ("facebook/dpr-ctx_encoder-single-nq-base", "dpr-ctx_encoder-single-nq-base",
                    "ctx_encoder.bert_model."),
        "query": ("facebook/dpr-question_encoder-single-nq-base",
                  "dpr-question_encoder-single-nq-base", "question_encoder.bert_model."),
    },
    "dragon": {
        "context": ("facebook/dragon-plus-context-encoder", "dragon-plus-context-encoder",
                    "context."),
        "query": ("facebook/dragon-plus-query-encoder", "dragon-plus-query-encoder", "query."),
    },
}
# bert-base-uncased: DPR's and DRAGON+'s encoders (DRAGON+ is BERT-base sized too: hidden 768).
REAL = {"vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
        "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 512,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12}
TINY = dict(REAL, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64)
MAX_TOKENS = 512


def _model(kind, side, sizes):
    from transformers import BertConfig, BertModel, DPRConfig, DPRContextEncoder, DPRQuestionEncoder

    if kind == "dpr":
        cfg = DPRConfig(**sizes, projection_dim=0)
        return (DPRContextEncoder if side == "context" else DPRQuestionEncoder)(cfg)
    return BertModel(BertConfig(**sizes))  # AutoModel's class for DRAGON+ (pooler included)


def write_folder(kind, side, out, sizes, minilm, weights, seed=0, max_length=None):
    """One encoder folder: config.json and model.safetensors from transformers, the tokenizer
    files of `minilm`, tokenizer_config.json as the real repositories ship it
    ({"do_lower_case": true}; `max_length` adds model_max_length)."""
    import torch

    torch.manual_seed(seed)
    model = _model(kind, side, sizes)
    if weights == "formula":
        tag = KINDS[kind][side][2]
        sd = {}
        for k, v in model.state_dict().items():
            name = k if kind == "dpr" else tag + k  # DPR's names already carry its prefix
            sd[k] = torch.from_numpy(formula_tensor(name, tuple(v.shape)))
        model.load_state_dict(sd)
    model.save_pretrained(out, safe_serialization=True)
    for name in ("tokenizer.json", "vocab.txt", "special_tokens_map.json"):
        if os.path.isfile(os.path.join(minilm, name)):
            shutil.copy(os.path.join(minilm, name), os.path.join(out, name))
    tok_cfg = {"do_lower_case": True}
    if max_length is not None:
        tok_cfg["model_max_length"] = max_length
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(tok_cfg, f)


def redirect_hub_names(folders):
    """Makes transformers' from_pretrained read `folders[hub name]` for those names."""
    import transformers

    for cls_name in ("AutoTokenizer", "AutoModel", "DPRContextEncoder", "DPRQuestionEncoder",
                     "DPRContextEncoderTokenizer", "DPRQuestionEncoderTokenizer"):
        cls = getattr(transformers, cls_name)
        orig = cls.from_pretrained.__func__

        def from_pretrained(c, name, *args, _orig=orig, **kwargs):
            return _orig(c, folders.get(name, name), *args, **kwargs)

        cls.from_pretrained = classmethod(from_pretrained)


def make_cases(rag, mb_mod, kind, n_cases, seed, long_questions):
    """Runs the reference on seeded banks and questions. `long_questions`: some questions of
    600 words (> 512 tokens), which only a tokenizer with a 512 limit survives."""
    rng = seeded(seed)

    def text(lo, hi):
        return " ".join(rng.choice(UNICODE) if rng.random() < 0.08 else rng.choice(WORDS)
                        for _ in range(rng.randint(lo, hi)))

    pool = ["", "ok", "?"] + [text(1, 16) for _ in range(2500)] + [text(17, 120) for _ in range(500)]
    cases = []
    for c in range(n_cases):
        n = 0 if c % 40 == 0 else rng.randint(1, 12)
        mems = list(dict.fromkeys(rng.sample(pool, n)))  # distinct texts: no exact ties
        if long_questions and c % 50 == 7:
            question = " ".join(rng.choice(WORDS) for _ in range(600))
        else:
            question = rng.choice(pool)
        k = rng.choice([1, 3, 5, 20])
        bank = mb_mod.MemoryBank(retriever_name=kind, top_k=k)
        expected = {}
        if mems:
            ctx = rag.get_embeddings(kind, mems, "context")
            for t, e in zip(mems, ctx):
                bank.add_memory(t, embedding=e)
            expected["first_memory_embedding"] = [round(float(x), 7) for x in ctx[0]]
        q = rag.get_embeddings(kind, [question], "query")[0]
        _, idx = bank.retrieve(q, use_state_encoder=False)
        tok = rag._MODEL_CACHE[f"{kind}_query"][0]
        expected.update({"retrieved": [int(i) for i in idx],
                         "question_tokens": len(tok(question, truncation=True)["input_ids"]),
                         "question_embedding": [round(float(x), 7) for x in q]})
        cases.append({"input": {"memories": mems, "question": question, "top_k": k},
                      "expected": expected})
    return cases


def reference_modules(ref):
    rag = load_reference_module(ref, "rag_utils.py", "memskill_ref_rag_utils")
    mb_mod = load_reference_module(ref, "src/memory_bank.py", "memskill_ref_memory_bank")
    return rag, mb_mod


def long_text_failure(rag, kind):
    """What the reference does with a 600-word memory text (its tokenizer sets no limit)."""
    try:
        rag.get_embeddings(kind, [" ".join(["memory"] * 600)], "context")
        return None
    except Exception as e:  # noqa: BLE001 - reported, not handled
        return f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"


def write_fixture(path, component, tolerance, model, cases, note):
    for c in cases:
        c["input"]["model"] = model
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"component": component, "reference": "cda41f3", "tolerance": tolerance,
                   "note": note, "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))


def gen_main(kind):
    """The committed tiny fixture `retriever_<kind>` (scripts/fidelity/diff.sh runs it)."""
    import argparse
    import tempfile

    from _encoder_common import default_minilm

    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--minilm", default=default_minilm())
    ap.add_argument("--cases", type=int, default=250)
    ap.add_argument("--seed", type=int, default=17)
    a = ap.parse_args()
    name = f"gen_retriever_{kind}"
    if not os.path.isfile(os.path.join(a.minilm, "tokenizer.json")):
        print(f"{name}: skipped: no BERT tokenizer in {a.minilm}", file=sys.stderr)
        return
    rag, mb_mod = reference_modules(a.reference)
    # DPR's folders say model_max_length 512 (what transformers 4 gives DPR's tokenizers by
    # their Hub names), so its long questions are truncated on both sides; DRAGON+'s, as its
    # repositories, set no limit: the reference fails on a text over 512 tokens.
    limit = MAX_TOKENS if kind == "dpr" else None
    with tempfile.TemporaryDirectory() as tmp:
        folders = {}
        for side in ("context", "query"):
            hub, folder, _ = KINDS[kind][side]
            d = os.path.join(tmp, folder)
            write_folder(kind, side, d, TINY, a.minilm, "formula", max_length=limit)
            folders[hub] = d
        redirect_hub_names(folders)
        cases = make_cases(rag, mb_mod, kind, a.cases, a.seed, long_questions=limit is not None)
        failure = None if limit else long_text_failure(rag, kind)
    model = dict(TINY, max_tokens=MAX_TOKENS, context_prefix=KINDS[kind]["context"][2],
                 query_prefix=KINDS[kind]["query"][2])
    n_long = sum(1 for c in cases if c["expected"]["question_tokens"] == MAX_TOKENS)
    print(f"{name}: {len(cases)} cases, {n_long} questions truncated at {MAX_TOKENS}"
          + (f"; the reference on a 600-word text: {failure}" if failure else ""), file=sys.stderr)
    write_fixture(os.path.join(a.out, f"retriever_{kind}.json"), f"retriever_{kind}", 1e-5,
                  model, cases, "tiny formula-weight encoders (scripts/fidelity/_retriever_common.py)")
