"""Shared setup of the dataset/ALFWorld differential generators (gen_segment_*.py,
gen_split_longmemeval.py, gen_alfworld_*.py): puts the reference checkout on sys.path with
stand-ins for the packages its modules import at top level but these checks never call
(textworld, alfworld, wandb), makes tiktoken's cl100k_base available offline, and writes
fixture files. Imports the reference at run time; contains none of its code."""
import contextlib
import glob
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import types

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def setup_tiktoken():
    """tiktoken downloads cl100k_base on first use; offline, use the copy that ships inside the
    tiktoken-rs crate sources (same file; tiktoken checks its sha256)."""
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "memskill-tiktoken")
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    target = os.path.join(cache, hashlib.sha1(CL100K_URL.encode()).hexdigest())
    if os.path.exists(target):
        return
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    found = sorted(glob.glob(os.path.join(home, "registry/src/*/tiktoken-rs-*/assets/cl100k_base.tiktoken")))
    if found:
        os.makedirs(cache, exist_ok=True)
        shutil.copy(found[-1], target)


def add_reference(ref):
    setup_tiktoken()
    ref = os.path.abspath(ref)
    if ref not in sys.path:
        sys.path.insert(0, ref)
    for name in ["textworld", "textworld.gym", "alfworld", "alfworld.agents",
                 "alfworld.agents.environment", "alfworld.agents.environment.alfred_tw_env",
                 "alfworld.info", "wandb"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    env = sys.modules["alfworld.agents.environment.alfred_tw_env"]
    for attr in ["AlfredDemangler", "AlfredInfos", "AlfredExpert", "AlfredExpertType"]:
        if not hasattr(env, attr):
            setattr(env, attr, type(attr, (), {}))
    if not hasattr(sys.modules["alfworld.info"], "ALFWORLD_DATA"):
        sys.modules["alfworld.info"].ALFWORLD_DATA = ""
    return ref


@contextlib.contextmanager
def quiet():
    """The reference prints progress lines; keep them out of the generator's output."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def write_fixture(out, component, cases, tolerance=0.0):
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, component + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"component": component, "reference": "cda41f3", "tolerance": tolerance,
                   "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))
    print("%s: %d cases, %d bytes" % (path, len(cases), os.path.getsize(path)), file=sys.stderr)


# Generated text material (no dataset text): words, names, and characters that stress BPE
# windows (multi-byte letters, emoji, CJK, odd whitespace).
WORDS = ("the a of to and in we our my your trip park dinner sister painting guitar "
         "yesterday tomorrow really loved amazing concert museum photo dog cat recipe garden "
         "job interview Paris Tokyo 2023 May 7pm 10:30 running marathon book club volunteer "
         "café naïve résumé Zoë Ångström straße über").split()
EXOTIC = ["🙂", "🎉", "👍🏽", "漢字", "東京", "데이터", "Привет", "ñ", "—", "…", "“quoted”",
          "\u00a0", "\t", "  ", "\u2028", "\x1c", "e\u0301"]
NAMES = ["Caroline", "Melanie", "Jon", "Gina", "Ava", "Noah", "Ibrahim", "Zoë", "李雷"]


def sentence(rng, n_min=3, n_max=18, exotic=0.08):
    out = []
    for _ in range(rng.randint(n_min, n_max)):
        out.append(rng.choice(EXOTIC) if rng.random() < exotic else rng.choice(WORDS))
    s = " ".join(out)
    return s[0].upper() + s[1:] + rng.choice([".", "!", "?", "", "..."])


def paragraph(rng, n_min=1, n_max=6, exotic=0.08):
    sep = rng.choice([" ", "\n", "\n\n", "  "])
    return sep.join(sentence(rng, exotic=exotic) for _ in range(rng.randint(n_min, n_max)))
