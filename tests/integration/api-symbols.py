#!/usr/bin/env python3
"""A shared library exports its API and nothing else (doc/api.md): the functions and variables
that carry NT_API in its public headers, each with its contract comment, are exactly the
dynamic symbols it defines, and exactly the names its version script lists.

    api-symbols.py [--map MAP] [--private DIR]... LIB HEADER...

LIB        the shared library (nm -D --defined-only reads its exports)
HEADER     its public headers: every NT_API declaration in them is API
--map      its version script: one named version node, each public name listed by itself
           (no wildcards), then `local: *;`
--private  a folder whose .c and .h files (not its subfolders) must carry no NT_API: the
           core's sources and the private root

A forgotten NT_API, a forgotten version script entry, a stale one, an exported private
function or an API function without its comment each fail with their names.
"""
import argparse
import os
import re
import subprocess
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def blank_comments_and_directives(text):
    """text with comments and preprocessor lines replaced by spaces (newlines kept), so that
    positions still match text."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for k in range(i, end):
                if out[k] != "\n":
                    out[k] = " "
            i = end
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            for k in range(i, end):
                out[k] = " "
            i = end
            continue
        if line_start and c == "#":
            end = i
            while True:  # a directive runs on over lines that end in a backslash
                nl = text.find("\n", end)
                if nl < 0:
                    end = n
                    break
                if text[nl - 1] == "\\":
                    end = nl + 1
                    continue
                end = nl
                break
            for k in range(i, end):
                if out[k] != "\n":
                    out[k] = " "
            i = end
            continue
        if c == "\n":
            line_start = True
        elif not c.isspace():
            line_start = False
        i += 1
    return "".join(out)


def api_declarations(path):
    """[(name, documented)] of the NT_API declarations of a header, in order."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    code = blank_comments_and_directives(text)
    found = []
    previous_end = None  # where the previous NT_API declaration's ';' was
    for m in re.finditer(r"\bNT_API\b", code):
        end = code.find(";", m.end())
        if end < 0:
            sys.exit(f"FAIL: {path}: an NT_API declaration without its ';'")
        decl = code[m.end():end]
        paren = decl.find("(")
        head = decl[:paren] if paren >= 0 else re.sub(r"\[[^]]*\]", "", decl)
        names = IDENT.findall(head)
        if not names:
            sys.exit(f"FAIL: {path}: cannot name the NT_API declaration '{decl.strip()}'")
        # Documented: right above it (no blank line between) ends a comment, or another NT_API
        # declaration of the same group, which is documented in turn.
        stripped = text[:m.start()].rstrip()
        newlines = text[len(stripped):m.start()].count("\n")
        if stripped.endswith("*/") and newlines <= 1:
            documented = True
        elif previous_end is not None and len(stripped) == previous_end + 1 and newlines <= 1:
            documented = found[-1][1]
        else:
            documented = False
        found.append((names[-1], documented))
        previous_end = end
    return found


def version_script(path):
    """(node, [global names]) of a version script with one named node."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\{\s*global:(.*?)local:\s*\*\s*;\s*\}\s*;\s*",
                     text, re.S)
    if not m:
        sys.exit(f"FAIL: {path}: not one named version node `NAME {{ global: ...; local: *; }};`")
    names = [x.strip() for x in m.group(2).split(";") if x.strip()]
    bad = [x for x in names if not IDENT.fullmatch(x)]
    if bad:
        sys.exit(f"FAIL: {path}: entries that are not plain names (list each one): {' '.join(bad)}")
    return m.group(1), names


def exported(lib):
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                             capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit("FAIL: no nm (apt-get install binutils)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"FAIL: nm -D {lib}: {e.stderr.strip()}")
    names = set()
    for line in out.splitlines():
        parts = line.split()
        # Code and data; not the version node's own absolute symbol (A).
        if len(parts) == 3 and parts[1] in "TDBRVWiu":
            names.add(parts[2].split("@")[0])
    return names


def differ(what_a, a, what_b, b):
    """Print and count the names in one set and not the other."""
    bad = 0
    for name in sorted(a - b):
        print(f"  {name}: {what_a}, not {what_b}")
        bad += 1
    for name in sorted(b - a):
        print(f"  {name}: {what_b}, not {what_a}")
        bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--map")
    ap.add_argument("--private", action="append", default=[])
    ap.add_argument("lib")
    ap.add_argument("headers", nargs="+")
    args = ap.parse_args()
    fail = 0

    api, undocumented = {}, []
    for h in args.headers:
        for name, documented in api_declarations(h):
            if name in api:
                print(f"FAIL: {name} carries NT_API in {api[name]} and {os.path.basename(h)}")
                fail = 1
            api[name] = os.path.basename(h)
            if not documented:
                undocumented.append(f"{name} ({os.path.basename(h)})")
    if not api:
        sys.exit("FAIL: no NT_API declaration in the headers")
    if undocumented:
        print("FAIL: API without a contract comment right above it (or above its group):")
        for x in undocumented:
            print(f"  {x}")
        fail = 1

    got = exported(args.lib)
    if differ("declared NT_API", set(api), "exported", got):
        print(f"FAIL: {os.path.basename(args.lib)} exports other symbols than its headers "
              "declare NT_API (a name left out of the version script, or NT_API left off)")
        fail = 1

    if args.map:
        node, names = version_script(args.map)
        dup = sorted({x for x in names if names.count(x) > 1})
        if dup:
            print(f"FAIL: {args.map} lists twice: {' '.join(dup)}")
            fail = 1
        if differ("declared NT_API", set(api), "in the version script", set(names)):
            print(f"FAIL: {args.map} lists other names than the headers declare NT_API")
            fail = 1
        print(f"version node {node}: {len(set(names))} names")

    for folder in args.private:
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if not name.endswith((".c", ".h")) or not os.path.isfile(path):
                continue
            with open(path, encoding="utf-8") as f:
                code = blank_comments_and_directives(f.read())
            if re.search(r"\bNT_API\b", code):
                print(f"FAIL: {path} is private but carries NT_API")
                fail = 1

    if not fail:
        n = len(args.headers)
        print(f"{os.path.basename(args.lib)} exports the {len(api)} NT_API names of its "
              f"{n} header{'s' if n > 1 else ''}, each documented, nothing else")
    return fail


if __name__ == "__main__":
    sys.exit(main())
