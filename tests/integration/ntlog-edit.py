#!/usr/bin/env python3
# Damages a job log on purpose, from the layout in doc/ntlog-format.md (read independently of
# the C reader): cut it, flip a byte, or set one field and fix the checksums so that only the
# value is wrong. `where` prints the byte offsets of the header, blocks, payloads and records.
import json
import struct
import sys
import zlib

HEADER = {"version": (8, "<I"), "nranks": (16, "<I"), "level": (24, "<I"),
          "clock_hz": (32, "<d")}
RANK = {"wall_ns": (8, "<Q"), "init_global_ns": (32, "<q"), "drift_ppb": (40, "<q"),
        "clock_error_ns": (48, "<Q")}
RECORD = {"site": (16, "<I"), "start_ns": (24, "<Q"), "duration_ns": (32, "<Q"),
          "interval_ns": (48, "<Q"), "p2p_ns": (56, "<Q"), "win_wall_ns": (64, "<Q")}
RECORD_BYTES = 140


def layout(b):
    """Offsets of every rank block: start, payload, its length, records, record count."""
    (nranks,) = struct.unpack_from("<I", b, 16)
    pos, ranks = 64, []
    for _ in range(nranks):
        assert b[pos:pos + 4] == b"NTRK"
        (plen,) = struct.unpack_from("<Q", b, pos + 8)
        p = pos + 24
        (nsites,) = struct.unpack_from("<I", b, p + 4)
        q = p + 96                                  # the fixed fields, then the host
        q += 4 + struct.unpack_from("<I", b, q)[0]
        for _ in range(nsites):
            for _ in range(2):                      # function, module
                q += 4 + struct.unpack_from("<I", b, q)[0]
            q += 6 * 8 + 48 * 8
            (depth,) = struct.unpack_from("<I", b, q)
            q += 4
            for _ in range(depth):
                q += 4 + struct.unpack_from("<I", b, q)[0] + 8
        (nrec,) = struct.unpack_from("<Q", b, q + 8)
        ranks.append({"block": pos, "payload": p, "payload_len": plen, "records": q + 16,
                      "nrecords": nrec})
        pos = p + plen
    return {"header": 0, "end": pos, "ranks": ranks}


def fix_crcs(b, lay):
    struct.pack_into("<I", b, 60, zlib.crc32(bytes(b[:60])))
    for r in lay["ranks"]:
        p, n = r["payload"], r["payload_len"]
        struct.pack_into("<I", b, r["block"] + 16, zlib.crc32(bytes(b[p:p + n])))


def main():
    args = sys.argv[1:]
    b = bytearray(open(args[0], "rb").read())
    if args[1] == "where":
        print(json.dumps(layout(b)))
        return
    out, op, rest = args[1], args[2], args[3:]
    if op == "cut":
        b = b[:int(rest[0])]
    elif op == "flip":
        b[int(rest[0])] ^= 0x5A
    elif op == "set":
        lay = layout(b)                             # before the edit: nranks may change
        where, rest = rest[0], rest[1:]
        if where == "header":                       # header FIELD VALUE
            off, fmt = HEADER[rest[0]]
        elif where == "rank":                       # rank R FIELD VALUE
            r = lay["ranks"][int(rest.pop(0))]
            off, fmt = RANK[rest[0]]
            off += r["payload"]
        else:                                       # record R K FIELD VALUE
            r = lay["ranks"][int(rest.pop(0))]
            k = int(rest.pop(0))
            off, fmt = RECORD[rest[0]]
            off += r["records"] + k * RECORD_BYTES
        value = float(rest[1]) if fmt == "<d" else int(rest[1], 0)
        struct.pack_into(fmt, b, off, value)
        fix_crcs(b, lay)
    else:
        sys.exit("ntlog-edit.py: unknown operation " + op)
    open(out, "wb").write(b)


main()
