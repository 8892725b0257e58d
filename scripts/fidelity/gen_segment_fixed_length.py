#!/usr/bin/env python3
"""Differential fixture `segment_fixed_length`: the reference's fixed-length chunking with its
tokenizer (tiktoken cl100k_base): `_split_fixed_length` on generated texts, and whole
`extract_chunks(..., chunk_mode="fixed-length")` of generated HotpotQA long-context records
(windows over the whole context), LoCoMo conversations and LongMemEval questions (windows per
session, date header on every window). Window sizes include the evaluation's 512/64.
Usage: gen_segment_fixed_length.py --reference REF --out DIR [--cases N] [--seed S]"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refenv_data as R  # noqa: E402
from gen_segment_full_session import locomo_record, lme_record  # noqa: E402


def text(rng, exotic):
    t = R.paragraph(rng, 1, 3, exotic=exotic)
    if rng.random() < 0.2:
        t = rng.choice([" ", "\n", "  \n", "\t"]) + t + rng.choice([" ", "\n\n", ""])
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=280)
    ap.add_argument("--big", type=int, default=6, help="cases with 512/64 windows")
    ap.add_argument("--seed", type=int, default=23)
    a = ap.parse_args()
    R.add_reference(a.reference)
    from src.data_processing.locomo import LoCoMoProcessor
    from src.data_processing.longmemeval import LongMemEvalProcessor
    from src.data_processing.hotpotqa import HotpotQAProcessor

    rng = random.Random(a.seed)
    cases = []
    for i in range(a.cases + a.big):
        big = i >= a.cases
        if big:
            tokens, overlap = 512, 64
        else:
            tokens = rng.choice([3, 4, 6, 8, 12, 16, 24, 32, 48])
            overlap = rng.choice([0, 1, 2, tokens // 8, tokens // 4, tokens // 2, tokens - 1])
        kind = rng.choice(["text"] * 9 + ["hotpotqa"] * 4 + ["locomo"] * 3 + ["longmemeval"] * 4)
        if big:
            kind = rng.choice(["text", "hotpotqa"])
        elif kind in ("locomo", "longmemeval"):
            tokens = rng.choice([12, 16, 24, 32])
            overlap = rng.choice([0, 1, tokens // 4, tokens // 2, tokens - 1])
        exotic = rng.choice([0.0, 0.05, 0.3])
        if kind == "text":
            t = text(rng, exotic)
            if big:
                while len(t) < 2400:
                    t += "\n" + R.paragraph(rng, 3, 8, exotic=exotic)
            proc = LoCoMoProcessor(chunk_mode="fixed-length", chunk_size=tokens, chunk_overlap=overlap)
            inp = {"kind": "text", "text": t}
            with R.quiet():
                chunks = proc._split_fixed_length(t)
        elif kind == "hotpotqa":
            n_docs = rng.randint(1, 4) if not big else rng.randint(14, 20)
            ctx = "\n".join("Document %d:\n%s\n%s" % (d + 1, R.sentence(rng, 1, 4), R.paragraph(rng, 1, 2, exotic))
                            for d in range(n_docs))
            rec = {"context": ctx, "input": "Which one?", "answers": ["x"], "num_docs": n_docs,
                   "index": i}
            proc = HotpotQAProcessor(chunk_mode="fixed-length", chunk_size=tokens, chunk_overlap=overlap)
            inp = {"kind": "hotpotqa", "record": rec}
            with R.quiet():
                chunks = proc.extract_chunks(rec)
        elif kind == "locomo":
            rec = locomo_record(rng, i)
            proc = LoCoMoProcessor(chunk_mode="fixed-length", chunk_size=tokens, chunk_overlap=overlap)
            inp = {"kind": "locomo", "record": rec}
            with R.quiet():
                chunks = proc.extract_chunks(rec)
        else:
            rec = lme_record(rng, i)
            proc = LongMemEvalProcessor(chunk_mode="fixed-length", chunk_size=tokens, chunk_overlap=overlap)
            inp = {"kind": "longmemeval", "record": rec}
            with R.quiet():
                chunks = proc.extract_chunks(rec)
        inp.update({"tokens": tokens, "overlap": overlap})
        cases.append({"input": inp, "expected": {"chunks": chunks}})
    R.write_fixture(a.out, "segment_fixed_length", cases)


if __name__ == "__main__":
    main()
