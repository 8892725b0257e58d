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


TEST_ATTR = re.compile(r"^\s*#\[(cfg\(test\)|test)\]")


class TestScope:
    """Where test code is, line by line: a `#[cfg(test)]` / `#[test]` attribute waits for its
    item; the item's first `{` opens the test region, which its matching `}` closes (a `;`
    first, as in a test-only `use` or `mod x;`, ends the wait). Feed every line to `line`,
    then every brace and `;` of its code to `open` (after the depth rose), `close` (before it
    falls) and `semicolon`."""

    def __init__(self):
        self.attr = False  # an attribute waits for its item
        self.pending = False  # that item has begun; its first `{` opens the region
        self.depth = None  # depth of the open region

    def line(self, line, code):
        if TEST_ATTR.match(line):
            self.attr = True
        elif self.attr and code.strip() and not line.strip().startswith("#["):
            self.attr = False; self.pending = True

    def open(self, depth):
        if self.pending:
            self.pending = False
            if self.depth is None:
                self.depth = depth

    def close(self, depth):
        if depth == self.depth:
            self.depth = None

    def semicolon(self):
        self.pending = False

    def inside(self):
        """In a test region, or on the first lines of a test item."""
        return self.depth is not None or self.pending
