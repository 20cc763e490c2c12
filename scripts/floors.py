#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the module's floors: every file under rust/ imports only files on
lower floors of the table in Documentation/design.rst (the literal block
after ".. floor-table"), every file is in the table, and no file is over
the line limit. The tools (tools/src/) are checked for circles only.

Imports are the paths a file names: `use`, and `crate::`, `super::`,
`self::` or child-module paths in code, resolved to the file of the
longest module prefix. A module's declaration (`mod x;`) is no import.

Exit status 0 when everything holds; otherwise each violation is printed.
`--graph` prints every file's imports; `--levels` the lowest floor each
file could sit on; `--table` those floors as a table for design.rst.
"""

import os
import re
import sys

ROOT = "rust"
DESIGN = "Documentation/design.rst"
MAX_LINES = 620


def module_path(path, root=ROOT):
    rel = path[len(root) + 1:-3].split("/")
    if rel[-1] == "mod":
        rel = rel[:-1]
    return [] if rel == ["smc_rs"] else rel


def strip(src):
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    src = re.sub(r'b?"(?:\\.|[^"\\])*"', '""', src)
    return src


def read_sources(root=ROOT):
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(".rs") and n != "bindings_generated.rs":
                p = os.path.join(d, n)
                with open(p, encoding="utf-8") as f:
                    files[p] = f.read()
    return files


def inline_modules(code):
    """The spans of inline `mod x { ... }` blocks."""
    spans = []
    for m in re.finditer(r"\bmod\s+\w+\s*\{", code):
        depth, i = 0, m.end() - 1
        while i < len(code):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        spans.append((m.end(), i))
    return spans


def cycles(edges):
    """The import circles: strongly connected sets of more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def imports(files, root=ROOT):
    mods = {tuple(module_path(p, root)): p for p in files}

    def resolve(parts):
        for n in range(len(parts), 0, -1):
            hit = mods.get(tuple(parts[:n]))
            if hit:
                return hit
        return None

    edges = {}
    for p, src in files.items():
        me = module_path(p, root)
        code = strip(src)
        children = set(re.findall(r"\bmod\s+(\w+)\s*;", code))
        deps = set()
        pat = r"(?<![\w:])(crate|super|self|%s)((?:::\w+)*)(::\{[^;]*?\})?" % (
            "|".join(sorted(children)) or "(?!x)x")
        inline = inline_modules(code)
        for m in re.finditer(pat, code):
            head, rest = m.group(1), [x for x in m.group(2).split("::") if x]
            depth = sum(1 for a, b in inline if a < m.start() < b)
            if head == "crate":
                base = []
            elif head == "super" and depth:
                # `super` inside an inline `mod x { ... }` is this file.
                base = list(me)
            elif head == "super":
                base = me[:-1]
            elif head == "self":
                base = list(me)
            else:
                base = me + [head]
            # super::super:: and the like
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
            if not rest and not m.group(3) and head in ("crate", "super", "self"):
                continue
            if head in children and not rest and not m.group(3):
                continue
            paths = []
            if m.group(3):
                for item in re.split(r",(?![^{]*\})", m.group(3)[3:-1]):
                    name = re.match(r"\s*([\w:]+)", item)
                    if name:
                        paths.append(base + rest + [x for x in name.group(1).split("::") if x and x != "self"])
            else:
                paths.append(base + rest)
            for path in paths:
                target = resolve(path)
                if target and target != p:
                    deps.add(target)
        edges[p] = deps
    return edges


def floor_table():
    with open(DESIGN, encoding="utf-8") as f:
        text = f.read()
    at = text.find(".. floor-table")
    if at < 0:
        sys.exit(f"{DESIGN}: no '.. floor-table' block")
    block = text[at:].split("::\n", 1)[1]
    floors = []
    for line in block.splitlines():
        if line.strip() == "":
            continue
        if not line.startswith("    "):
            break
        names = line.split()
        floors.append([os.path.join(ROOT, n) for n in names])
    # Top first in the document: floor numbers grow downwards there.
    table = {}
    for i, names in enumerate(reversed(floors)):
        for n in names:
            if n in table:
                sys.exit(f"{DESIGN}: {n} is on two floors")
            table[n] = i
    return table


def self_test():
    """The check must catch what it is for: a circle (also through a
    child module's path), an import of a file on a higher floor, a file
    missing from the table; and pass a tree that keeps the rules."""
    good = {
        "rust/smc_rs.rs": "mod a;\nmod b;\nuse crate::a::X;\n",
        "rust/a.rs": "mod c;\nuse crate::b::Y;\nfn f() { c::g() }\n",
        "rust/a/c.rs": "use crate::b::Y;\n",
        "rust/b.rs": "// crate::a::X in a comment is no import\npub struct Y;\n",
    }
    table = {"rust/smc_rs.rs": 3, "rust/a.rs": 2, "rust/a/c.rs": 1, "rust/b.rs": 0}

    def violations(files, table):
        edges = imports(files)
        bad = [c for c in cycles(edges)]
        bad += [(p, d) for p, ds in edges.items() for d in ds
                if p in table and d in table and table[d] >= table[p]]
        bad += [p for p in files if p not in table]
        return bad

    assert violations(good, table) == [], violations(good, table)
    circle = dict(good, **{"rust/b.rs": "use super::a::c;\n"})
    assert any(isinstance(v, list) for v in violations(circle, table)), "circle missed"
    child = dict(good, **{"rust/a/c.rs": "use super::Z;\n"})
    assert ("rust/a/c.rs", "rust/a.rs") in violations(child, table), "upward child import missed"
    missing = dict(good, **{"rust/d.rs": ""})
    assert "rust/d.rs" in violations(missing, table), "file outside the table missed"
    print("floors: self-test passed")


def main():
    if "--self-test" in sys.argv:
        self_test()
        return 0
    files = read_sources()
    edges = imports(files)
    if "--graph" in sys.argv:
        for p in sorted(edges):
            print(p, "->", " ".join(sorted(edges[p])))
        return 0
    if "--levels" in sys.argv or "--table" in sys.argv:
        level = {}

        def lv(v):
            if v not in level:
                level[v] = 0
                level[v] = 1 + max((lv(w) for w in edges[v]), default=-1)
            return level[v]

        for v in sorted(edges, key=lambda v: (lv(v), v)):
            lv(v)
        if "--table" in sys.argv:
            # The lowest floor for every file, as a table to start from.
            for n in sorted(set(level.values()), reverse=True):
                names = sorted(v[len(ROOT) + 1:] for v in level if level[v] == n)
                print("    " + " ".join(names))
            return 0
        for v in sorted(edges, key=lambda v: (level[v], v)):
            print(level[v], v)
        return 0
    bad = [f"import circle: {' '.join(c)}" for c in cycles(edges)]
    if "--cycles" in sys.argv:
        for b in bad:
            print(b)
        return 1 if bad else 0
    table = floor_table()
    for p in sorted(files):
        if p not in table:
            bad.append(f"{p}: not in the floor table of {DESIGN}")
        lines = files[p].count("\n")
        if lines > MAX_LINES:
            bad.append(f"{p}: {lines} lines (at most {MAX_LINES})")
    for p in sorted(table):
        if p not in files:
            bad.append(f"{DESIGN}: {p} is in the floor table but not in {ROOT}/")
    for p, deps in sorted(edges.items()):
        for d in sorted(deps):
            if p in table and d in table and table[d] >= table[p]:
                bad.append(f"{p} (floor {table[p]}) imports {d} (floor {table[d]}): not below it")
    # The tools: no circle either (they have no floor table).
    tools = imports(read_sources("tools/src"), "tools/src")
    bad += [f"import circle: {' '.join(c)}" for c in cycles(tools)]
    for b in bad:
        print(b)
    n = sum(len(d) for d in edges.values())
    print(f"floors: {len(files)} files, {n} imports, {len(bad)} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
