#!/usr/bin/env python3
"""Differential fixture `encoder_minilm`: the reference's sentence-transformers path
(src/controller.py BaseTextEncoder with a "sentence-transformers/..." model name:
SentenceTransformer(all-MiniLM-L6-v2).encode(texts, batch_size)) against our BertEncoder
(candle) in its reproduction mode (long texts truncated at 256 tokens).

Several hundred seeded texts: empty, whitespace, very short, unicode, and longer than 256
tokens. Each case stores a fingerprint of the reference's embedding (first 16 values, norm,
8 random +-1/sqrt(384) projections; _encoder_common.summary) to keep the fixture small.

The model name "sentence-transformers/all-MiniLM-L6-v2" is mapped to the local asset folder
(--minilm, default: the memskill asset cache) when the reference constructs it.

Usage: gen_encoder_minilm.py --reference REF --out DIR [--minilm DIR] [--cases N]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _encoder_common import default_minilm, load_reference_module, sample_texts, seeded, summary  # noqa: E402

NAME = "sentence-transformers/all-MiniLM-L6-v2"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--minilm", default=default_minilm())
    ap.add_argument("--cases", type=int, default=330)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.minilm, "model.safetensors")):
        print(f"gen_encoder_minilm: skipped: no MiniLM in {a.minilm} (scripts/fetch-assets.sh minilm)",
              file=sys.stderr)
        return
    ctrl = load_reference_module(a.reference, "src/controller.py", "memskill_ref_controller")
    orig = ctrl.SentenceTransformer

    def st_local(name, *args, **kw):
        return orig(a.minilm if name == NAME else name, *args, **kw)

    ctrl.SentenceTransformer = st_local
    enc = ctrl.BaseTextEncoder(model_name=NAME, device="cpu", encode_batch_size=64)
    assert enc._use_sentence_transformer and not enc._use_qwen_embedding
    texts = sample_texts(seeded(a.seed), a.cases, long_words=(230, 290), p_long=0.15)
    embs = enc.encode(texts)
    lens = [len(enc.model.tokenize([t])["input_ids"][0]) for t in texts]
    cases = [{"input": {"text": t}, "expected": summary(e)} for t, e in zip(texts, embs)]
    print(f"gen_encoder_minilm: {len(cases)} cases, {sum(1 for n in lens if n == 256)} "
          f"truncated at 256 tokens (max_seq_length {enc.model.max_seq_length})", file=sys.stderr)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "encoder_minilm.json"), "w") as f:
        json.dump({"component": "encoder_minilm", "reference": "cda41f3", "tolerance": 1e-5,
                   "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
