#!/usr/bin/env python3
"""Builds a memskill prompt folder (`prompts.dir`) that reproduces the reference's prompts.

The reference's prompt texts are never stored in this repository: this script imports the
reference's own prompt builders from a checkout given on the command line, calls them with
sentinel values, turns the literal parts of what they return into `{% raw %}` chunks and the
sentinel positions into template expressions and loops, then renders random structured
inputs both through the templates (jinja2, the settings memskill's minijinja uses) and
through the reference's builders and fails on any byte difference.

    reference_prompts.py build  --reference REF --out DIR [--checks N] [--seed S]
    reference_prompts.py render --reference REF < input.json   (the reference's prompts of
        one structured input, as JSON, for the Rust comparison test)

Templates written (our names; each reference prompt is sent as one user message, as the
reference's llm_utils.get_llm_response_via_api does, so every system template is empty):
executor.*.j2, answer.locomo.*.j2, answer.longmemeval.*.j2, answer.hotpotqa.*.j2,
judge.*.j2.
"""
import argparse
import json
import os
import random
import sys
import types


# --------------------------------------------------------------------------- reference access

def load_reference(ref):
    """Imports the reference's prompt builders without its heavy runtime dependencies."""
    ref = os.path.abspath(ref)
    if not os.path.isfile(os.path.join(ref, "src", "executor.py")):
        sys.exit(f"reference_prompts: {ref} is not a MemSkill checkout (no src/executor.py)")
    if ref not in sys.path:
        sys.path.insert(0, ref)
    # LLM / retrieval clients are not needed to build prompts.
    llm = types.ModuleType("llm_utils")
    llm.get_llm_response_via_api = lambda *a, **k: None
    llm.get_llm_response = lambda *a, **k: []
    sys.modules.setdefault("llm_utils", llm)
    rag = types.ModuleType("rag_utils")
    rag.get_embeddings = lambda *a, **k: []
    sys.modules.setdefault("rag_utils", rag)
    try:
        import json_repair  # noqa: F401  (src/executor.py imports it at the top)
    except ImportError:
        jr = types.ModuleType("json_repair")
        jr.repair_json = lambda s, *a, **k: s
        sys.modules["json_repair"] = jr
    # the `src` package without its __init__ (which imports the whole trainer)
    if "src" not in sys.modules:
        pkg = types.ModuleType("src")
        pkg.__path__ = [os.path.join(ref, "src")]
        sys.modules["src"] = pkg
    from src.executor import Executor  # noqa: E402
    from src.eval.locomo import LoCoMoEvaluator  # noqa: E402
    from src.eval.longmemeval import LongMemEvalEvaluator  # noqa: E402
    from src.eval.hotpotqa import HotpotQAEvaluator  # noqa: E402

    args = types.SimpleNamespace(retriever="none")

    class Op:
        def __init__(self, name, description, instructions, action):
            self.name = name
            self.description = description
            self.instruction_template = instructions
            self.update_type = action

    def executor(text, memories, skills):
        ops = [Op(s["name"], s["description"], s["instructions"], s["action"]) for s in skills]
        return Executor._build_executor_prompt(None, ops, text, list(memories))

    loc, lme, hp = LoCoMoEvaluator(args), LongMemEvalEvaluator(args), HotpotQAEvaluator(args)
    return {
        "executor": executor,
        "answer.locomo": lambda question, memories, date: loc.build_prompt(question, list(memories), {"question": question}),
        "answer.longmemeval": lambda question, memories, date: lme.build_prompt(
            question, list(memories), {"question": question, "question_date": date}),
        "answer.hotpotqa": lambda question, memories, date: hp.build_prompt(question, list(memories), {"question": question}),
        "judge": lambda question, ground_truth, prediction: loc.build_judge_prompt(
            question, ground_truth, prediction, {}),
    }


# --------------------------------------------------------------------------- template making

def raw(text):
    """A literal chunk: `{% raw %}` unless it is plain enough to write as is."""
    if text == "":
        return ""
    if "{%" in text or "{{" in text or "{#" in text or "%}" in text or "}}" in text or "#}" in text:
        if "{% endraw %}" in text:
            sys.exit("reference_prompts: a literal contains '{% endraw %}'")
        return "{% raw %}" + text + "{% endraw %}"
    return text


def common_prefix(*xs):
    n = min(len(x) for x in xs)
    i = 0
    while i < n and all(x[i] == xs[0][i] for x in xs):
        i += 1
    return i


def common_suffix(*xs):
    n = min(len(x) for x in xs)
    i = 0
    while i < n and all(x[len(x) - 1 - i] == xs[0][len(xs[0]) - 1 - i] for x in xs):
        i += 1
    return i


def find_one(s, needle, what):
    i = s.find(needle)
    if i < 0 or s.find(needle, i + 1) >= 0:
        sys.exit(f"reference_prompts: {what}: sentinel {needle!r} must occur exactly once")
    return i


def index_expr(a, b, j):
    """Where chunks a (before item j) and b (before item j+1) differ by an index number:
    (prefix, value offset, suffix) with value = j + offset, or None when they are equal."""
    if a == b:
        return None
    p = common_prefix(a, b)
    q = common_suffix(a, b)
    da, db = a[p:len(a) - q], b[p:len(b) - q]
    # widen to whole digit runs
    while p > 0 and a[p - 1].isdigit():
        p -= 1
    da, db = a[p:len(a) - q], b[p:len(b) - q]
    if not (da.isdigit() and db.isdigit() and int(db) == int(da) + 1):
        sys.exit(f"reference_prompts: cannot read an item index from {a!r} / {b!r}")
    return a[:p], int(da) - j, a[len(a) - q:]


def with_index(chunk, ix, var):
    if ix is None:
        return raw(chunk)
    pre, off, post = ix
    expr = "loop.index0" if off == 0 else f"loop.index0 + {off}"
    return raw(pre) + "{{ " + expr + " }}" + raw(post)


class ListSpec:
    """A list variable: `name` in the template, items with ordered fields. Each field is
    (key, sentinel_of_item(k), template expression, optional)."""

    def __init__(self, name, fields):
        self.name = name
        self.fields = fields


def list_region(render, spec, n_items_others=2):
    """Infers the template of one list from renders with 0, 1, 2 and 3 items."""
    r = {n: render(spec.name, n) for n in range(4)}
    start = common_prefix(r[0], r[1], r[2], r[3])
    end = common_suffix(r[0], r[1], r[2], r[3])
    empty = r[0][start:len(r[0]) - end]
    body3 = r[3][start:len(r[3]) - end]
    # sentinel positions of every field of every item in the 3-item body
    pos = []
    for k in range(3):
        row = []
        for key, sent, _, _ in spec.fields:
            s = sent(k)
            row.append((find_one(body3, s, f"{spec.name}[{k}].{key}"), len(s)))
        pos.append(row)
    first = body3[:pos[0][0][0]]
    inner = []  # chunks between field j and j+1, from item 0 and item 1
    for j in range(len(spec.fields) - 1):
        c0 = body3[pos[0][j][0] + pos[0][j][1]:pos[0][j + 1][0]]
        c1 = body3[pos[1][j][0] + pos[1][j][1]:pos[1][j + 1][0]]
        inner.append((c0, index_expr(c0, c1, 0)))
    b01 = body3[pos[0][-1][0] + pos[0][-1][1]:pos[1][0][0]]
    b12 = body3[pos[1][-1][0] + pos[1][-1][1]:pos[2][0][0]]
    between_ix = index_expr(b01, b12, 1)
    last = body3[pos[2][-1][0] + pos[2][-1][1]:]
    # the first item's chunk carries the index too, when the between chunk does
    if between_ix is not None:
        pre, off, post = between_ix
        tail = str(off) + post
        if not first.endswith(tail):
            sys.exit(f"reference_prompts: {spec.name}: index of the first item not found in {first!r}")
        first_t = raw(first[:len(first) - len(tail)]) + "{{ loop.index0 + %d }}" % off + raw(post)
        first_t = first_t.replace("loop.index0 + 0 ", "loop.index0 ")
    else:
        first_t = raw(first)
    return start, end, empty, first_t, inner, between_ix, b01, last


def optional_fields(render_item_without, spec, inner, last):
    """For each optional field, whether the chunk before it or after it disappears with it."""
    conds = {}
    for j, (key, sent, _, optional) in enumerate(spec.fields):
        if not optional:
            continue
        text = render_item_without(key)  # one item, this field empty
        if j == 0:
            sys.exit("reference_prompts: the first item field cannot be optional")
        prev_sent = spec.fields[j - 1][1](0)
        a = text.find(prev_sent)
        if a < 0:
            sys.exit(f"reference_prompts: {key}: item rendered without it lost its neighbour")
        a += len(prev_sent)
        if j + 1 < len(spec.fields):
            nxt = spec.fields[j + 1][1](0)
            b = text.find(nxt)
            got = text[a:b]
            before, after = inner[j - 1][0], inner[j][0]
        else:
            got = text[a:a + len(last)] if text[a:].startswith(last) else text[a:]
            before, after = inner[j - 1][0], last
            if text[a:].startswith(last):
                got = ""
                conds[key] = "before"
                continue
        if got == after:
            conds[key] = "before"
        elif got == before:
            conds[key] = "after"
        else:
            sys.exit(f"reference_prompts: {key}: cannot tell which text goes with it ({got!r})")
    return conds


def list_template(spec, first_t, inner, between_ix, b01, last, conds):
    out = "{% for it in " + spec.name + " %}"
    out += "{% if loop.first %}" + first_t + "{% else %}" + with_index(b01, between_ix, spec.name) + "{% endif %}"
    for j, (key, _, expr, optional) in enumerate(spec.fields):
        e = expr.replace("FIELD", "it." + key)
        test = e.replace("{{ ", "").replace(" }}", "")
        if j > 0 and conds.get(key) == "before":
            chunk = with_index(inner[j - 1][0], inner[j - 1][1], spec.name)
            out += "{% if " + test + " %}" + chunk + e + "{% endif %}"
        elif j > 0:
            out += with_index(inner[j - 1][0], inner[j - 1][1], spec.name) + e
        else:
            out += e
    out += "{% if loop.last %}" + raw(last) + "{% endif %}{% endfor %}"
    return out


def scalar_template(text, scalars):
    """Replaces each scalar sentinel (exactly once) by its expression."""
    marks = sorted((find_one(text, s, name), s, expr) for name, (s, expr) in scalars.items())
    out, at = "", 0
    for i, s, expr in marks:
        out += raw(text[at:i]) + expr
        at = i + len(s)
    return out + raw(text[at:])


# --------------------------------------------------------------------------- the prompts

def S(tag):
    # letters only: no digit can be mistaken for an index
    return "@@" + tag + "@@"


ALPH = "ABCDEFGHIJ"


def mem_sent(k):
    return S("MEM" + ALPH[k])


def build_executor(ref):
    fields = [
        ("name", lambda k: S("NAME" + ALPH[k]), "{{ FIELD }}", False),
        ("description", lambda k: S("DESC" + ALPH[k]), "{{ FIELD | trim }}", True),
        ("action", lambda k: S("zzact" + ALPH[k].lower()).upper(), "{{ FIELD | upper }}", False),
        ("instructions", lambda k: S("INST" + ALPH[k]), "{{ FIELD | trim }}", True),
    ]
    skills_spec = ListSpec("skills", fields)
    mems_spec = ListSpec("memories", [("m", mem_sent, "{{ FIELD }}", False)])

    def skill(k, **blank):
        d = {"name": S("NAME" + ALPH[k]), "description": " " + S("DESC" + ALPH[k]) + " \n",
             "action": S("zzact" + ALPH[k].lower()), "instructions": "\n" + S("INST" + ALPH[k]) + "  "}
        d.update(blank)
        return d

    def render(which, n, nm=2, ns=2):
        nm = n if which == "memories" else nm
        ns = n if which == "skills" else ns
        return ref["executor"](S("TEXT"), [mem_sent(k) for k in range(nm)], [skill(k) for k in range(ns)])

    full = render(None, 0)
    m_start, m_end, m_empty, m_first, m_inner, m_bix, m_b01, m_last = list_region(render, mems_spec)
    s_start, s_end, s_empty, s_first, s_inner, s_bix, s_b01, s_last = list_region(render, skills_spec)
    # the trim / upper the reference applies must show in the output
    if S("DESCA") not in full or " " + S("DESCA") + " " in full or S("ZZACTA") not in full:
        sys.exit("reference_prompts: executor: skill fields are not stripped / upper-cased as expected")

    def without(key):
        return ref["executor"](S("TEXT"), [], [skill(0, **{key: "  "})])

    conds = optional_fields(without, skills_spec, s_inner, s_last)
    m_len, s_len = len(full) - m_start - m_end, len(full) - s_start - s_end
    if not (m_start + m_len <= s_start):
        sys.exit("reference_prompts: executor: memories are expected before skills")
    mem_t = ("{% if memories %}" + list_template(mems_spec, m_first, m_inner, m_bix, m_b01, m_last, {}).replace("it.m", "it")
             + "{% else %}" + raw(m_empty) + "{% endif %}")
    sk_t = ("{% if skills %}" + list_template(skills_spec, s_first, s_inner, s_bix, s_b01, s_last, conds)
            + "{% else %}" + raw(s_empty) + "{% endif %}")
    head = scalar_template(full[:m_start], {"text": (S("TEXT"), "{{ text }}")})
    mid = raw(full[m_start + m_len:s_start])
    tail = raw(full[s_start + s_len:])
    return head + mem_t + mid + sk_t + tail


def build_answer(ref, name):
    spec = ListSpec("memories", [("m", mem_sent, "{{ FIELD }}", False)])
    fn = ref[name]

    def render(which, n):
        return fn(S("QUESTION"), [mem_sent(k) for k in range(n)], S("DATE"))

    start, end, empty, first, inner, bix, b01, last = list_region(render, spec)
    full = render(None, 2)
    scal = {"question": (S("QUESTION"), "{{ question }}")}
    if S("DATE") in full:
        scal["date"] = (S("DATE"), "{{ date }}")
    body = ("{% if memories %}" + list_template(spec, first, inner, bix, b01, last, {}).replace("it.m", "it")
            + "{% else %}" + raw(empty) + "{% endif %}")
    head = full[:start]
    tail = full[len(full) - end:]
    # scalars may sit before or after the list
    placeholder = "\x00LIST\x00"
    t = scalar_template(head + placeholder + tail, scal)
    # the placeholder went through raw(): put the list back
    return t.replace(placeholder, "{% endraw %}" + body + "{% raw %}" if "{% raw %}" in t and _inside_raw(t, placeholder) else body)


def _inside_raw(t, needle):
    i = t.find(needle)
    return t.rfind("{% raw %}", 0, i) > t.rfind("{% endraw %}", 0, i)


def build_judge(ref):
    text = ref["judge"](S("QUESTION"), S("GOLD"), S("PRED"))
    return scalar_template(text, {
        "question": (S("QUESTION"), "{{ question }}"),
        "ground_truth": (S("GOLD"), "{{ ground_truth }}"),
        "prediction": (S("PRED"), "{{ prediction }}"),
    })


HEADER = ("{# %s: generated by scripts/fidelity/reference-prompts.sh from the reference's own "
          "prompt builder (%s); reproduces its prompt byte for byte. #}")


def build_all(ref):
    return {
        "executor.user.j2": (HEADER % ("executor.user.j2", "src/executor.py Executor._build_executor_prompt")) + build_executor(ref),
        "answer.locomo.user.j2": (HEADER % ("answer.locomo.user.j2", "src/eval/locomo.py build_prompt")) + build_answer(ref, "answer.locomo"),
        "answer.longmemeval.user.j2": (HEADER % ("answer.longmemeval.user.j2", "src/eval/longmemeval.py build_prompt")) + build_answer(ref, "answer.longmemeval"),
        "answer.hotpotqa.user.j2": (HEADER % ("answer.hotpotqa.user.j2", "src/eval/hotpotqa.py build_prompt")) + build_answer(ref, "answer.hotpotqa"),
        "judge.user.j2": (HEADER % ("judge.user.j2", "src/eval/base.py build_judge_prompt")) + build_judge(ref),
    }


# --------------------------------------------------------------------------- self-check

def jinja_env():
    try:
        import jinja2
    except ImportError:
        sys.exit("reference_prompts: the self-check needs jinja2 (pip install jinja2)")
    return jinja2.Environment(keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                              autoescape=False, trim_blocks=False, lstrip_blocks=False)


def rand_text(rng, lo=0, hi=40):
    alphabet = "abcdefghijklmnopqrstuvwxyz ABC0123456789.,;:!?'\"-_()[]{}%#<>/\\\n\té漢🙂"
    n = rng.randint(lo, hi)
    s = "".join(rng.choice(alphabet) for _ in range(n))
    if rng.random() < 0.2:
        s = rng.choice(["  ", "\n", " \t"]) + s + rng.choice(["", " ", "\n\n"])
    if rng.random() < 0.1:
        s += rng.choice(["{{ x }}", "{% raw %}", "{#", "%}", "@@"])
    return s


def rand_case(rng):
    names = rng.sample(["insert", "update", "delete", "noop", "capture-dates", "track-people", "merge"], rng.randint(0, 4))
    skills = [{"name": n,
               "description": rand_text(rng, 0, 30) if rng.random() < 0.8 else rng.choice(["", "  "]),
               "instructions": rand_text(rng, 0, 60) if rng.random() < 0.8 else rng.choice(["", "\n"]),
               "action": rng.choice(["insert", "update", "delete", "noop"])} for n in names]
    return {
        "text": rand_text(rng, 0, 80),
        "memories": [rand_text(rng, 1, 30) for _ in range(rng.randint(0, 5))],
        "skills": skills,
        "question": rand_text(rng, 1, 30),
        "date": rand_text(rng, 0, 20),
        "ground_truth": rand_text(rng, 0, 20),
        "prediction": rand_text(rng, 0, 20),
    }


def reference_render(ref, c):
    return {
        "executor.user.j2": ref["executor"](c["text"], c["memories"], c["skills"]),
        "answer.locomo.user.j2": ref["answer.locomo"](c["question"], c["memories"], c["date"]),
        "answer.longmemeval.user.j2": ref["answer.longmemeval"](c["question"], c["memories"], c["date"]),
        "answer.hotpotqa.user.j2": ref["answer.hotpotqa"](c["question"], c["memories"], c["date"]),
        "judge.user.j2": ref["judge"](c["question"], c["ground_truth"], c["prediction"]),
    }


def self_check(ref, templates, checks, seed):
    env = jinja_env()
    compiled = {n: env.from_string(src) for n, src in templates.items()}
    rng = random.Random(seed)
    for i in range(checks):
        c = rand_case(rng)
        theirs = reference_render(ref, c)
        for name, t in compiled.items():
            ours = t.render(**c)
            if ours != theirs[name]:
                p = common_prefix(ours, theirs[name])
                sys.exit(f"reference_prompts: self-check failed for {name} (case {i}) at byte {p}:\n"
                         f"  template : {ours[max(0, p - 60):p + 60]!r}\n  reference: {theirs[name][max(0, p - 60):p + 60]!r}")


# --------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--reference", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--checks", type=int, default=500)
    b.add_argument("--seed", type=int, default=11)
    r = sub.add_parser("render")
    r.add_argument("--reference", required=True)
    a = ap.parse_args()
    ref = load_reference(a.reference)
    if a.cmd == "render":
        c = json.load(sys.stdin)
        json.dump(reference_render(ref, c), sys.stdout)
        return
    templates = build_all(ref)
    self_check(ref, templates, a.checks, a.seed)
    os.makedirs(a.out, exist_ok=True)
    for name, src in templates.items():
        with open(os.path.join(a.out, name), "w", encoding="utf-8", newline="") as f:
            f.write(src)
        sys_name = name.replace(".user.j2", ".system.j2")
        with open(os.path.join(a.out, sys_name), "w", encoding="utf-8") as f:
            f.write("")  # the reference sends a single user message
    print(f"reference_prompts: wrote {2 * len(templates)} templates to {a.out} "
          f"({a.checks} random inputs render byte-identical to the reference)")


if __name__ == "__main__":
    main()
