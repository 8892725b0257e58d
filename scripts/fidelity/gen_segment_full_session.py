#!/usr/bin/env python3
"""Differential fixture `segment_full_session`: the reference's span (chunk) texts of whole
sessions, turn pairs and single turns for generated LoCoMo conversations and LongMemEval
questions (LoCoMoProcessor / LongMemEvalProcessor.extract_chunks). All conversations are
generated here; no dataset text is used.
Usage: gen_segment_full_session.py --reference REF --out DIR [--cases N] [--seed S]"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refenv_data as R  # noqa: E402


def locomo_record(rng, idx):
    speakers = rng.sample(R.NAMES, 2)
    conv = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    n_sessions = rng.randint(1, 3)
    numbers = sorted(rng.sample(range(1, 7), n_sessions))  # gaps in the numbering
    for n in numbers:
        turns = []
        for j in range(rng.choice([0, 1, 2, 3, 4])):
            t = {"speaker": speakers[j % 2], "dia_id": "D%d:%d" % (n, j + 1),
                 "text": R.sentence(rng, 1, 6)}
            r = rng.random()
            if r < 0.25:
                t["blip_caption"] = "a photo of " + R.sentence(rng, 1, 3).lower().rstrip(".!?")
            elif r < 0.28:
                t["blip_caption"] = ""
            turns.append(t)
        conv["session_%d" % n] = turns
        d = rng.random()
        if d < 0.8:
            conv["session_%d_date_time" % n] = "%d:%02d pm on %d May, 2023" % (
                rng.randint(1, 12), rng.randint(0, 59), rng.randint(1, 28))
        elif d < 0.9:
            conv["session_%d_date_time" % n] = ""
    return {"sample_id": "conv-gen-%d" % idx, "conversation": conv,
            "qa": [{"question": "q?", "answer": "a", "category": 1, "evidence": []}]}


def lme_record(rng, idx):
    sessions, dates = [], []
    for _ in range(rng.randint(1, 3)):
        turns = []
        for j in range(rng.choice([0, 1, 2, 3, 4])):
            t = {"role": "user" if j % 2 == 0 else "assistant", "content": R.sentence(rng, 1, 8)}
            if rng.random() < 0.1:
                t["has_answer"] = True
            turns.append(t)
        sessions.append(turns)
        dates.append("" if rng.random() < 0.1 else "2023/05/%02d (Sat) %02d:%02d" % (
            rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)))
    return {"question_id": "gen%04d" % idx, "question_type": "single-session-user",
            "question": "What?", "answer": "x", "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_dates": dates, "haystack_sessions": sessions}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    R.add_reference(a.reference)
    from src.data_processing.locomo import LoCoMoProcessor
    from src.data_processing.longmemeval import LongMemEvalProcessor

    rng = random.Random(a.seed)
    cases = []
    for i in range(a.cases):
        dataset = "locomo" if i % 2 == 0 else "longmemeval"
        mode = rng.choice(["full-session"] * 4 + ["turn-pair", "turn"])
        if dataset == "locomo":
            rec = locomo_record(rng, i)
            proc = LoCoMoProcessor(chunk_mode=mode)
        else:
            rec = lme_record(rng, i)
            proc = LongMemEvalProcessor(chunk_mode=mode)
        with R.quiet():
            chunks = proc.extract_chunks(rec)
        cases.append({"input": {"dataset": dataset, "mode": mode, "record": rec},
                      "expected": {"chunks": chunks}})
    R.write_fixture(a.out, "segment_full_session", cases)


if __name__ == "__main__":
    main()
