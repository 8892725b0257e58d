"""Helpers the scripts/dev checks share for reading rustfmt-formatted Rust sources."""
import re


def strip(line, state):
    """The code of one line without strings, chars and comments; `state` carries an open block
    comment, raw string or plain string over to the next line."""
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


def code_lines(path):
    """(source lines, the same lines with strings, chars and comments left out)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    state = {"block": False, "raw": None, "str": False}
    return lines, [strip(l, state) for l in lines]
