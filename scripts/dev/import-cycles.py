#!/usr/bin/env python3
"""Print every module import circle inside each crate of the workspace and exit 1 if there is
one. For each crate's src/ (its lib.rs or main.rs is the root; src/bin/ is left out), the graph
has an edge a -> b where code of top-level module a names top-level module b: `use crate::b..`,
a `crate::b::..` path, or `super::..` resolved against the module it is written in (a/b.rs and
a/mod.rs as Rust reads them, inline `mod x { .. }` too). Submodules collapse to their
top-level module (trainer's `train::rollout` -> `train`); a name the crate root re-exports
(`pub use b::Item;`) counts as b. Test code (items under #[cfg(test)] / #[test]) is left out:
`--with-tests` takes it in. Prints each strongly connected component of more than one module
with the edges inside it (and one file:line that makes each). The same is done inside every
module that has submodules: its children are the nodes (`safety::intent` -> `safety::compose`
is an edge of `safety`'s graph), so a circle among files of one folder is found too.
  scripts/dev/import-cycles.py [--with-tests] [crate dirs; default: every dir with src/lib.rs or src/main.rs]"""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rust_lex import TestScope, code_lines  # noqa: E402

MOD_BLOCK = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?mod\s+(\w+)\s*\{")
PATH = re.compile(r"\b((?:crate|super|self)(?:::(?:super|\w+))*)(?:::\{|::\*)?")


def module_of(src, path):
    """Module path (list of names) of the file `path` under `src`."""
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    if rel in (["lib"], ["main"]):
        return []
    return rel


def expand_use(tree):
    """The paths (as `a::b::C` strings) of one use tree without its `use` and `;` (renames
    dropped: `a::B as C` is `a::B`)."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    j = tree.find("{")
    if j < 0:
        return [tree]
    prefix, body = tree[:j], tree[j + 1:]
    # body up to the matching brace
    depth, parts, cur = 1, [], ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                break
        if ch == "," and depth == 1:
            parts.append(cur); cur = ""; continue
        cur += ch
    parts.append(cur)
    out = []
    for part in parts:
        if not part:
            continue
        for sub in expand_use(part):
            out.append(prefix + sub if sub != "self" else prefix.rstrip(":"))
    return out


def resolve(path, current):
    """Absolute module path (list) a `crate::`/`super::`/`self::` path names, or None."""
    parts = [p for p in path.split("::") if p]
    if not parts:
        return None
    if parts[0] == "crate":
        return parts[1:]
    if parts[0] in ("super", "self"):
        base = list(current)
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                if not base:
                    return None
                base = base[:-1]
            parts = parts[1:]
        return base + parts
    return None


def scan_file(src, path, with_tests):
    """[(absolute path named, current module, line)] of the file; use trees expanded."""
    lines, code = code_lines(path)
    file_mod = module_of(src, path)
    refs = []
    depth = 0
    mods = []  # (name, depth at open) of inline mods
    pending_mod = None
    tests = TestScope()
    use_buf, use_line = None, 0
    for no, c in enumerate(code, 1):
        line = lines[no - 1]
        tests.line(line, c)
        m = MOD_BLOCK.match(c)
        if m:
            pending_mod = m.group(3)
        current = file_mod + [n for n, _ in mods]
        if not tests.inside() or with_tests:
            text = c
            if use_buf is None:
                um = re.match(r"^\s*(pub(\([^)]*\))?\s+)?use\s+(.*)$", c)
                if um:
                    use_buf, use_line, text = "", no, um.group(3)
            if use_buf is not None:
                k = text.find(";")
                use_buf += text if k < 0 else text[:k]
                if k >= 0:
                    for p in expand_use(use_buf):
                        refs.append((p, current, use_line))
                    use_buf = None
                    text = text[k + 1:]
                else:
                    text = ""
            for pm in PATH.finditer(text):
                refs.append((pm.group(1), current, no))
        for ch in c:
            if ch == "{":
                depth += 1
                tests.open(depth)
                if pending_mod is not None:
                    mods.append((pending_mod, depth)); pending_mod = None
            elif ch == "}":
                if mods and mods[-1][1] == depth:
                    mods.pop()
                tests.close(depth)
                depth -= 1
            elif ch == ";":
                tests.semicolon()
    return refs


def crate_graph(crate, with_tests):
    src = os.path.join(crate, "src")
    files = []
    for d, subdirs, fs in os.walk(src):
        subdirs[:] = sorted(s for s in subdirs if not (d == src and s == "bin"))
        files += [os.path.join(d, f) for f in sorted(fs) if f.endswith(".rs")]
    tops = set()
    for f in files:
        m = module_of(src, f)
        if m:
            tops.add(m[0])
    refs = {f: scan_file(src, f, with_tests) for f in files}
    # names the crate root re-exports: `pub use b::..::Name;` -> b
    reexport = {}
    for f in files:
        if module_of(src, f) == []:
            lines, code = code_lines(f)
            for p, cur, _ in refs[f]:
                a = resolve(p, cur) if p.split("::")[0] in ("crate", "self", "super") else p.split("::")
                if a and a[0] in tops and len(a) > 1:
                    reexport[a[-1]] = a[0]
            # `pub use b::Name;` in the root is written without crate::
            for c in code:
                um = re.match(r"^\s*pub(\([^)]*\))?\s+use\s+(\w+)::(.*);", c)
                if um and um.group(2) in tops:
                    for p in expand_use(um.group(3)):
                        name = p.split("::")[-1]
                        if name and name != "*":
                            reexport[name] = um.group(2)
    edges = {}
    for f in files:
        me = module_of(src, f)
        if not me:
            continue
        for p, cur, no in refs[f]:
            a = resolve(p, cur)
            if not a:
                continue
            top = a[0] if a[0] in tops else reexport.get(a[0])
            if top and top != me[0]:
                edges.setdefault((me[0], top), f"{f}:{no}")
    return sorted(tops), edges, sub_graphs(src, files, refs)


def sub_graphs(src, files, refs):
    """{parent module (tuple): (children, {(child, child): where})} for every module with
    submodules: an edge where code under parent::x names parent::y::.. (x != y)."""
    modules = set()
    for f in files:
        m = module_of(src, f)
        for i in range(1, len(m) + 1):
            modules.add(tuple(m[:i]))
    graphs = {}
    for m in modules:
        parent = m[:-1]
        if parent:
            graphs.setdefault(parent, (set(), {}))[0].add(m[-1])
    for f in files:
        for p, cur, no in refs[f]:
            a = resolve(p, cur)
            if not a:
                continue
            k = 0
            while k < min(len(a), len(cur)) and a[k] == cur[k]:
                k += 1
            parent = tuple(cur[:k])
            if not parent or parent not in graphs or k >= len(cur) or k >= len(a):
                continue
            children, edges = graphs[parent]
            x, y = cur[k], a[k]
            if x in children and y in children and x != y:
                edges.setdefault((x, y), f"{f}:{no}")
    return graphs


def sccs(nodes, edges):
    """Tarjan's strongly connected components."""
    adj = {n: sorted(b for (a, b) in edges if a == n) for n in nodes}
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]; counter[0] += 1
        stack.append(v); on.add(v)
        for w in adj.get(v, []):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for n in nodes:
        if n not in index:
            visit(n)
    return out


def main():
    args = sys.argv[1:]
    with_tests = "--with-tests" in args
    args = [a for a in args if a != "--with-tests"]
    crates = args or sorted(
        d for d in os.listdir(".")
        if os.path.isfile(os.path.join(d, "src", "lib.rs")) or os.path.isfile(os.path.join(d, "src", "main.rs")))
    found = 0
    for crate in crates:
        if not os.path.isdir(os.path.join(crate, "src")):
            sys.exit(f"error: {crate}/src is not a folder")
        nodes, edges, subs = crate_graph(crate, with_tests)
        graphs = [("", nodes, edges)] + [
            ("::".join(parent) + "::", sorted(ch), e) for parent, (ch, e) in sorted(subs.items())
        ]
        for prefix, ns, es in graphs:
            for comp in sccs(ns, es):
                if len(comp) < 2:
                    continue
                found += 1
                print(f"{crate}: circle {' <-> '.join(prefix + c for c in comp)}")
                for (a, b), where in sorted(es.items()):
                    if a in comp and b in comp:
                        print(f"    {prefix}{a} -> {prefix}{b}  ({where})")
    if found:
        sys.exit(1)
    print(f"ok: no module import circle in {', '.join(crates)}")


if __name__ == "__main__":
    main()
