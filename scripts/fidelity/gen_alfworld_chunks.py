#!/usr/bin/env python3
"""Differential fixture `alfworld_chunks`: the reference's ALFWorld memory-building text on
generated games: the trajectory text of each game (alfworld_replay._build_trajectory_text) and
the packing of trajectories into chunks (data_processing.alfworld.chunk_trajectories_by_tokens,
cl100k_base; 2048 tokens in training, 512 at evaluation, 0 = one chunk per trajectory).
Usage: gen_alfworld_chunks.py --reference REF --out DIR [--cases N] [--seed S]"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refenv_data as R  # noqa: E402

RECEPTACLES = ["cabinet", "countertop", "drawer", "fridge", "microwave", "shelf", "sidetable", "sinkbasin"]
OBJECTS = ["mug", "apple", "pencil", "knife", "plate", "book", "cd", "keychain"]


def game(rng):
    obj, rec = rng.choice(OBJECTS), rng.choice(RECEPTACLES)
    intro = ("-= Welcome =-\n\nYou see a %s 1.\n\nYour task is to: put some %s on %s."
             % (rng.choice(RECEPTACLES), obj, rec))
    if rng.random() < 0.1:
        intro = "  " + intro + "\n"
    if rng.random() < 0.03:
        intro = ""
    steps = [{"action": None, "observation": intro, "reward": 0.0, "done": False}]
    n = rng.randint(0, 4)
    for k in range(n):
        r = rng.random()
        action = "" if r < 0.03 else "go to %s %d" % (rng.choice(RECEPTACLES), rng.randint(1, 4))
        if rng.random() < 0.3:
            action = "take %s %d from %s %d" % (obj, rng.randint(1, 3), rec, rng.randint(1, 3))
        obs = rng.choice(["Nothing happens.", "On the %s 1, you see a %s %d." % (rec, obj, rng.randint(1, 3)),
                          "You pick up the %s 1." % obj])
        if rng.random() < 0.15:
            obs = rng.choice(["\n", "  "]) + obs + rng.choice(["\n", " \n", ""])
        if rng.random() < 0.03:
            obs = ""
        last = k == n - 1
        done = last and rng.random() < 0.7
        reward = 1.0 if done and rng.random() < 0.85 else 0.0
        steps.append({"action": action, "observation": obs, "reward": reward, "done": done})
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=280)
    ap.add_argument("--seed", type=int, default=17)
    a = ap.parse_args()
    R.add_reference(a.reference)
    import alfworld_replay
    from src.data_processing.alfworld import chunk_trajectories_by_tokens

    rng = random.Random(a.seed)
    cases = []
    for _ in range(a.cases):
        games = [game(rng) for _ in range(rng.randint(0, 3))]
        chunk = rng.choice([0, 15, 30, 45, 60, 90, 150, 512, 2048])
        with R.quiet():
            texts = [alfworld_replay._build_trajectory_text(g) for g in games]
            chunks = chunk_trajectories_by_tokens(texts, chunk)
        # The chunks hold the texts (chunk_tokens 0: one chunk per text).
        cases.append({"input": {"games": games, "chunk_tokens": chunk},
                      "expected": {"chunks": chunks}})
    R.write_fixture(a.out, "alfworld_chunks", cases)


if __name__ == "__main__":
    main()
