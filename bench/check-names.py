#!/usr/bin/env python3
"""Check the call-site names of a noisetool report against nm (doc/bench-app.md, "Names").

Every site of the report is resolved against the symbol tables of its module, as `nm -S
--defined-only` and `nm -D -S --defined-only` print them (demangled, as the report's addr2line
-C): a site the report names `function+0xoff` must lie inside a symbol of that name, at that
offset from its start (st_value <= address < st_value + st_size); a site named
`module+0xoffset` or `file.c:line` names no function and cannot be wrong that way.

Usage:
  check-names.py [--noisetool PATH] [--app NAME] [--debug-dir DIR] [--calls] [-v] LOG|JSON...

A log is reported with `noisetool report LOG --json FILE` first (noisetool from --noisetool, else
PATH); a JSON report (`noisetool-report/1`, or an array of them) is read as it is. Prints one
line per report:

  names APP: sites 41, named 12, file:line 0, module+off 29 (nm has a function around 0), wrong 0

then each wrong site: its MPI function, module, offset, file address, the report's name and what
nm has at that address. With --calls, each site's address must also be the last byte of a call
instruction (objdump): the check that module and offset mean what the names are checked on.
Exit status: 0 when no site is wrong, 1 when one is, 2 when a report or
a module could not be read.
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

VERSION_SUFFIX = re.compile(r"@@?[A-Za-z0-9_.]+$")  # nm -D: memcpy@GLIBC_2.14
LINE_NAME = re.compile(r"^[^ ()]+:[0-9]+$")  # file.c:123
CUT = "..."  # the report keeps a long name's start and its last 24 bytes around "..."


def file_bias(path):
    """What turns a module offset into a file address (nm's st_value): 0 for a PIE or a shared
    object; for a fixed-address executable (ET_EXEC) its first PT_LOAD segment's p_vaddr -
    p_offset, as tools/symbolize.c does."""
    with open(path, "rb") as f:
        eh = f.read(64)
        if len(eh) < 64 or eh[:4] != b"\x7fELF" or eh[4] != 2:
            return 0
        e_type = struct.unpack_from("<H", eh, 16)[0]
        if e_type != 2:  # ET_EXEC
            return 0
        phoff = struct.unpack_from("<Q", eh, 32)[0]
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        for i in range(min(phnum, 64)):
            f.seek(phoff + i * phentsize)
            ph = f.read(56)
            p_type, _, p_offset, p_vaddr = struct.unpack_from("<IIQQ", ph, 0)
            if p_type == 1:  # PT_LOAD
                return p_vaddr - p_offset
    return 0


class Symbols:
    """The sized symbols of one module from nm -S (.symtab) and nm -D -S (.dynsym), demangled:
    (value, size, type, name), name without a symbol version."""

    def __init__(self, path):
        self.path = path
        self.syms = []
        self.by_name = {}
        for extra in ([], ["-D"]):
            out = subprocess.run(["nm", *extra, "-S", "--defined-only", "-C", path],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True, errors="replace").stdout
            for line in out.splitlines():
                parts = line.split(" ", 3)
                if len(parts) != 4:
                    continue  # no size: not a symbol that can contain an address
                try:
                    value, size = int(parts[0], 16), int(parts[1], 16)
                except ValueError:
                    continue
                name = VERSION_SUFFIX.sub("", parts[3]) if extra else parts[3]
                sym = (value, size, parts[2], name)
                self.syms.append(sym)
                self.by_name.setdefault(name, []).append(sym)
        self.syms.sort()

    def containing(self, addr):
        """The symbols whose [value, value + size) holds addr."""
        return [s for s in self.syms if s[0] <= addr < s[0] + s[1]]

    def named(self, name):
        """The symbols of that name; a name the report cut ("start...end") matches by its start
        and its end."""
        if name in self.by_name:
            return self.by_name[name]
        if CUT in name:
            head, tail = name.split(CUT, 1)
            return [s for n, ss in self.by_name.items()
                    if n.startswith(head) and n.endswith(tail) for s in ss]
        return []


def call_before(module, ret):
    """The call instruction that ends at the return address ret of module (file address), as
    objdump decodes it, or None: a call is 2 to 7 bytes long, the common ones first."""
    for length in (5, 6, 2, 3, 7):
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                              "--start-address=%d" % (ret - length), "--stop-address=%d" % ret,
                              module], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True).stdout
        insns = [l for l in out.splitlines() if ":\t" in l]
        if len(insns) == 1 and "\tcall" in insns[0]:
            return insns[0].split(":\t", 1)[1].strip()
    return None


def describe(syms):
    if not syms:
        return "no sized symbol"
    return "; ".join("%s [0x%x, 0x%x) %s" % (s[3], s[0], s[0] + s[1], s[2]) for s in syms[:3])


def check_report(report, app, verbose, calls, out):
    """Checks the sites of one noisetool-report/1 object; returns (counts, wrong sites). With
    calls, also whether each site's offset is the last byte of a call instruction (the tool
    records the return address - 1), and whether that call is to the site's MPI function
    (mpi_send_@plt, MPI_Send@plt) or to something else (a function that tail-calls it)."""
    modules = {}
    counts = dict(sites=0, named=0, line=0, module=0, module_has_fn=0, wrong=0, missing=0,
                  at_call=0, to_it=0)
    wrong = []
    for site in report.get("sites", []):
        if site.get("language") == "python":
            continue
        counts["sites"] += 1
        module, offset, loc = site["module"], int(site["offset"]), site["location"]
        base = os.path.basename(module)
        if module not in modules:
            try:
                modules[module] = (file_bias(module), Symbols(module))
            except OSError as e:
                print("check-names: %s: %s" % (module, e.strerror), file=sys.stderr)
                modules[module] = None
        entry = modules[module]
        if entry is None:
            counts["missing"] += 1
            continue
        bias, syms = entry
        addr = offset + bias
        if calls:
            insn = call_before(module, addr + 1)
            if insn:
                counts["at_call"] += 1
                callee = re.search(r"<([^>@+]+)", insn)
                fn = site["function"].lower()
                if callee and callee.group(1).lower().rstrip("_") in (fn, "p" + fn):
                    counts["to_it"] += 1
                elif verbose:
                    print("  %s at %s+0x%x follows a call to another function: %s"
                          % (site["function"], base, offset, insn), file=out)
            else:
                print("  NOT AT A CALL: %s at %s+0x%x" % (site["function"], base, offset),
                      file=out)
        if loc == "%s+0x%x" % (base, offset):
            counts["module"] += 1
            around = [s for s in syms.containing(addr) if s[2] in "TtWwiI"]
            if around:
                counts["module_has_fn"] += 1
                if verbose:
                    print("  module+off, nm has %s: %s %s+0x%x" % (describe(around),
                          site["function"], base, offset), file=out)
            continue
        if LINE_NAME.match(loc):
            counts["line"] += 1
            continue
        counts["named"] += 1
        m = re.match(r"^(.*)\+0x([0-9a-f]+)$", loc, re.S)
        ok = False
        if m:
            name, fn_off = m.group(1), int(m.group(2), 16)
            ok = any(s[0] <= addr < s[0] + s[1] and addr - s[0] == fn_off
                     for s in syms.named(name))
        if not ok:
            counts["wrong"] += 1
            wrong.append((site, module, offset, addr, loc, syms))
        elif verbose:
            print("  ok: %s %s+0x%x = %s" % (site["function"], base, offset, loc), file=out)
    return counts, wrong


def self_test():
    """The check on a made-up report of sites in libc, whose exported functions nm -D sizes:
    a right name, a name at the wrong offset, a name of a function that does not contain the
    address, and a module+offset; 0 when each is counted as it should be."""
    libc = subprocess.run(["sh", "-c", "ldd /bin/sh | sed -n 's/.*=> \\(.*libc\\.so[^ ]*\\).*/\\1/p'"],
                          stdout=subprocess.PIPE, text=True).stdout.strip()
    syms = Symbols(libc)
    a = next(x for x in syms.by_name.get("getpid", []) if x[1] > 2)
    b = next(x for x in syms.by_name.get("getppid", []) if x[1] > 2)
    base = os.path.basename(libc)
    sites = [("getpid+0x1", a[0] + 1), ("getpid+0x2", a[0] + 1), ("getppid+0x1", a[0] + 1),
             ("%s+0x%x" % (base, a[0] + 1), a[0] + 1)]
    report = {"sites": [{"function": "MPI_Barrier", "module": libc, "offset": off,
                         "location": loc} for loc, off in sites]}
    with open(os.devnull, "w") as null:
        c, wrong = check_report(report, "self-test", False, False, null)
    ok = (c["sites"], c["named"], c["module"], c["wrong"]) == (4, 3, 1, 2) and b
    print("check-names self-test on %s (getpid at 0x%x): %s" % (libc, a[0],
          "ok" if ok else "FAILED: %r" % c))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*", metavar="LOG|JSON")
    ap.add_argument("--self-test", action="store_true",
                    help="check the check on made-up sites in libc, then exit")
    ap.add_argument("--noisetool", default="noisetool")
    ap.add_argument("--app", default=None, help="the name printed (default: the job's command)")
    ap.add_argument("--debug-dir", default=None, help="passed to noisetool report")
    ap.add_argument("-v", "--verbose", action="store_true", help="every site, checked or not")
    ap.add_argument("--calls", action="store_true",
                    help="also check with objdump that each site's address is in a call "
                         "instruction (about 50 ms a site)")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.inputs:
        ap.error("a log or a JSON report is needed")

    status = 0
    for path in args.inputs:
        if path.endswith(".json"):
            with open(path) as f:
                data = json.load(f)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                jpath = os.path.join(tmp, "report.json")
                cmd = [args.noisetool, "report", path, "--json", jpath, "--top", "0",
                       "--late", "0"]
                if args.debug_dir:
                    cmd += ["--debug-dir", args.debug_dir]
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True)
                if r.returncode != 0 or not os.path.exists(jpath):
                    print("check-names: %s failed on %s: %s" % (" ".join(cmd), path,
                          r.stderr.strip()[-500:]), file=sys.stderr)
                    status = 2
                    continue
                with open(jpath) as f:
                    data = json.load(f)
        for report in data if isinstance(data, list) else [data]:
            app = args.app or os.path.basename(
                report.get("job", {}).get("command", "").split(" ")[0]) or path
            c, wrong = check_report(report, app, args.verbose, args.calls, sys.stdout)
            print("names %s: sites %d, named %d, file:line %d, module+off %d (nm has a "
                  "function around %d), wrong %d%s%s" % (app, c["sites"], c["named"], c["line"],
                  c["module"], c["module_has_fn"], c["wrong"],
                  ", module unreadable %d" % c["missing"] if c["missing"] else "",
                  "; at a call %d (to the MPI function %d)" % (c["at_call"], c["to_it"])
                  if args.calls else ""))
            for site, module, offset, addr, loc, syms in wrong:
                print("  WRONG: %s at %s+0x%x (file address 0x%x): the report says %s; nm: %s"
                      % (site["function"], module, offset, addr, loc,
                         describe(syms.containing(addr))))
            if wrong:
                status = max(status, 1)
            elif c["missing"]:
                status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
