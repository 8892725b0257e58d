#!/usr/bin/env python3
"""Differential fixture `answer_extraction`: what the reference keeps of an answer reply.

LoCoMo / LongMemEval keep `response.strip()`; HotpotQA keeps
`HotpotQAEvaluator._extract_answer(response.strip())` (main.py / trainer.py), and its F1 is
computed on `_extract_answer` of that again (HotpotQAEvaluator.compute_f1). Replies are
generated (seeded) in the shapes answer models write.

    gen_answer_extraction.py --reference REF --out DIR
"""
import argparse
import json
import os
import random
import sys
import types


def load(ref):
    sys.path.insert(0, os.path.abspath(ref))
    if "src" not in sys.modules:
        pkg = types.ModuleType("src")
        pkg.__path__ = [os.path.join(os.path.abspath(ref), "src")]
        sys.modules["src"] = pkg
    from src.eval.hotpotqa import HotpotQAEvaluator
    return HotpotQAEvaluator(types.SimpleNamespace())


WORDS = ["Paris", "the Beatles", "yes", "no", "1987", "7 May 2023", "John Smith", "New York City",
         "Answer", "answer", "ANSWER", "short answer", "The answer is", "because", "hmm", "é", "🙂"]


def reply(rng):
    ans = rng.choice(WORDS)
    ws = lambda: rng.choice(["", " ", "  ", "\n", "\n\n", "\t", " \n "])
    shapes = [
        lambda: f"{ws()}{ans}{ws()}",
        lambda: f"<answer>{ws()}{ans}{ws()}</answer>",
        lambda: f"Reasoning: {rng.choice(WORDS)} then {rng.choice(WORDS)}.\n<answer>{ans}</answer>",
        lambda: f"<ANSWER>{ans}</Answer> and <answer>{rng.choice(WORDS)}</answer>",
        lambda: f"<answer>\n{ans}\n{rng.choice(WORDS)}\n</answer>",
        lambda: f"<answer>{ans}",  # cut off before the closing tag
        lambda: f"Answer: {ans}\nExplanation: {rng.choice(WORDS)}",
        lambda: f"Short answer: {ans}",
        lambda: f"short ANSWER:{ws()}{ans}",
        lambda: f"The answer is {ans}.",
        lambda: f"I think the answer: {ans}\nmore",
        lambda: f"Let me think.\nFinal answer: {ans}",
        lambda: f"Answer:\n\n{ans}",
        lambda: f"**Answer:** {ans}",
        lambda: f"{rng.choice(WORDS)}\n{ans}",
        lambda: "",
        lambda: f"<answer>Answer: {ans}</answer>",
        lambda: f"<answer></answer> Answer: {ans}",
        lambda: f"Answer: <answer>{ans}</answer>",
    ]
    return rng.choice(shapes)()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    hp = load(a.reference)
    rng = random.Random(a.seed)
    cases = []
    for _ in range(a.cases):
        style = rng.choice(["locomo", "longmemeval", "hotpotqa", "hotpotqa"])
        r = reply(rng)
        pred = r.strip()
        f1_text = pred
        if style == "hotpotqa":
            pred = hp._extract_answer(pred)
            f1_text = hp._extract_answer(pred)
        cases.append({"input": {"style": style, "reply": r},
                      "expected": {"prediction": pred, "f1_text": f1_text}})
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "answer_extraction.json"), "w", encoding="utf-8") as f:
        json.dump({"component": "answer_extraction", "reference": "cda41f3", "tolerance": 0.0,
                   "cases": cases}, f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    main()
