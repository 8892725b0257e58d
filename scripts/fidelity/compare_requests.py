#!/usr/bin/env python3
"""Compare the chat requests two trainers sent (two `memskill llm serve-scripted --record`
logs; scripts/fidelity/requests.sh), role by role.

Each request's role is the prompt template whose longest literal run of text its messages
contain (read from the prompts folder given, as scripts/fidelity/reference-prompts.sh writes
it: executor, answer.locomo, judge, ...); requests of no template are `other` (the designer's,
whose prompts are not rendered from that folder). Requests of a role are compared as multisets
(the two trainers issue concurrent requests in different orders): a request counts as
identical when its whole body is, except `model` (each side names its own) and the order of the
selected skills in an executor prompt (`[Skill N] name` blocks: the order in which each
controller drew them, from its own random stream; the blocks are sorted by name and renumbered
on both sides before comparing, and the count of requests so reordered is printed). For each role it
prints requests sent by each side, identical pairs, and for the rest the fields that differ
and the first differing position of the messages, so every difference can be explained.
Numbers compare as numbers (0 and 0.0 are the same). Exit status 1 when any request differs.

usage: compare_requests.py A.jsonl B.jsonl --prompts DIR [--names A,B] [--show N]
"""
import argparse
import json
import os
import re
import sys
from collections import Counter, defaultdict

IGNORED = {"model"}


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["body"] for line in f if line.strip()]


def openings(prompts):
    """(role, marker) for every user template of the folder: its longest literal run of text
    (between template tags), which a request rendered from it contains."""
    out = []
    for name in sorted(os.listdir(prompts)):
        if not name.endswith(".user.j2"):
            continue
        text = open(os.path.join(prompts, name), encoding="utf-8").read()
        text = re.sub(r"\{#.*?#\}", "", text, flags=re.S)
        text = text.replace("{% raw %}", "").replace("{% endraw %}", "")
        runs = re.split(r"\{\{.*?\}\}|\{%.*?%\}", text, flags=re.S)
        marker = max(runs, key=len).strip()
        if len(marker) >= 12:
            out.append((name[: -len(".user.j2")], marker))
    return sorted(out, key=lambda rm: -len(rm[1]))


def role_of(body, opens):
    msgs = body.get("messages") if isinstance(body, dict) else None
    if not msgs:
        return "not a chat request"
    text = "\n".join(m.get("content") or "" for m in msgs)
    for role, marker in opens:
        if marker in text:
            return role
    return "other"


SKILL = re.compile(r"\[Skill \d+\] ")


def canonical_text(text):
    """The `[Skill N] name` blocks of a prompt sorted by name and renumbered (blocks are
    separated by one blank line; the last ends at the next blank line)."""
    starts = [m.start() for m in SKILL.finditer(text)]
    if len(starts) < 2:
        return text
    end = text.find("\n\n", starts[-1])
    end = len(text) if end < 0 else end
    parts = text[starts[0]:end].split("\n\n")
    if len(parts) != len(starts):
        return text  # a block with a blank line inside: left as it is
    parts = sorted(SKILL.sub("", p, count=1) for p in parts)
    blocks = "\n\n".join(f"[Skill {i + 1}] {p}" for i, p in enumerate(parts))
    return text[:starts[0]] + blocks + text[end:]


def canonical(body):
    if not isinstance(body, dict) or not body.get("messages"):
        return body
    msgs = [dict(m, content=canonical_text(m.get("content") or "")) for m in body["messages"]]
    return dict(body, messages=msgs)


def numbers_as_floats(v):
    """2048 and 2048.0 (or 0 and 0.0) are the same request value on the wire."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, dict):
        return {k: numbers_as_floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [numbers_as_floats(x) for x in v]
    return v


def key(body):
    if not isinstance(body, dict):
        return json.dumps(body)
    return json.dumps({k: v for k, v in body.items() if k not in IGNORED}, sort_keys=True,
                      ensure_ascii=False)


def first_difference(a, b):
    """Where two request bodies first differ, in words."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return "not both JSON objects"
    fields = sorted(k for k in set(a) | set(b) if k not in IGNORED and k != "messages"
                    and a.get(k) != b.get(k))
    parts = [f"{k}: {a.get(k)!r} vs {b.get(k)!r}" for k in fields]
    ma, mb = a.get("messages") or [], b.get("messages") or []
    if len(ma) != len(mb):
        parts.append(f"{len(ma)} vs {len(mb)} messages")
    for i, (x, y) in enumerate(zip(ma, mb)):
        if x.get("role") != y.get("role"):
            parts.append(f"message {i}: role {x.get('role')} vs {y.get('role')}")
        cx, cy = x.get("content") or "", y.get("content") or ""
        if cx != cy:
            n = next((j for j, (p, q) in enumerate(zip(cx, cy)) if p != q), min(len(cx), len(cy)))
            parts.append(f"message {i} differs at character {n}: {cx[max(0, n - 60):n + 60]!r} "
                         f"vs {cy[max(0, n - 60):n + 60]!r}")
            break
    return "; ".join(parts) or "identical apart from ignored fields"


def nearest(body, pool):
    """The body of `pool` sharing the longest common prefix of the first message."""
    def first(b):
        m = (b.get("messages") or [{}]) if isinstance(b, dict) else [{}]
        return m[-1].get("content") or ""
    t = first(body)

    def common(b):
        u = first(b)
        return next((j for j, (p, q) in enumerate(zip(t, u)) if p != q), min(len(t), len(u)))
    return max(pool, key=common) if pool else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--prompts", required=True)
    ap.add_argument("--names", default="reference,memskill")
    ap.add_argument("--show", type=int, default=3)
    o = ap.parse_args()
    na, nb = o.names.split(",")
    opens = openings(o.prompts)
    by_role = defaultdict(lambda: ([], []))
    reordered = [0, 0]
    for side, path in ((0, o.a), (1, o.b)):
        for body in load(path):
            c = numbers_as_floats(canonical(body))
            reordered[side] += c != body
            by_role[role_of(c, opens)][side].append(c)
    differing = 0
    print(f"| role | sent by {na} | sent by {nb} | identical | differing |")
    print("|---|---:|---:|---:|---:|")
    details = []
    for role in sorted(by_role):
        xs, ys = by_role[role]
        cy = Counter(key(y) for y in ys)
        same, left = 0, []
        for x in xs:
            k = key(x)
            if cy[k] > 0:
                cy[k] -= 1
                same += 1
            else:
                left.append(x)
        right = []  # the other side's unmatched requests
        for y in ys:
            if cy[key(y)] > 0:
                cy[key(y)] -= 1
                right.append(y)
        print(f"| {role} | {len(xs)} | {len(ys)} | {same} | {len(xs) - same} / {len(ys) - same} |")
        differing += len(xs) - same + len(ys) - same
        for x in left[: o.show]:
            y = nearest(x, right or ys)
            details.append(f"{role}: {first_difference(x, y) if y is not None else f'only {na} sent it'}")
    print(f"\nskill blocks reordered before comparing: {reordered[0]} requests of {na}, "
          f"{reordered[1]} of {nb}")
    if details:
        print("\nfirst differences (each unmatched request against the nearest of the other side):")
        for d in details:
            print(f"- {d}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
