#!/usr/bin/env python3
"""Print the N longest `fn` items (lines from the `fn` line to its closing brace) under the
given folders of Rust sources. A brace counter that skips strings, chars and comments;
good enough for rustfmt-formatted code.
  scripts/dev/longest-fns.py [-n 10] trainer/src [more dirs]"""
import os, re, sys

def strip(line, state):
    out, i, n = [], 0, len(line)
    while i < n:
        if state["block"]:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out)
            state["block"] = False; i = j + 2; continue
        if state["raw"] is not None:
            j = line.find('"' + "#" * state["raw"], i)
            if j < 0:
                return "".join(out)
            i = j + 1 + state["raw"]; state["raw"] = None; continue
        if state["str"]:
            if line[i] == "\\": i += 2; continue
            if line[i] == '"': state["str"] = False
            i += 1; continue
        c = line[i]
        if line.startswith("//", i): break
        if line.startswith("/*", i): state["block"] = True; i += 2; continue
        m = re.match(r'b?r(#*)"', line[i:])
        if m and (i == 0 or not (line[i-1].isalnum() or line[i-1] == "_")):
            state["raw"] = len(m.group(1)); i += len(m.group(0)); continue
        if c == '"': state["str"] = True; i += 1; continue
        m = re.match(r"'(\\.|[^\\'])'", line[i:]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", line[i:])
        if m: i += len(m.group(0)); continue
        out.append(c); i += 1
    return "".join(out)

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")

def scan(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    state = {"block": False, "raw": None, "str": False}
    code = [strip(l, state) for l in lines]
    res, test_depth = [], None
    depth = 0
    stack = []  # (name, start_line, depth_at_open)
    pending = None
    for no, c in enumerate(code, 1):
        m = FN.match(lines[no - 1])
        if m and pending is None:
            pending = (m.group(6), no)
        for ch in c:
            if ch == "{":
                depth += 1
                if pending is not None:
                    stack.append((pending[0], pending[1], depth)); pending = None
            elif ch == "}":
                if stack and stack[-1][2] == depth:
                    name, start, _ = stack.pop()
                    res.append((no - start + 1, f"{path}:{start}", name))
                depth -= 1
            elif ch == ";" and pending is not None and depth >= 0:
                pending = None  # a declaration without a body
    return res

def main():
    args = sys.argv[1:]
    n = 10
    if args[:1] == ["-n"]:
        n = int(args[1]); args = args[2:]
    out = []
    for d in args or ["trainer/src"]:
        for root, _, files in os.walk(d):
            for f in files:
                if f.endswith(".rs"):
                    out += scan(os.path.join(root, f))
    out.sort(key=lambda r: (-r[0], r[1]))
    for lines, where, name in out[:n]:
        print(f"{lines:5}  {name:28} {where}")

main()
