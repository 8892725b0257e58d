#!/usr/bin/env python3
"""Differential fixture `retriever_contriever`: question-side memory retrieval with the
reference's `--retriever contriever` (rag_utils.get_embeddings: BERT mean pooling over the
attention mask, F.normalize; memories embedded in 'context' mode, questions in 'query' mode;
then src/memory_bank.py MemoryBank.retrieve(q, use_state_encoder=False): cosine, best first)
against ours (memory.retriever = "contriever": BertEncoder + retrieval::question_hits).

facebook/contriever's weights are not reachable here, so the check runs on a tiny BERT whose
weights are an integer-hash formula (_encoder_common.formula_tensor; the Rust checker rebuilds
them) with contriever's tokenizer family (bert-base-uncased WordPiece, taken from the MiniLM
asset folder, which ships the same vocabulary), 512-token truncation. The reference's model
cache (rag_utils._MODEL_CACHE) is pre-seeded with this model, so its own code path runs.

Usage: gen_retriever_contriever.py --reference REF --out DIR [--minilm DIR] [--cases N]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TQDM_DISABLE", "1")  # the reference's get_embeddings shows a bar per call

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _encoder_common import UNICODE, WORDS, default_minilm, formula_tensor, load_reference_module, seeded  # noqa: E402

TINY = {
    "vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 64, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 512, "type_vocab_size": 2,
    "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0,
    "position_embedding_type": "absolute", "model_type": "bert",
}
MAX_TOKENS = 512
# What the checker needs to rebuild the model (the rest of TINY are BERT defaults / unused).
MODEL_KEYS = {k: TINY[k] for k in ("vocab_size", "hidden_size", "num_hidden_layers",
                                   "num_attention_heads", "intermediate_size",
                                   "max_position_embeddings", "type_vocab_size", "layer_norm_eps")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--minilm", default=default_minilm())
    ap.add_argument("--cases", type=int, default=250)
    ap.add_argument("--seed", type=int, default=13)
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.minilm, "tokenizer.json")):
        print(f"gen_retriever_contriever: skipped: no BERT tokenizer in {a.minilm}", file=sys.stderr)
        return
    import torch
    from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel

    rag = load_reference_module(a.reference, "rag_utils.py", "memskill_ref_rag_utils")
    mb_mod = load_reference_module(a.reference, "src/memory_bank.py", "memskill_ref_memory_bank")
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "tiny-contriever")
        torch.manual_seed(0)
        model = BertModel(BertConfig(**TINY), add_pooling_layer=False)
        sd = {k: torch.from_numpy(formula_tensor(k, tuple(v.shape))) for k, v in model.state_dict().items()}
        model.load_state_dict(sd)
        model.save_pretrained(d, safe_serialization=True)
        for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
            if os.path.isfile(os.path.join(a.minilm, name)):
                shutil.copy(os.path.join(a.minilm, name), os.path.join(d, name))
        tok = AutoTokenizer.from_pretrained(d)
        assert tok.model_max_length == MAX_TOKENS, tok.model_max_length
        m = AutoModel.from_pretrained(d).eval()
        rag._MODEL_CACHE["contriever_context"] = (tok, m)
        rag._MODEL_CACHE["contriever_query"] = (tok, m)

        rng = seeded(a.seed)
        def short_text():
            words = [rng.choice(UNICODE) if rng.random() < 0.08 else rng.choice(WORDS)
                     for _ in range(rng.randint(1, 16))]
            return " ".join(words)

        pool = ["", "ok", "?"] + [short_text() for _ in range(3000)]
        cases = []
        for c in range(a.cases):
            n = 0 if c % 40 == 0 else rng.randint(1, 12)
            mems = list(dict.fromkeys(rng.sample(pool, n)))  # distinct texts: no exact ties
            if c % 50 == 7:
                question = " ".join(rng.choice(WORDS) for _ in range(600))  # > 512 tokens
            else:
                question = rng.choice(pool)
            k = rng.choice([1, 3, 5, 20])
            bank = mb_mod.MemoryBank(retriever_name="contriever", top_k=k)
            if mems:
                ctx = rag.get_embeddings("contriever", mems, "context")
                for text, e in zip(mems, ctx):
                    bank.add_memory(text, embedding=e)
            q = rag.get_embeddings("contriever", [question], "query")[0]
            _, idx = bank.retrieve(q, use_state_encoder=False)
            ids = tok(question, truncation=True)["input_ids"]
            cases.append({"input": {"model": MODEL_KEYS, "memories": mems, "question": question, "top_k": k},
                          "expected": {"retrieved": [int(i) for i in idx],
                                       "question_tokens": len(ids),
                                       "question_embedding": [round(float(x), 7) for x in q]}})
    n_long = sum(1 for c in cases if c["expected"]["question_tokens"] == MAX_TOKENS)
    print(f"gen_retriever_contriever: {len(cases)} cases, {n_long} questions truncated at {MAX_TOKENS}",
          file=sys.stderr)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "retriever_contriever.json"), "w") as f:
        json.dump({"component": "retriever_contriever", "reference": "cda41f3", "tolerance": 1e-5,
                   "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
