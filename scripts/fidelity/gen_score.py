#!/usr/bin/env python3
"""Differential fixtures `score_locomo`, `score_hotpotqa`, `score_longmemeval`.

Generates (seeded) prediction / gold-answer pairs and scores them with the reference's own
evaluators (src/eval/{locomo,hotpotqa,longmemeval}.py, which call eval_utils.f1_score /
f1_max):
- score_locomo: batches of (prediction, answer, category 1-4) -> per-item F1
  (`get_ground_truth` + `compute_f1(prediction, ground_truth, qa)`), the per-category means and
  the overall mean, as main.py's evaluation reports them;
- score_hotpotqa: (prediction, answers) -> `compute_f1` (best stemmed F1 over the valid answers);
- score_longmemeval: (prediction, answer) -> `compute_f1` (stemmed F1; no LLM judge).

Usage: gen_score.py --reference CHECKOUT --out DIR [--seed N]
"""
import argparse
import importlib
import json
import os
import random
import sys
import types

import numpy as np


def load_reference(ref):
    sys.path.insert(0, ref)
    llm = types.ModuleType("llm_utils")
    llm.get_llm_response_via_api = lambda *a, **k: None
    llm.get_llm_response = lambda *a, **k: []
    sys.modules.setdefault("llm_utils", llm)
    # the evaluators without src/__init__.py (which imports the trainer and torch)
    pkg = types.ModuleType("ref_eval")
    pkg.__path__ = [os.path.join(ref, "src", "eval")]
    sys.modules["ref_eval"] = pkg
    ns = types.SimpleNamespace()
    loc = importlib.import_module("ref_eval.locomo").LoCoMoEvaluator(ns)
    hot = importlib.import_module("ref_eval.hotpotqa").HotpotQAEvaluator(ns)
    lme = importlib.import_module("ref_eval.longmemeval").LongMemEvalEvaluator(ns)
    return loc, hot, lme


WORDS = ("Paris London running runs ran swimming swims hiking camping the a an and of in on "
         "May June 2023 7 15th Caroline Melanie adoption agency pottery painting camp sunrise "
         "beach counseling mental health LGBTQ support group friends family cats dogs Oliver Luna "
         "yes no they are is was not mentioned information available happily relational "
         "generously connected café naïve résumé 東京 über").split()
PUNCT = [",", ".", "!", "?", ";", ":", "'", "\"", "-", "(", ")", "", "", "", ""]


def phrase(r, lo=1, hi=6):
    out = []
    for _ in range(r.randint(lo, hi)):
        w = r.choice(WORDS)
        w = r.choice([w, w, w.lower(), w.upper(), w.capitalize()])
        out.append(w + r.choice(PUNCT))
    return " ".join(out)


def answer_like(r, gold):
    """A prediction related to gold: copies, reorders, drops, adds words, or is unrelated."""
    x = r.random()
    toks = gold.split()
    if x < 0.15:
        return gold
    if x < 0.3:
        return gold.lower() + r.choice(["", ".", "!"])
    if x < 0.5 and toks:
        r.shuffle(toks)
        return " ".join(toks[: max(1, len(toks) - r.randint(0, 2))])
    if x < 0.7:
        return gold + " " + phrase(r, 1, 3)
    if x < 0.75:
        return r.choice(["API Request Error", "api request error", "", "None"])
    return phrase(r)


def multi(r):
    return ", ".join(phrase(r, 1, 3) for _ in range(r.randint(1, 4)))


def locomo_cases(r, ev, n_batches):
    cases = []
    for _ in range(n_batches):
        items = []
        for _ in range(r.randint(1, 12)):
            cat = r.randint(1, 4)
            if cat == 1:
                gold = multi(r)
                pred = r.choice([multi(r), answer_like(r, gold), gold])
            elif cat == 3:
                gold = "; ".join(phrase(r, 1, 4) for _ in range(r.randint(1, 3)))
                pred = answer_like(r, gold.split(";")[0])
            else:
                gold = phrase(r, 1, 5)
                pred = answer_like(r, gold)
            ans = gold
            if r.random() < 0.05:
                ans = r.randint(1, 3000)  # numeric gold answers exist in LoCoMo
                pred = str(ans) if r.random() < 0.5 else pred
            items.append({"prediction": pred, "answer": ans, "category": cat})
        f1s, by_cat = [], {}
        for it in items:
            qa = {"question": "q", "answer": it["answer"], "category": it["category"]}
            gt = ev.get_ground_truth(qa)
            f1 = float(ev.compute_f1(it["prediction"], gt, qa))
            f1s.append(f1)
            by_cat.setdefault(it["category"], []).append(f1)
        expected = {
            "f1": f1s,
            "by_category": {str(c): float(np.mean(v)) for c, v in sorted(by_cat.items())},
            "overall": float(np.mean(f1s)),
        }
        cases.append({"input": {"items": items}, "expected": expected})
    return cases


def hotpot_cases(r, ev, n):
    cases = []
    for _ in range(n):
        kind = r.random()
        if kind < 0.2:
            golds = [r.choice(["yes", "no", "Yes", "No"])]
            pred = r.choice(["yes", "no", "Yes, they are", "No, it is not", "yes.", "They are both yes"])
        else:
            golds = [phrase(r, 1, 4) for _ in range(r.choice([1, 1, 1, 2, 3]))]
            if r.random() < 0.1:
                golds.append("")
            pred = answer_like(r, r.choice([g for g in golds if g] or ["x"]))
        pred = pred.strip()
        qa = {"question": "q", "answers": golds} if r.random() < 0.8 else {"question": "q", "answer": golds[0]}
        gt = ev.get_ground_truth(qa)
        f1 = float(ev.compute_f1(pred, gt, qa))
        # the valid answers the reference compares against, in its order
        valid = list(gt) if isinstance(gt, list) else ([gt] if gt else [])
        for a in qa.get("answers", []) or []:
            if a and a not in valid:
                valid.append(a)
        cases.append({"input": {"prediction": pred, "answers": valid}, "expected": {"f1": f1}})
    return cases


def lme_cases(r, ev, n):
    cases = []
    for _ in range(n):
        gold = phrase(r, 1, 8)
        if r.random() < 0.1:
            gold = str(r.randint(1, 100))
        pred = answer_like(r, gold)
        qa = {"question": "q", "answer": gold}
        gt = ev.get_ground_truth(qa)
        cases.append({"input": {"prediction": pred, "answer": gold},
                      "expected": {"f1": float(ev.compute_f1(pred, gt, qa))}})
    return cases


def write(out, component, cases, tol):
    with open(os.path.join(out, f"{component}.json"), "w", encoding="utf-8") as f:
        json.dump({"component": component, "reference": "cda41f3", "tolerance": tol, "cases": cases},
                  f, ensure_ascii=False, separators=(",", ":"))
    print(f"{component}: {len(cases)} cases", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args()
    loc, hot, lme = load_reference(os.path.abspath(args.reference))
    r = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    write(args.out, "score_locomo", locomo_cases(r, loc, 300), 1e-12)
    write(args.out, "score_hotpotqa", hotpot_cases(r, hot, 400), 1e-12)
    write(args.out, "score_longmemeval", lme_cases(r, lme, 400), 1e-12)


if __name__ == "__main__":
    main()
