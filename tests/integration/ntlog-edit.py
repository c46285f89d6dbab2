#!/usr/bin/env python3
# Damages a job log on purpose, from the layout in doc/ntlog-format.md (read independently of
# the C reader): cut it, flip a byte, or set one field and fix the checksums so that only the
# value is wrong; or rewrites it as an older version wrote it (`as-version 6`, ... `1`).
# `where` prints the byte offsets of the header, blocks, payloads and records.
import json
import struct
import sys
import zlib

HEADER = {"version": (8, "<I"), "nranks": (16, "<I"), "level": (24, "<I"),
          "clock_hz": (32, "<d"), "poll_sample": (48, "<I")}
RANK = {"wall_ns": (8, "<Q"), "init_global_ns": (32, "<q"), "drift_ppb": (40, "<q"),
        "clock_error_ns": (48, "<Q"), "untimed_instances": (96, "<Q"),
        "unregistered_persistent": (104, "<Q"), "unknown_comm_records": (112, "<Q")}
RECORD = {"site": (16, "<I"), "start_ns": (24, "<Q"), "duration_ns": (32, "<Q"),
          "interval_ns": (48, "<Q"), "p2p_ns": (56, "<Q"), "win_wall_ns": (64, "<Q")}
LOSS_COUNTS = (96, 24)     # version 3's loss counts in the payload: offset, bytes
INTERVAL = (48, 16)        # version 2's interval fields in a record
SYS = (136, 8)             # version 5's window field sys_ns in a record
CPUS_TIMES = 4 * 8         # version 6's CPU times after the rank's CPU list
OTHER_TASK = 4 + 4 + 8 + 16  # version 7: an other task (pid, kind, run_ns, comm)
IRQ_LINE = 4 + 16 + 32 + 8   # version 7: an interrupt line or softirq kind
OTHERS_SPAN = 8 + 8          # version 9: the other tasks' span (from, the rank's run delay)


def fixed_bytes(version):
    """The payload's fixed fields before the host name."""
    return 120 if version >= 3 else 96


def record_bytes(version):
    return 148 if version >= 5 else 140 if version >= 2 else 124


def layout(b):
    """Offsets of every rank block: start, payload, its length, records, record count."""
    (version,) = struct.unpack_from("<I", b, 8)
    (nranks,) = struct.unpack_from("<I", b, 16)
    pos, ranks = 64, []
    for _ in range(nranks):
        assert b[pos:pos + 4] == b"NTRK"
        (plen,) = struct.unpack_from("<Q", b, pos + 8)
        p = pos + 24
        (nsites,) = struct.unpack_from("<I", b, p + 4)
        q = p + fixed_bytes(version)                # the fixed fields, then the host
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
        recs_end = q + 16 + nrec * record_bytes(version)
        ranks.append({"block": pos, "payload": p, "payload_len": plen, "records": q + 16,
                      "nrecords": nrec, "job": recs_end if version >= 4 else None})
        pos = p + plen
    return {"header": 0, "version": version, "end": pos, "ranks": ranks}


def fix_crcs(b, lay):
    struct.pack_into("<I", b, 60, zlib.crc32(bytes(b[:60])))
    for r in lay["ranks"]:
        p, n = r["payload"], r["payload_len"]
        struct.pack_into("<I", b, r["block"] + 16, zlib.crc32(bytes(b[p:p + n])))


def as_version(b, version):
    """The log as a build writing that version (1 to 8) wrote it: for 8 without the span of
    the other tasks; for 7 also without the user and batch job; for 6 also without the other tasks
    on the rank's CPUs; for 5 also without the rank's CPUs and the header's test-call sampling;
    for 4 also without the window's sys_ns, for 3 also without the job's command line, MPI
    library and tool version, for 2 also without the loss counts, and for 1 also without the
    interval fields; lengths and checksums fixed."""
    lay = layout(b)
    assert lay["version"] == 9 and version in (1, 2, 3, 4, 5, 6, 7, 8)
    out = bytearray(b[:64])
    struct.pack_into("<I", out, 8, version)
    if version < 6:
        struct.pack_into("<I", out, 48, 0)          # reserved before version 6
    for r in lay["ranks"]:
        p, n = r["payload"], r["payload_len"]
        payload = bytearray(b[p:p + n])
        if version == 8:                            # all stays but the span's two times
            del payload[-OTHERS_SPAN:]
            block = bytearray(b[r["block"]:p])
            struct.pack_into("<QI", block, 8, len(payload), zlib.crc32(bytes(payload)))
            out += block + payload
            continue
        q = r["job"] - p                            # after the job's three strings: the CPUs
        for _ in range(3):
            q += 4 + struct.unpack_from("<I", payload, q)[0]
        if version == 7:                            # the other tasks stay, the user goes
            q += 4 + struct.unpack_from("<I", payload, q)[0] + CPUS_TIMES
            q += 4 + 4 + 8 + 4
            q += 4 + struct.unpack_from("<I", payload, q)[0] * OTHER_TASK
            q += 8 + 8
            q += 4 + struct.unpack_from("<I", payload, q)[0] * IRQ_LINE
            q += 8                                  # scan_ns
            del payload[q:]
            block = bytearray(b[r["block"]:p])
            struct.pack_into("<QI", block, 8, len(payload), zlib.crc32(bytes(payload)))
            out += block + payload
            continue
        if version == 6:                            # the CPUs stay, the other tasks go
            q += 4 + struct.unpack_from("<I", payload, q)[0] + CPUS_TIMES
            del payload[q:]
            block = bytearray(b[r["block"]:p])
            struct.pack_into("<QI", block, 8, len(payload), zlib.crc32(bytes(payload)))
            out += block + payload
            continue
        del payload[q:]
        recs = r["records"] - p
        if version == 5:
            block = bytearray(b[r["block"]:p])
            struct.pack_into("<QI", block, 8, len(payload), zlib.crc32(bytes(payload)))
            out += block + payload
            continue
        for k in reversed(range(r["nrecords"])):    # version 5's sys_ns out of each record
            at = recs + k * 148 + SYS[0]
            del payload[at:at + SYS[1]]
        if version <= 3:                            # the job's three strings end the payload
            del payload[r["job"] - p - 8 * r["nrecords"]:]
        if version <= 2:
            recs -= LOSS_COUNTS[1]                  # where they start after the cut below
            del payload[LOSS_COUNTS[0]:LOSS_COUNTS[0] + LOSS_COUNTS[1]]
        if version == 1:
            for k in reversed(range(r["nrecords"])):
                at = recs + k * 140 + INTERVAL[0]
                del payload[at:at + INTERVAL[1]]
        block = bytearray(b[r["block"]:p])
        struct.pack_into("<QI", block, 8, len(payload), zlib.crc32(bytes(payload)))
        out += block + payload
    struct.pack_into("<I", out, 60, zlib.crc32(bytes(out[:60])))
    return out


def main():
    args = sys.argv[1:]
    b = bytearray(open(args[0], "rb").read())
    if args[1] == "where":
        print(json.dumps(layout(b)))
        return
    out, op, rest = args[1], args[2], args[3:]
    if op == "cut":
        b = b[:int(rest[0])]
    elif op == "as-version":
        b = as_version(b, int(rest[0]))
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
            off += r["records"] + k * record_bytes(lay["version"])
        value = float(rest[1]) if fmt == "<d" else int(rest[1], 0)
        struct.pack_into(fmt, b, off, value)
        fix_crcs(b, lay)
    else:
        sys.exit("ntlog-edit.py: unknown operation " + op)
    open(out, "wb").write(b)


main()
