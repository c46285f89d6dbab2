#!/usr/bin/env python3
"""Validate a Chrome trace-event JSON file (noisetool report --perfetto) against the format as
Chrome and Perfetto read it, and against what the log holds.

  validate-trace.py TRACE [--records N] [--late N] [--json OUT]

Checks: the document parses and is {"traceEvents": [...], ...}; every event has name, ph, ts,
pid, tid (numbers where numbers are due); ph is one of X B E C M i I; dur >= 0 on X; a C
event's args are all numbers; every B is closed by an E on the same track, in order; per track
(pid, tid) the slices' timestamps never go back and a slice that starts inside another ends
inside it (tracks nest); per counter (pid, name) timestamps never go back; metadata
(process_name, thread_name) names every pid and (pid, tid) used. With --records N, the number
of collective-instance slices (cat "collective...") is N; with --late N, the number of late
arrival slices (args.late_arrival true) is N. Prints one line per problem and exits 1, else
prints a summary and exits 0. --json writes the summary (counts per kind) for the caller."""
import argparse
import json
import math
import sys
from collections import defaultdict

PHASES = set("XBECMiI")


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def validate(doc, records=None, late=None):
    problems = []

    def bad(msg):
        if len(problems) < 50:
            problems.append(msg)

    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ['not {"traceEvents": [...]}'], {}
    events = doc["traceEvents"]
    unit = doc.get("displayTimeUnit")
    if unit is not None and unit not in ("ms", "ns"):
        bad(f"displayTimeUnit {unit!r}: Chrome reads ms or ns")
    procs, threads = set(), set()
    used_pids, used_tracks = set(), set()
    last_slice = {}   # (pid, tid) -> ts of the last slice begun
    open_ends = defaultdict(list)  # (pid, tid) -> end times of enclosing X slices
    open_b = defaultdict(list)     # (pid, tid) -> names of open B events
    last_counter = {}  # (pid, name) -> ts
    summary = defaultdict(int)
    for n, e in enumerate(events):
        where = f"event {n}"
        if not isinstance(e, dict):
            bad(f"{where}: not an object")
            continue
        for key in ("name", "ph", "pid", "tid"):
            if key not in e:
                bad(f"{where}: no {key!r}")
        ph = e.get("ph")
        if ph not in PHASES:
            bad(f"{where}: ph {ph!r} is not one of {''.join(sorted(PHASES))}")
            continue
        if ph != "M" and "ts" not in e:
            bad(f"{where}: no 'ts'")
            continue
        if not isinstance(e.get("name"), str):
            bad(f"{where}: name is not a string")
        pid, tid, ts = e.get("pid"), e.get("tid"), e.get("ts", 0)
        if not is_num(pid) or not is_num(tid):
            bad(f"{where}: pid/tid not numbers")
            continue
        if not is_num(ts):
            bad(f"{where}: ts {ts!r} is not a number")
            continue
        args = e.get("args", {})
        if not isinstance(args, dict):
            bad(f"{where}: args is not an object")
            args = {}
        track = (pid, tid)
        if ph == "M":
            summary["metadata"] += 1
            if e["name"] == "process_name":
                if not isinstance(args.get("name"), str):
                    bad(f"{where}: process_name without args.name")
                procs.add(pid)
            elif e["name"] == "thread_name":
                if not isinstance(args.get("name"), str):
                    bad(f"{where}: thread_name without args.name")
                threads.add(track)
            elif e["name"] in ("process_sort_index", "thread_sort_index"):
                if not is_num(args.get("sort_index")):
                    bad(f"{where}: {e['name']} without a numeric args.sort_index")
            continue
        used_pids.add(pid)
        if ph == "C":
            summary["counter"] += 1
            if not args or not all(is_num(v) for v in args.values()):
                bad(f"{where}: counter {e.get('name')!r} args are not all numbers: {args}")
            key = (pid, e.get("name"))
            if key in last_counter and ts < last_counter[key]:
                bad(f"{where}: counter {key} goes back in time ({ts} < {last_counter[key]})")
            last_counter[key] = ts
            continue
        used_tracks.add(track)
        if ph in "iI":
            summary["instant"] += 1
            continue
        if ph in "XB":
            if track in last_slice and ts < last_slice[track]:
                bad(f"{where}: track {track} goes back in time ({ts} < {last_slice[track]})")
            last_slice[track] = ts
            stack = open_ends[track]
            while stack and stack[-1] <= ts:
                stack.pop()
        if ph == "X":
            dur = e.get("dur")
            if not is_num(dur) or dur < 0:
                bad(f"{where}: X with dur {dur!r}")
                continue
            stack = open_ends[track]
            # A slice that starts inside another ends inside it (1 ns of rounding allowed).
            if stack and ts + dur > stack[-1] + 1e-3:
                bad(f"{where}: slice [{ts}, {ts + dur}] on track {track} overlaps the one "
                    f"ending at {stack[-1]} without nesting")
            stack.append(ts + dur)
            cat = e.get("cat", "")
            if "collective" in cat.split(","):
                summary["collective"] += 1
                if args.get("late_arrival") is True:
                    summary["late_arrival"] += 1
                    if "late_arrival" not in cat.split(","):
                        bad(f"{where}: a late arrival without the late_arrival category")
            elif cat == "injected":
                summary["injected"] += 1
            else:
                summary["other_slice"] += 1
        elif ph == "B":
            open_b[track].append(e["name"])
            summary["begin"] += 1
        elif ph == "E":
            if not open_b[track]:
                bad(f"{where}: E without a B on track {track}")
            else:
                open_b[track].pop()
    for track, names in open_b.items():
        if names:
            bad(f"track {track}: {len(names)} B events never closed ({names[-1]!r})")
    for pid in sorted(used_pids - procs):
        bad(f"pid {pid} has no process_name metadata")
    for track in sorted(used_tracks - threads):
        bad(f"track {track} has no thread_name metadata")
    if records is not None and summary["collective"] != records:
        bad(f"{summary['collective']} collective-instance slices, the log has {records} records")
    if late is not None and summary["late_arrival"] != late:
        bad(f"{summary['late_arrival']} late-arrival slices, the report has {late} late instances")
    summary["events"] = len(events)
    summary["processes"] = len(procs)
    summary["threads"] = len(threads)
    summary["counter_tracks"] = len(last_counter)
    return problems, dict(summary)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--records", type=int)
    ap.add_argument("--late", type=int)
    ap.add_argument("--json")
    o = ap.parse_args()
    try:
        with open(o.trace, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        print(f"FAIL: {o.trace}: does not parse: {e}")
        return 1
    problems, summary = validate(doc, o.records, o.late)
    for p in problems:
        print(f"FAIL: {o.trace}: {p}")
    if o.json:
        with open(o.json, "w") as f:
            json.dump(summary, f)
    if not problems:
        print(f"{o.trace}: valid; " + ", ".join(f"{k} {v}" for k, v in sorted(summary.items())))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
