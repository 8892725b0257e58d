#!/usr/bin/env python3
"""Print the N longest non-test `fn` items (lines from the `fn` line to its closing brace) under
the given folders of Rust sources. A brace counter that skips strings, chars and comments;
good enough for rustfmt-formatted code. Test code is left out: items under `#[cfg(test)]` or
`#[test]` (a whole `mod tests { .. }` with everything in it) and files in a `tests` or
`benches` folder below the given folder.
  scripts/dev/longest-fns.py [-n 10] [trainer/src more dirs]
  scripts/dev/longest-fns.py --max 80 [--exceptions 5] [dirs]
With --max, lists the functions longer than MAX lines that carry no `// long: <reason>`
comment directly above the fn (above its doc comment and attributes, or between them) and
exits 1 if there are any, or if more than --exceptions functions carry such a reason."""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rust_lex import TestScope, code_lines  # noqa: E402


FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")
LONG_REASON = re.compile(r"^\s*// long: \S")

def long_reason(lines, fn_line):
    """Whether a `// long: <reason>` comment sits directly above the fn at 1-based `fn_line`
    (only doc comments, comments and attributes in between)."""
    i = fn_line - 2
    while i >= 0:
        l = lines[i].strip()
        if LONG_REASON.match(lines[i]):
            return True
        if not (l.startswith("//") or l.startswith("#[")):
            return False
        i -= 1
    return False

def scan(path):
    """(lines, "path:line", name, has_long_reason) of every non-test fn with a body."""
    lines, code = code_lines(path)
    res = []
    depth = 0
    stack = []  # (name, start_line, depth_at_open)
    pending = None
    tests = TestScope()
    for no, c in enumerate(code, 1):
        line = lines[no - 1]
        tests.line(line, c)
        m = FN.match(line)
        if m and pending is None:
            pending = (m.group(6), no)
        for ch in c:
            if ch == "{":
                depth += 1
                tests.open(depth)
                if pending is not None:
                    stack.append((pending[0], pending[1], depth)); pending = None
            elif ch == "}":
                if stack and stack[-1][2] == depth:
                    name, start, _ = stack.pop()
                    if tests.depth is None:
                        res.append((no - start + 1, f"{path}:{start}", name, long_reason(lines, start)))
                tests.close(depth)
                depth -= 1
            elif ch == ";":
                if pending is not None and depth >= 0:
                    pending = None  # a declaration without a body
                tests.semicolon()
    return res

def sources(root):
    for d, subdirs, files in os.walk(root):
        subdirs[:] = sorted(s for s in subdirs if s not in ("tests", "benches"))
        for f in sorted(files):
            if f.endswith(".rs"):
                yield os.path.join(d, f)

def main():
    args = sys.argv[1:]
    n, max_lines, exceptions = 10, None, 5
    while args[:1] and args[0].startswith("-"):
        flag, val = args[0], args[1]
        args = args[2:]
        if flag == "-n": n = int(val)
        elif flag == "--max": max_lines = int(val)
        elif flag == "--exceptions": exceptions = int(val)
        else: sys.exit(f"error: unknown flag {flag}")
    out = []
    for d in args or ["trainer/src"]:
        if not os.path.isdir(d):
            sys.exit(f"error: {d} is not a folder")
        for path in sources(d):
            out += scan(path)
    out.sort(key=lambda r: (-r[0], r[1]))
    if max_lines is None:
        for lines, where, name, _ in out[:n]:
            print(f"{lines:5}  {name:28} {where}")
        return
    over = [r for r in out if r[0] > max_lines]
    bad = [r for r in over if not r[3]]
    excused = [r for r in over if r[3]]
    for lines, where, name, _ in bad:
        print(f"{lines:5}  {name:28} {where}  (over {max_lines} lines, no `// long:` reason)")
    if len(excused) > exceptions:
        for lines, where, name, _ in excused:
            print(f"{lines:5}  {name:28} {where}  (`// long:` exception)")
        print(f"error: {len(excused)} functions over {max_lines} lines carry `// long:`, at most {exceptions}")
    if bad or len(excused) > exceptions:
        sys.exit(1)
    print(f"ok: no function over {max_lines} lines without a `// long:` reason ({len(excused)} with one)")

if __name__ == "__main__":
    main()
