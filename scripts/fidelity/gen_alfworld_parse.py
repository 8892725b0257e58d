#!/usr/bin/env python3
"""Differential fixture `alfworld_parse`: how the reference's ALFWorld actor turns an LLM reply
into a command (alfworld_env_runner._parse_action_response) and reads the objective from the
first observation (alfworld_env_runner._extract_objective), on generated replies and
observations. Replies the reference cannot parse (it raises, e.g. a bare `Action:`) are left out.
Usage: gen_alfworld_parse.py --reference REF --out DIR [--cases N] [--seed S]"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refenv_data as R  # noqa: E402

COMMANDS = ["go to cabinet 1", "go to cabinet 10", "go to countertop 2", "take mug 1 from countertop 2",
            "open fridge 1", "close fridge 1", "put mug 1 in/on shelf 1", "look", "inventory",
            "examine sidetable 1", "use desklamp 1", "heat mug 1 with microwave 1"]


def reply(rng, adm):
    c = rng.choice(adm + ["fly to the moon", "go to cabinet 3"]) if adm else "open fridge 1"
    forms = [
        lambda: c,
        lambda: c.upper(),
        lambda: c.title(),
        lambda: "Action: " + c,
        lambda: "ACTION=" + c,
        lambda: "  action -  " + c,
        lambda: '"' + c + '"',
        lambda: "`" + c + "`",
        lambda: "'" + c + "'.",
        lambda: c + ".",
        lambda: c + "\nBecause the mug is there.",
        lambda: "I think I should " + c + " now.",
        lambda: "> " + c,
        lambda: "Thought: first look around.\n" + c,
        lambda: "",
        lambda: "   \n  ",
        lambda: R.sentence(rng, 2, 8),
        lambda: "**" + c + "**",
        lambda: c + "\r\nmore",
    ]
    return rng.choice(forms)()


def observation(rng):
    task = rng.choice(["put some mug on shelf.", "heat some egg and put it in fridge..",
                       "look at cd under the desklamp", "  clean some knife and put it in drawer. \n"])
    head = "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room."
    forms = [
        lambda: head + "\n\nYour task is to: " + task,
        lambda: head + "\n\nyour TASK is to:" + task + "\nExtra line.",
        lambda: head,
        lambda: "Your task is to:   \n\n" + task,
        lambda: "Your task is to:",
        lambda: "",
    ]
    return rng.choice(forms)()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=29)
    a = ap.parse_args()
    R.add_reference(a.reference)
    import src.alfworld_env_runner as runner

    rng = random.Random(a.seed)
    cases = []
    while len(cases) < a.cases:
        if rng.random() < 0.75:
            adm = rng.sample(COMMANDS, rng.randint(0, 7))
            r = reply(rng, adm)
            try:
                with R.quiet():
                    cmd = runner._parse_action_response(r, list(adm))
            except Exception:  # noqa: BLE001 - the reference raises on some replies
                continue
            cases.append({"input": {"kind": "reply", "reply": r, "admissible": adm},
                          "expected": {"command": cmd}})
        else:
            obs = observation(rng)
            cases.append({"input": {"kind": "objective", "observation": obs},
                          "expected": {"objective": runner._extract_objective(obs)}})
    R.write_fixture(a.out, "alfworld_parse", cases)


if __name__ == "__main__":
    main()
