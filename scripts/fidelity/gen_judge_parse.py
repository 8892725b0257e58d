#!/usr/bin/env python3
"""Differential fixture `judge_parse`: how the reference reads an LLM-judge verdict
(eval_utils.parse_judge_response: repair_json, json.loads, ["score"], float). The reference
scores a reply it cannot read as 0.0 and prints "Judge score parse failed"; such cases are
recorded as `null` (we count them as errors instead of 0). Replies are generated (seeded) in
the shapes judge models write.

    gen_judge_parse.py --reference REF --out DIR
"""
import argparse
import contextlib
import io
import json
import math
import os
import random
import sys
import types


def load(ref):
    sys.path.insert(0, os.path.abspath(ref))
    llm = types.ModuleType("llm_utils")
    llm.get_llm_response = lambda *a, **k: []
    sys.modules.setdefault("llm_utils", llm)
    from eval_utils import parse_judge_response
    return parse_judge_response


EXPL = ["The answer matches the ground truth.", "Partially correct: misses the year.",
        "Wrong person.", "It says {nested} braces", "Uses 'quotes' inside", "Mentions \\\"escaped\\\" quotes",
        "", "Très bien 🙂", "multi\\nline"]
SCORES = ["1.0", "0.5", "0.0", "1", "0", "0.7", "2", "-1", "\"1.0\"", "\"0.5\"", "true", "false", "null",
          "\"high\"", ".5", "1e0", "\"  0.5 \""]


def verdict(rng):
    e, s = rng.choice(EXPL), rng.choice(SCORES)
    obj = rng.choice([
        f'{{"explanation": "{e}", "score": {s}}}',
        f'{{\n    "explanation": "{e}",\n    "score": {s}\n}}',
        f'{{"score": {s}, "explanation": "{e}"}}',
        f"{{'explanation': '{e.replace(chr(39), '')}', 'score': {s}}}",
        f'{{"explanation": "{e}", "score": {s},}}',
        f'{{explanation: "{e}", score: {s}}}',
        f'{{"Score": {s}}}',
        f'{{"explanation": "{e}"}}',
        f'{{"result": {{"score": {s}}}}}',
    ])
    shape = rng.randrange(12)
    if shape == 0:
        return obj
    if shape == 1:
        return f"```json\n{obj}\n```"
    if shape == 2:
        return f"Here is my evaluation:\n{obj}"
    if shape == 3:
        return f"{obj}\nHope this helps."
    if shape == 4:
        return obj[: rng.randint(1, max(1, len(obj) - 1))]  # cut off
    if shape == 5:
        return f"{obj} {obj.replace('1.0', '0.0')}"
    if shape == 6:
        return rng.choice(["", "   ", "API Request Error", "score: 1", "The answer is correct.",
                           "Score = 0.5", "I cannot judge this."])
    if shape == 7:
        return f"  {obj}  \n"
    if shape == 8:
        return f"[{obj}]"
    if shape == 9:
        return f"<think>looks {rng.choice(['right', 'wrong'])}</think>\n{obj}"
    if shape == 10:
        return f"```\n{obj}\n```\nDone."
    return obj


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    parse = load(a.reference)
    rng = random.Random(a.seed)
    cases = []
    for _ in range(a.cases):
        r = verdict(rng)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            v = parse(r)
        failed = "parse failed" in buf.getvalue()
        if not failed and (math.isnan(v) or math.isinf(v)):
            continue
        cases.append({"input": {"reply": r}, "expected": {"score": None if failed else v}})
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "judge_parse.json"), "w", encoding="utf-8") as f:
        json.dump({"component": "judge_parse", "reference": "cda41f3", "tolerance": 0.0,
                   "cases": cases}, f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    main()
