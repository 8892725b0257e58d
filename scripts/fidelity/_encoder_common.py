"""Shared helpers of the encoder / state fidelity generators (memskill's own code).

* load_reference_module: imports one file of the reference checkout by path (its package
  __init__ pulls in modules this check does not need).
* formula_weights: the deterministic weights of the tiny test models, defined by an integer
  hash so that Rust (dev/src/fidelity/encoder_qwen3.rs) rebuilds bit-identical tensors
  without any weight file.
* sample_texts: seeded texts: empty, whitespace, very short, unicode, long.
"""
import importlib.util
import os
import random
import sys

import numpy as np

MASK64 = (1 << 64) - 1


def default_minilm():
    """The MiniLM asset folder in memskill's cache (scripts/fetch-assets.sh minilm)."""
    cache = os.environ.get("MEMSKILL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "memskill")
    return os.path.join(cache, "assets", "all-MiniLM-L6-v2")


def load_reference_module(ref, relpath, name):
    path = f"{ref}/{relpath}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode("utf-8"):
        h ^= b
        h = (h * 0x100000001B3) & MASK64
    return h


def splitmix64(x):
    """Vectorised splitmix64 finaliser over a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def formula_tensor(name, shape):
    """u in [-1, 1) with 24 random bits per element (exact in f32): weights = 0.08 u, and
    1 + 0.1 u for norm weights (names ending in "norm.weight", any case)."""
    n = int(np.prod(shape))
    base = np.uint64(fnv1a64(name))
    with np.errstate(over="ignore"):
        idx = np.arange(n, dtype=np.uint64) + base
    bits = splitmix64(idx) >> np.uint64(40)
    u = bits.astype(np.float64) / float(1 << 24) * 2.0 - 1.0
    if name.lower().endswith("norm.weight"):
        v = 1.0 + 0.1 * u
    else:
        v = 0.08 * u
    return v.astype(np.float32).reshape(shape)


WORDS = (
    "the a memory skill span session turn Caroline Melanie adopted painted camping lake "
    "support group yesterday tomorrow Paris Rome Sweden tea coffee dog Luna fridge kids "
    "birthday 2023 May 7 pm 3:15 running marathon guitar violin book novel poem"
).split()
UNICODE = ["café", "naïve", "Zürich", "東京", "こんにちは", "안녕하세요", "Привет", "مرحبا",
           "🎉", "👍🏽", "½", "ﬁ", "e\u0301", "\u00a0", "—", "“quoted”", "שלום", "ä ö ü ß"]


def sample_texts(rng, n, long_words=(260, 700), p_long=0.25):
    out = ["", " ", "\n", "a", "ok", "Hi!", "?", "A man is eating food.", "🎉", "東京",
           "   leading and trailing   ", "tab\tand\nnewline"]
    while len(out) < n:
        kind = rng.random()
        if kind < 0.35:
            k = rng.randint(1, 12)
        elif kind < 1.0 - p_long:
            k = rng.randint(13, 120)
        else:
            k = rng.randint(*long_words)
        words = []
        for _ in range(k):
            if rng.random() < 0.08:
                words.append(rng.choice(UNICODE))
            else:
                w = rng.choice(WORDS)
                words.append(w.upper() if rng.random() < 0.05 else w)
        sep = rng.choice([" ", " ", " ", ", ", ". ", "\n"])
        out.append(sep.join(words))
    return out[:n]


def seeded(seed):
    return random.Random(seed)


def projection_signs(j, d):
    """Rademacher direction j of dimension d (+-1 from the sign bit of the hash), as the Rust
    checker builds it."""
    base = np.uint64(fnv1a64(f"proj{j}"))
    with np.errstate(over="ignore"):
        idx = np.arange(d, dtype=np.uint64) + base
    return np.where((splitmix64(idx) >> np.uint64(63)) == 1, -1.0, 1.0)


def summary(v, n_head=16, n_proj=8):
    """A compact but strong fingerprint of an embedding: its first n_head values, its norm and
    n_proj random +-1/sqrt(d) projections (a difference anywhere shows in every projection)."""
    v = np.asarray(v, dtype=np.float64)
    d = v.shape[0]
    proj = [float(np.dot(projection_signs(j, d), v) / np.sqrt(d)) for j in range(n_proj)]
    return {
        "head": [round(float(x), 8) for x in v[:n_head]],
        "norm": round(float(np.linalg.norm(v)), 8),
        "proj": [round(x, 8) for x in proj],
    }
