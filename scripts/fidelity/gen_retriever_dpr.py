#!/usr/bin/env python3
"""Differential fixture `retriever_dpr`: question-side memory retrieval with the reference's
`--retriever dpr` (its context encoder embeds the memories, its query encoder the question,
then MemoryBank.retrieve) against ours (memory.retriever = "dpr"). Tiny formula-weight encoders
with the real layout and tokenizer: scripts/fidelity/_retriever_common.py says how.

Usage: gen_retriever_dpr.py --reference REF --out DIR [--minilm DIR] [--cases N] [--seed N]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _retriever_common import gen_main  # noqa: E402

if __name__ == "__main__":
    gen_main("dpr")
