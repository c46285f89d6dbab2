#!/usr/bin/env python3
"""No two of a folder's modules (NAME.c with NAME.h) need each other, directly or through
others: the module of X includes "Y.h" means X uses Y, and that graph must have no cycle, so
that each file can be read, changed and tested with only what lies below it (issue 33).

    include-cycles.py DIR...
"""
import os
import re
import sys


def modules(folder):
    """module -> the modules whose headers it includes (quoted includes of this folder)."""
    uses = {}
    for name in sorted(os.listdir(folder)):
        stem, ext = os.path.splitext(name)
        if ext not in (".c", ".h"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            found = re.findall(r'^\s*#\s*include\s+"([^"/]+)\.h"', f.read(), re.M)
        uses.setdefault(stem, set()).update(x for x in found if x != stem)
    return uses


def cycle(uses):
    """A cycle as a list of modules, or None (depth-first search)."""
    state, path = {}, []

    def visit(m):
        state[m] = 1
        path.append(m)
        for n in sorted(uses.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(uses):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def main():
    bad = 0
    for folder in sys.argv[1:]:
        uses = modules(folder)
        found = cycle(uses)
        if found:
            print(f"FAIL: {folder}: modules that need each other: {' -> '.join(found)}")
            bad = 1
        else:
            print(f"ok: {folder}: {len(uses)} modules, no include cycle")
    return bad


if __name__ == "__main__":
    sys.exit(main())
