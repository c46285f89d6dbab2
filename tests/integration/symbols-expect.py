#!/usr/bin/env python3
"""Call sites for make-ntlog in real modules, and the names addr2line gives them by hand.

  symbols-expect.py sites OUT N MODULE...   N call sites per module, at and just after its text
                                            symbols (nm), as the wrapper library would record
                                            them: offsets from the load base; 16-byte steps in
                                            modules without symbols. "FUNCTION OFFSET MODULE".
  symbols-expect.py check REPORT.JSON K
                                            every site's location in the report equals the name
                                            addr2line gives by hand, its function (and the
                                            offset in it) taken only when the address lies
                                            inside the symbol nearest before it (readelf -s)
                                            (one addr2line per module
                                            with all its addresses as arguments), and K of them
                                            also with one addr2line per address.
"""
import os
import random
import struct
import subprocess
import sys

FUNCTIONS = ["MPI_Allreduce", "MPI_Barrier", "MPI_Bcast"]


def elf_info(path):
    """(is a 64-bit ELF, its bias): the file address of offset 0. For a fixed-address executable
    (ET_EXEC) the first loadable segment's address less its file offset; else 0."""
    try:
        if not os.path.isfile(path):
            return False, 0
        with open(path, "rb") as f:
            eh = f.read(64)
            if len(eh) < 64 or eh[:4] != b"\x7fELF" or eh[4] != 2:
                return False, 0
            e_type, = struct.unpack_from("<H", eh, 16)
            e_phoff, = struct.unpack_from("<Q", eh, 32)
            e_phentsize, e_phnum = struct.unpack_from("<HH", eh, 54)
            if e_type != 2:  # ET_EXEC
                return True, 0
            for i in range(min(e_phnum, 64)):
                f.seek(e_phoff + i * e_phentsize)
                p_type, _, p_offset, p_vaddr = struct.unpack("<IIQQ", f.read(24))
                if p_type == 1:  # PT_LOAD
                    return True, p_vaddr - p_offset
            return True, 0
    except OSError:
        return False, 0


def text_symbols(path):
    for extra in ([], ["-D"]):
        out = subprocess.run(["nm", "--defined-only"] + extra + [path], capture_output=True,
                             text=True).stdout
        addrs = sorted({int(w[0], 16) for w in (l.split() for l in out.splitlines())
                        if len(w) == 3 and w[1] in "tTwW" and int(w[0], 16) > 0})
        if addrs:
            return addrs
    return []


def cmd_sites(out, n, modules):
    rnd = random.Random(1)
    lines = []
    for m in modules:
        elf, bias = elf_info(m)
        addrs = text_symbols(m) if elf else []
        for i in range(n):
            if addrs:
                offset = rnd.choice(addrs) + rnd.choice([0, 1, 4, 9, 17, 40]) - bias
            else:
                offset = 0x1000 + 16 * i
            lines.append("%s 0x%x %s" % (rnd.choice(FUNCTIONS), offset, m))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def function_ranges(path):
    """The (start, size) of the module's defined, sized FUNC and IFUNC symbols (.symtab and
    .dynsym, readelf), sorted, one per start: the largest."""
    out = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True).stdout
    best = {}
    for line in out.splitlines():
        w = line.split()
        if len(w) < 8 or not w[0].endswith(":") or w[3] not in ("FUNC", "IFUNC") or w[6] == "UND":
            continue
        start, size = int(w[1], 16), int(w[2], 0)
        if size:
            best[start] = max(size, best.get(start, 0))
    return sorted(best.items())


def inside(ranges, addr):
    """The offset of addr in the function symbol nearest before it when it lies inside it
    (tools/elfsyms.c), else None."""
    import bisect
    i = bisect.bisect_right(ranges, (addr, float("inf"))) - 1
    if i >= 0 and addr - ranges[i][0] < ranges[i][1]:
        return addr - ranges[i][0]
    return None


def name(fn, loc, in_function):
    """The report's name from addr2line's two lines (tools/symbolize.c), or None: a function
    and the offset in it only when the address lies inside it (in_function: the offset)."""
    loc = loc.split(" (discriminator")[0]
    if loc and not loc.startswith("??") and ":?" not in loc and ":0" not in loc:
        return loc.rsplit("/", 1)[-1]
    if fn and fn != "??" and in_function is not None:
        return "%s+0x%x" % (fn, in_function)
    return None


def addr2line(module, addrs):
    """Names of addrs in module, all from one addr2line run (None each when it fails)."""
    if not os.path.isfile(module):
        return [None] * len(addrs)
    r = subprocess.run(["addr2line", "-f", "-C", "-e", module] + ["0x%x" % a for a in addrs],
                       capture_output=True, text=True)
    lines = r.stdout.split("\n")
    if r.returncode != 0 or len(lines) < 2 * len(addrs):
        return [None] * len(addrs)
    ranges = function_ranges(module)
    return [name(lines[2 * i], lines[2 * i + 1], inside(ranges, addrs[i]))
            for i in range(len(addrs))]


def cmd_check(report, k):
    import json
    sites = json.load(open(report))["sites"]
    by_module = {}
    for s in sites:
        by_module.setdefault(s["module"], []).append(s)
    expect = {}
    for m, ss in by_module.items():
        bias = elf_info(m)[1]
        for i in range(0, len(ss), 500):
            chunk = ss[i:i + 500]
            for s, nm in zip(chunk, addr2line(m, [s["offset"] + bias for s in chunk])):
                fallback = "%s+0x%x" % (m.rsplit("/", 1)[-1], s["offset"])
                expect[(m, s["offset"])] = nm or fallback
    # addr2line's answer for an address without line information of its own can depend on the
    # addresses it was asked before in the same run (binutils 2.40: an ASan module constructor,
    # _sub_I_00099_1, is "ftq.c:?" alone and "ftq.c:261" after other addresses of the module).
    # A name that differs from the batch's is checked again with addr2line alone.
    order = 0
    bad = []
    for s in sites:
        key = (s["module"], s["offset"])
        if s["location"] == expect[key]:
            continue
        alone = addr2line(s["module"], [s["offset"] + elf_info(s["module"])[1]])[0]
        if alone is not None and alone == s["location"]:
            order += 1
            continue
        bad.append((s["module"], s["offset"], s["location"], expect[key], alone))
    if order:
        print("%d sites named by addr2line alone as the report does, otherwise in a batch" % order)
    for b in bad[:10]:
        print("FAIL: %s+0x%x: report says %r, addr2line %r (alone %r)" % b)
    # A few by hand, literally: one addr2line per address.
    rnd = random.Random(2)
    named = [s for s in sites
             if s["location"] != "%s+0x%x" % (s["module"].rsplit("/", 1)[-1], s["offset"])]
    for s in rnd.sample(named, min(k, len(named))):
        one = addr2line(s["module"], [s["offset"] + elf_info(s["module"])[1]])[0]
        if one != s["location"]:
            print("FAIL: %s+0x%x: report says %r, addr2line alone %r"
                  % (s["module"], s["offset"], s["location"], one))
            bad.append(s)
    distinct = len({s["location"] for s in sites})
    print("%d call sites in %d modules, %d distinct names, %d named by addr2line; %d differ"
          % (len(sites), len(by_module), distinct, len(named), len(bad)))
    return 1 if bad else 0


def main():
    a = sys.argv[1:]
    if len(a) >= 4 and a[0] == "sites":
        cmd_sites(a[1], int(a[2]), a[3:])
        return 0
    if len(a) == 3 and a[0] == "check":
        return cmd_check(a[1], int(a[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
