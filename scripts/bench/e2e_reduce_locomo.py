"""Write a reduced LoCoMo file for scripts/bench/e2e-reference.sh: every conversation keeps its
first SESSIONS sessions (with their dates) and its first QUESTIONS questions outside category 5
(the adversarial ones neither trainer asks), so every episode of either trainer has the same
number of spans and of questions and the critical path of an update is known.

Usage: python3 e2e_reduce_locomo.py IN.json OUT.json SESSIONS QUESTIONS
"""
import json
import os
import sys


def reduce_sample(sample, sessions, questions):
    conv = sample.get("conversation")
    if not isinstance(conv, dict):
        raise ValueError(f"sample {sample.get('sample_id')!r}: no \"conversation\" object")
    kept = {k: v for k, v in conv.items() if not k.startswith("session_")}
    for i in range(1, sessions + 1):
        key = f"session_{i}"
        if key not in conv:
            raise ValueError(f"sample {sample.get('sample_id')!r} has no {key} (asked for {sessions})")
        kept[key] = conv[key]
        if f"{key}_date_time" in conv:
            kept[f"{key}_date_time"] = conv[f"{key}_date_time"]
    asked = [qa for qa in sample.get("qa", []) if str(qa.get("category", 1)) != "5"]
    if len(asked) < questions:
        raise ValueError(f"sample {sample.get('sample_id')!r} has {len(asked)} questions (asked for {questions})")
    out = dict(sample)
    out["conversation"] = kept
    out["qa"] = asked[:questions]
    return out


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__.strip().splitlines()[-1])
    src, dst, sessions, questions = argv[1], argv[2], int(argv[3]), int(argv[4])
    if sessions < 1 or questions < 1:
        sys.exit("SESSIONS and QUESTIONS must be >= 1")
    with open(src, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, list):
        sys.exit(f"{src}: expected a JSON list of LoCoMo samples")
    try:
        reduced = [reduce_sample(s, sessions, questions) for s in data]
    except ValueError as e:
        sys.exit(f"{src}: {e}")
    tmp = dst + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(reduced, f)
    os.replace(tmp, dst)


if __name__ == "__main__":
    main(sys.argv)
