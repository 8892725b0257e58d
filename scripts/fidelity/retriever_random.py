#!/usr/bin/env python3
"""Full-size random-weight DPR or DRAGON+ encoder folders, and the reference's retrieval on them.

Writes OUT/<asset folder> for the context and the query encoder, shaped as the real ones
(BERT-base: hidden 768, 12 layers, 12 heads, intermediate 3072, vocabulary 30522, 512
positions; DPR's tensors under ctx_encoder.bert_model. / question_encoder.bert_model.,
DRAGON+'s at the root), with transformers' own random initialisation (seeded), the real
bert-base-uncased tokenizer (from the MiniLM asset folder) and tokenizer_config.json as the
real repositories ship it. Then, unless --folders-only, runs the reference's own retriever code
on them (rag_utils.get_embeddings in 'context' / 'query' mode + MemoryBank.retrieve; its
from_pretrained calls for the Hub names are redirected to the folders) and writes
OUT/fixture/retriever_<kind>.json, whose cases name the folders: `memskill fidelity check
OUT/fixture` loads them the way a run does (memory.retriever_path / retriever_query_path) and
compares vectors and rankings. Texts stay under 512 tokens (the real tokenizers set no limit,
so the reference fails on longer ones; the committed tiny fixture checks truncation).

Usage: <fidelity venv>/bin/python scripts/fidelity/retriever_random.py --kind dpr|dragon
       --out OUT [--reference REF] [--cases N] [--seed N] [--minilm DIR] [--folders-only]
Then:  memskill fidelity check OUT/fixture
Or run with them: --set 'memory.retriever="dpr"' --set 'memory.retriever_path="OUT/<context>"'
       --set 'memory.retriever_query_path="OUT/<query>"'
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _encoder_common import default_minilm  # noqa: E402
from _retriever_common import (KINDS, REAL, make_cases, redirect_hub_names,  # noqa: E402
                               reference_modules, write_fixture, write_folder)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", required=True, choices=sorted(KINDS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--reference", default=os.environ.get("MEMSKILL_REFERENCE"))
    ap.add_argument("--minilm", default=default_minilm())
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--folders-only", action="store_true")
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.minilm, "tokenizer.json")):
        sys.exit(f"no BERT tokenizer in {a.minilm} (scripts/fetch-assets.sh minilm)")
    if not a.folders_only and not a.reference:
        sys.exit("--reference REF (a MemSkill checkout) is needed unless --folders-only")
    out = os.path.abspath(a.out)
    folders = {}
    for i, side in enumerate(("context", "query")):
        hub, folder, _ = KINDS[a.kind][side]
        d = os.path.join(out, folder)
        write_folder(a.kind, side, d, REAL, a.minilm, "random", seed=a.seed + i)
        folders[hub] = d
        print(f"{a.kind} {side} encoder: {d}", file=sys.stderr)
    if a.folders_only:
        return
    rag, mb_mod = reference_modules(a.reference)
    redirect_hub_names(folders)
    t0 = time.time()
    cases = make_cases(rag, mb_mod, a.kind, a.cases, a.seed, long_questions=False)
    dirs = [folders[KINDS[a.kind][s][0]] for s in ("context", "query")]
    path = os.path.join(out, "fixture", f"retriever_{a.kind}.json")
    write_fixture(path, f"retriever_{a.kind}", 1e-4, {"dirs": dirs}, cases,
                  f"full-size random-weight folders under {out}")
    print(f"{len(cases)} cases in {time.time() - t0:.0f} s: {path}\n"
          f"check: memskill fidelity check {os.path.dirname(path)}", file=sys.stderr)


if __name__ == "__main__":
    main()
