#!/usr/bin/env python3
"""Differential fixture `parse_actions`: executor replies -> the reference's parsed results.

Generates (seeded) executor replies of many shapes: well-formed action blocks, case / spacing /
separator variations, code fences, negative and out-of-range indices, trailing REASONING lines,
one-line and bare-kind forms, JSON with and without repairs needed, garbage. Runs the reference
executor's own reply parser on each and records the results as
[action_type, success, memory_index, memory_content].

Usage: gen_parse_actions.py --reference CHECKOUT --out DIR [--seed N] [--cases N]
"""
import argparse
import contextlib
import io
import json
import os
import random
import sys
import types


def load_reference(ref):
    sys.path.insert(0, ref)
    sys.path.insert(0, os.path.join(ref, "src"))
    # the parser needs neither an LLM client nor a retriever: stub those modules
    llm = types.ModuleType("llm_utils")
    llm.get_llm_response_via_api = lambda *a, **k: None
    llm.get_llm_response = lambda *a, **k: []
    rag = types.ModuleType("rag_utils")
    rag.get_embeddings = lambda *a, **k: []
    sys.modules.setdefault("llm_utils", llm)
    sys.modules.setdefault("rag_utils", rag)
    import importlib.util

    spec = importlib.util.spec_from_file_location("ref_executor", os.path.join(ref, "src", "executor.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import logging

    logging.getLogger("AgenticMemory").disabled = True
    return mod.Executor(types.SimpleNamespace(retriever="contriever"))


FACTS = [
    "Alice moved to Paris in May 2023.",
    "Bob likes green tea",
    "Carol adopted a cat named Miso; she calls it Mimi",
    "Dave's sister works at a bank, in Lyon",
    "The transaction was approved on 3 June",
    "Eve has a vivid memory of her first concert",
    "Frank is content with his new job",
    "Grace's favourite dish is crème brûlée",
    "Heidi visited 北京 last spring 🎉",
    "Ivan plays chess every Tuesday,",
    "Judy ran 10 km; new personal best;",
    "Mallory said: \"I'll be back\"",
    "Oscar wants to update his resume",
    "Peggy deleted her old account",
    "Trent's memory item list is long",
    "Victor has 2 kids (ages 4 and 7)",
    "Walter: no action needed here",
    "the user prefers short answers",
]
KINDS = ["INSERT", "UPDATE", "DELETE", "NOOP"]


def case_word(r, w):
    return r.choice([w, w.lower(), w.capitalize(), w.upper()])


def sep(r):
    return r.choice([": ", ":", " : ", " = ", "=", " - ", " ", ":  "])


def key(r, k):
    k = case_word(r, k)
    if r.random() < 0.15:
        k = k.replace("_", " ")
    return k


def block(r, kind, n):
    a = f"{case_word(r, 'ACTION')}{sep(r)}{case_word(r, kind)}"
    lines = [a]
    if kind == "INSERT":
        for _ in range(r.choice([1, 1, 1, 2])):
            lines.append(f"{key(r, 'MEMORY_ITEM')}{sep(r)}{r.choice(FACTS)}")
    elif kind == "UPDATE":
        for _ in range(r.choice([1, 1, 1, 2])):
            lines.append(f"{key(r, 'MEMORY_INDEX')}{sep(r)}{index(r, n)}")
            lines.append(f"{key(r, 'UPDATED_MEMORY')}{sep(r)}{r.choice(FACTS)}")
    elif kind == "DELETE":
        for _ in range(r.choice([1, 1, 2])):
            lines.append(f"{key(r, 'MEMORY_INDEX')}{sep(r)}{index(r, n)}")
    if r.random() < 0.25:
        lines.append(f"{case_word(r, 'REASONING')}{sep(r)}{r.choice(['stated in turn 3', 'new fact', 'duplicate of memory 1', 'no change'])}")
    return "\n".join(lines)


def index(r, n):
    x = r.random()
    if x < 0.6:
        return str(r.randrange(0, max(n, 1)))
    if x < 0.7:
        return str(n + r.randrange(0, 3))
    if x < 0.8:
        return f"-{r.randrange(0, 4)}"
    if x < 0.9:
        return f"{r.randrange(0, max(n, 1))} (duplicate of {r.randrange(0, 5)})"
    return r.choice(["[1]", "#2", "one", "1, 2", " 0", "٣"])


def well_formed(r, n):
    blocks = [block(r, r.choice(KINDS), n) for _ in range(r.randint(1, 4))]
    return r.choice(["\n\n", "\n", "\n\n\n"]).join(blocks)


def fenced(r, n):
    body = well_formed(r, n)
    tag = r.choice(["", "json", "text", "python", "JSON "])
    tail = r.choice(["\n```", "\n```\nDone.", "\n```\n```extra```"])
    return f"```{tag}\n{body}{tail}"


def decorated(r, n):
    kind = r.choice(KINDS)
    b = block(r, kind, n).split("\n")
    style = r.randrange(5)
    if style == 0:
        b[0] = b[0].replace("ACTION", "**ACTION**").replace("action", "**action**")
    elif style == 1:
        b = ["- " + l for l in b]
    elif style == 2:
        b = ["1. " + b[0]] + b[1:]
    elif style == 3:
        b = [f"{kind.capitalize()} block:"] + b
    else:
        b[0] = "### " + b[0]
    return "\n".join(b)


def one_line(r, n):
    kind = r.choice(KINDS)
    if kind == "INSERT":
        return f"ACTION: INSERT, MEMORY_ITEM: {r.choice(FACTS)}"
    if kind == "UPDATE":
        return f"ACTION: UPDATE, MEMORY_INDEX: {index(r, n)}, UPDATED_MEMORY: {r.choice(FACTS)}"
    if kind == "DELETE":
        return f"ACTION: DELETE; MEMORY_INDEX: {index(r, n)}"
    return "ACTION: NOOP, REASONING: nothing new"


def bare_kind(r, n):
    kind = r.choice(KINDS)
    head = r.choice(["", "- ", "* "]) + case_word(r, kind) + r.choice(["", ":", " -", " "])
    lines = [head]
    if kind == "INSERT":
        lines.append(r.choice([f"MEMORY_ITEM: {r.choice(FACTS)}", r.choice(FACTS), f"- {r.choice(FACTS)}\n2. {r.choice(FACTS)}"]))
    elif kind == "UPDATE":
        lines += [f"MEMORY_INDEX: {index(r, n)}", f"UPDATED_MEMORY: {r.choice(FACTS)}"]
    elif kind == "DELETE":
        lines.append(f"MEMORY_INDEX: {index(r, n)}")
    out = "\n".join(lines)
    if r.random() < 0.3:
        out += "\n\n" + bare_kind(r, n)
    return out


def insert_without_item(r, n):
    facts = r.sample(FACTS, r.randint(0, 3))
    pre = r.choice(["", "Insert block:\n", "INSERT block\n"])
    body = "\n".join(r.choice(["", "- ", "* ", "• ", "1. ", "12. "]) + f for f in facts)
    return f"{pre}ACTION: INSERT\n{body}"


def multiline_item(r, n):
    f1, f2 = r.sample(FACTS, 2)
    return f"ACTION: INSERT\nMEMORY_ITEM: {f1}\n{f2}\n\nand more details,;\nACTION: UPDATE\nMEMORY_INDEX: {index(r, n)}\nUPDATED_MEMORY: {f2}\n  continued here ;"


def mismatched_update(r, n):
    idx = "\n".join(f"MEMORY_INDEX: {index(r, n)}" for _ in range(r.randint(0, 3)))
    upd = "\n".join(f"UPDATED_MEMORY: {r.choice(FACTS)}" for _ in range(r.randint(0, 3)))
    item = f"MEMORY_ITEM: {r.choice(FACTS)}" if r.random() < 0.3 else ""
    return f"ACTION: UPDATE\n{idx}\n{upd}\n{item}".strip()


def json_item(r, n, keys_ok=True):
    kind = r.choice(KINDS + ["insert", "Update", "remove", None])
    d = {}
    if kind is not None:
        d[r.choice(["action", "ACTION"]) if keys_ok else r.choice(["type", "op"])] = kind
    k = (kind or "").upper()
    if k == "INSERT":
        d[r.choice(["memory_item", "MEMORY_ITEM"]) if keys_ok else "content"] = r.choice(FACTS + ["", None, 42, 3.5, True])
    if k in ("UPDATE", "DELETE"):
        d[r.choice(["memory_index", "MEMORY_INDEX"]) if keys_ok else "index"] = r.choice(
            [r.randrange(0, n + 2), str(r.randrange(0, n + 2)), -1, 1.7, True, None, "x", " 2 "])
    if k == "UPDATE":
        d[r.choice(["updated_memory", "UPDATED_MEMORY"])] = r.choice(FACTS + [""])
    if r.random() < 0.3:
        d["reasoning"] = "because"
    return d


def json_reply(r, n):
    items = [json_item(r, n, keys_ok=r.random() < 0.85) for _ in range(r.randint(1, 3))]
    shape = r.randrange(3)
    data = {"actions": items} if shape == 0 else (items if shape == 1 else items[0])
    text = json.dumps(data, ensure_ascii=r.random() < 0.5, indent=r.choice([None, 2]))
    wrap = r.randrange(4)
    if wrap == 1:
        text = f"```json\n{text}\n```"
    elif wrap == 2:
        text = f"Here are the actions:\n{text}\nDone."
    elif wrap == 3:
        text = f"```\n{text}\n```"
    return text


def json_needing_repair(r, n):
    items = [json_item(r, n) for _ in range(r.randint(1, 3))]
    text = json.dumps({"actions": items} if r.random() < 0.6 else items[0])
    fix = r.randrange(7)
    if fix == 0:  # trailing commas
        text = text.replace("}", ",}").replace("]", ",]")
    elif fix == 1:  # single quotes
        text = text.replace('"', "'")
    elif fix == 2:  # Python literals
        text = text.replace("true", "True").replace("null", "None").replace("false", "False")
    elif fix == 3:  # unquoted keys
        for k in ["actions", "action", "memory_item", "memory_index", "updated_memory", "reasoning"]:
            text = text.replace(f'"{k}":', f"{k}:")
    elif fix == 4:  # comments
        text = text.replace(", ", ", // note\n", 1)
    elif fix == 5:  # an unclosed inner list
        text = text.replace("]", "", 1)
    else:  # two objects one after the other
        text = json.dumps(items[0]) + "\n" + json.dumps(json_item(r, n))
    return r.choice(["", "Output:\n", "```json\n"]) + text + r.choice(["", "\n```", " thanks"])


def garbage(r, n):
    pick = r.randrange(8)
    if pick == 0:
        return ""
    if pick == 1:
        return r.choice(["  \n ", "I don't know what to do.", "No changes needed.", "None"])
    if pick == 2:
        return "".join(r.choice("{}[]:,\"' \nabcACTION_-=") for _ in range(r.randint(1, 60)))
    if pick == 3:
        return "{not json at all}"
    if pick == 4:
        return "The transaction: update pending\nMEMORY_INDEX: 1"
    if pick == 5:
        return "ACTION: JUMP\nMEMORY_ITEM: x"
    if pick == 6:
        return "Action items:\n- buy milk\n- call Bob"
    return "".join(chr(r.randrange(32, 0x3000)) for _ in range(r.randint(1, 40)))


def tricky_text(r, n):
    f = r.choice(["The transaction was approved", "Eve is contented", "I have a good memory item here",
                  "Next action: delete the draft", "content creators meet on Fridays",
                  "She said memory_index: 2 matters"])
    return f"ACTION: INSERT\nMEMORY_ITEM: {f}"


# the replies of issue 11 fix 8, always included first
FIXED = [
    "ACTION: DELETE\nMEMORY_INDEX: -1",
    "ACTION: DELETE\nMEMORY_INDEX -1",
    "ACTION: DELETE\nMEMORY_INDEX: 3 (duplicate of 1)",
    "ACTION: INSERT\nMEMORY_ITEM: Alice likes tea.\nREASONING: stated in turn 3",
    "ACTION: UPDATE\nMEMORY_INDEX: 0\nUPDATED_MEMORY: Bob is 31.\nREASONING: birthday",
    "INSERT\nMEMORY_ITEM: Carol adopted a cat.",
    "ACTION: INSERT, MEMORY_ITEM: Dave plays chess.",
    '{"actions": [{"action": "INSERT", "memory_item": "Eve runs."},]}',
    '{"action": "insert", "content": "A"}',
    # json-repair specifics: a repeated structure replaces the previous object; apostrophes
    '{"action": "INSERT", "memory_item": "A"}\n{"action": "INSERT", "memory_item": "B"}',
    '{"action": "INSERT", "memory_item": "A"}, {"action": "INSERT", "memory_item": "B"}',
    '{"action": "NOOP"} and {"action": "DELETE", "memory_index": 0}',
    "{'action': 'INSERT', 'memory_item': 'Dave's sister works at a bank, in Lyon', 'reasoning': 'x'}",
]

GENERATORS = [
    (well_formed, 160), (fenced, 40), (decorated, 50), (one_line, 40), (bare_kind, 50),
    (insert_without_item, 25), (multiline_item, 20), (mismatched_update, 25),
    (json_reply, 60), (json_needing_repair, 70), (garbage, 45), (tricky_text, 20),
]


def crlf(r, text):
    return text.replace("\n", "\r\n") if r.random() < 0.08 else text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--scale", type=int, default=1, help="cases per generator x SCALE (stress runs)")
    args = ap.parse_args()
    ex = load_reference(os.path.abspath(args.reference))
    r = random.Random(args.seed)
    cases = []
    for text in FIXED:
        with contextlib.redirect_stdout(io.StringIO()):
            results = ex._parse_response(text, 5)
        expected = [[x.action_type, bool(x.success), int(x.memory_index), x.memory_content] for x in results]
        cases.append({"input": {"text": text, "n_retrieved": 5, "kind": "issue-11"}, "expected": expected})
    for gen, count in GENERATORS:
        for _ in range(count * args.scale):
            n = r.randrange(0, 7)
            text = crlf(r, gen(r, n))
            if r.random() < 0.1:
                text = "  \n" + text + "\n\n "
            with contextlib.redirect_stdout(io.StringIO()):
                results = ex._parse_response(text, n)
            expected = [[x.action_type, bool(x.success), int(x.memory_index), x.memory_content] for x in results]
            cases.append({"input": {"text": text, "n_retrieved": n, "kind": gen.__name__}, "expected": expected})
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "parse_actions.json"), "w", encoding="utf-8") as f:
        json.dump({"component": "parse_actions", "reference": "cda41f3", "tolerance": 0.0, "cases": cases},
                  f, ensure_ascii=False, separators=(",", ":"))
    print(f"parse_actions: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
