#!/usr/bin/env bash
# noisetool report --perfetto: the trace of made-up logs of 1 to 17 ranks (and, with --job, of a
# real 2-rank job with noise injected into rank 1) is valid trace-event JSON (validate-trace.py)
# with one slice per record of the log, one late-arrival slice per late instance of the report,
# on the last arriver's track with the report's delay; and the output rules: an input is never
# the output, a FIFO is written in place, a failed write leaves nothing and keeps the old file.
#
#   test-perfetto.sh NOISETOOL VALIDATE MAKE_NTLOG
#   test-perfetto.sh --job NOISETOOL VALIDATE LIB PROGRAM     (tests/mpi, once per MPI)
set -u
job=
if [ "${1:-}" = --job ]; then
	job=1
	shift
fi
NT=${1:?usage: test-perfetto.sh [--job] NOISETOOL VALIDATE (MAKE_NTLOG | LIB PROGRAM)}
VALIDATE=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
fail=0
nt_need_python "read the trace"

# check LOG NAME: report LOG as JSON and as a trace; the trace is valid, has the log's records
# and late instances as slices, and each late arrival is on its last arriver's track with the
# report's delay and causes.
check() {
	local log=$1 name=$2
	if ! "$NT" report "$log" --no-symbols --json "$tmp/$name.json" --perfetto "$tmp/$name.trace" \
		>/dev/null 2>"$tmp/err"; then
		echo "FAIL: $name: noisetool report --perfetto failed:"
		cat "$tmp/err"
		fail=1
		return
	fi
	local counts
	counts=$("$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(k["records"] for k in r["rank_times"]), r["attribution"]["instances_late"])' \
		"$tmp/$name.json") || { echo "FAIL: $name: the JSON report"; fail=1; return; }
	set -- $counts
	"$PY" "$VALIDATE" "$tmp/$name.trace" --records "$1" --late "$2" || fail=1
	"$PY" - "$tmp/$name.json" "$tmp/$name.trace" "$name" <<'EOF' || fail=1
import json, sys
rep, trace, name = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
ev = trace["traceEvents"]
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["name"] == "thread_name"}
procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
bad = 0
def fail(msg):
    global bad
    print(f"FAIL: {name}: {msg}")
    bad = 1
hosts = {k["host"] for k in rep["rank_times"]}
if set(procs.values()) != hosts:
    fail(f"processes {sorted(procs.values())}, hosts {sorted(hosts)}")
late = {(l["comm_id"], l["seq"]): l for l in rep["late_instances"]}
causes = [c["json"] for c in rep["causes"]]  # the report's own list (NT_CAUSES)
seen = set()
per_rank = {}
for e in ev:
    if e["ph"] != "X" or "collective" not in e["cat"].split(","):
        continue
    a = e["args"]
    per_rank[a["rank"]] = per_rank.get(a["rank"], 0) + 1
    track = threads.get((e["pid"], e["tid"]), "")
    if not (track == f"rank {a['rank']}" or track.startswith(f"rank {a['rank']} overlapping")):
        fail(f"a slice of rank {a['rank']} on track {track!r}")
    if procs.get(e["pid"]) != rep["rank_times"][a["rank"]]["host"]:
        fail(f"rank {a['rank']}'s slice not under its host")
    # dur is on the global time base: the rank's own time scaled by its clock's drift (a
    # short job's estimate may be far from 0: 262 ppm seen, within its clock error), and
    # rounded to the ns
    drift = abs(rep["rank_times"][a["rank"]]["drift_ppb"]) / 1e9
    if a["time_in_call_ns"] and "dur_cut_ns" not in a and \
            abs(e["dur"] * 1e3 - a["time_in_call_ns"]) > 1 + a["time_in_call_ns"] * (drift + 1e-6):
        fail(f"dur {e['dur']} us for {a['time_in_call_ns']} ns in the call")
    if not a["late_arrival"]:
        continue
    key = (a["comm_id"], a["seq"])
    seen.add(key)
    l = late.get(key)
    if l is None:
        if len(rep["late_instances"]) < 1000:
            fail(f"late arrival {key} is not a late instance of the report")
        continue
    if l["last_rank"] != a["rank"] or a["last_arriver"] != a["rank"]:
        fail(f"late arrival {key} on rank {a['rank']}, the report says {l['last_rank']}")
    if a["instance_delay_ns"] != l["delay_ns"] or any(a[c] != l["causes"][c] for c in causes):
        fail(f"late arrival {key}: delay or causes differ from the report")
    if not e["name"].endswith("(late arrival)"):
        fail(f"late arrival {key} named {e['name']!r}")
missing = set(late) - seen
if missing:
    fail(f"late instances without a late-arrival slice: {sorted(missing)[:5]}")
for k in rep["rank_times"]:
    if per_rank.get(k["rank"], 0) != k["records"]:
        fail(f"rank {k['rank']}: {per_rank.get(k['rank'], 0)} slices, {k['records']} records")
injected = sum(e["args"]["injected_ns"] for e in ev if e.get("cat") == "injected")
windows = sum(e["args"].get("window_injected_ns", 0) for e in ev
              if e["ph"] == "X" and "collective" in e["cat"])
if injected != windows:
    fail(f"injected slices hold {injected} ns, the windows {windows} ns")
if not bad:
    print(f"{name}: {sum(per_rank.values())} slices on {len(per_rank)} ranks, "
          f"{len(seen)} late arrivals, {injected} ns injected: as the report says")
sys.exit(bad)
EOF
}

if [ -n "$job" ]; then
	LIB=${3:?}
	PROG=${4:?}
	nt_need_mpiexec
	mkdir "$tmp/logs"
	# 2 ms period, 300 us detours on rank 1: its windows carry injected time, it arrives late.
	timeout 120 mpiexec -n 2 $(nt_bind 2) -genv LD_PRELOAD "$(nt_preload "$LIB")" \
		-genv NOISETOOL_OUT "$tmp/logs" \
		-genv NOISETOOL_INJECT period=2ms,detour=300us,ranks=1 "$PROG" 20000 \
		>"$tmp/job.out" 2>&1 || { echo "FAIL: the job"; cat "$tmp/job.out"; exit 1; }
	logs=("$tmp"/logs/*.ntlog)
	[ -f "${logs[0]}" ] || { echo "FAIL: no log"; cat "$tmp/job.out"; exit 1; }
	check "${logs[0]}" job
	exit $fail
fi

MAKE=${3:?}
for n in 1 2 5 17; do
	"$MAKE" "$tmp/r$n.ntlog" $n || { echo "FAIL: make-ntlog $n"; exit 1; }
	check "$tmp/r$n.ntlog" "r$n"
done

# The validator itself refuses what a viewer would not read.
"$PY" - "$tmp/r2.trace" "$tmp/broken" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
ev = doc["traceEvents"]
x = next(i for i, e in enumerate(ev) if e["ph"] == "X")
cases = {
    "negative-dur": lambda d: d["traceEvents"][x].update(dur=-1),
    "no-thread-name": lambda d: d.update(traceEvents=[e for e in d["traceEvents"]
                                                      if e["name"] != "thread_name"]),
    "string-counter": lambda d: d["traceEvents"].append(
        {"ph": "C", "name": "c", "pid": 1, "tid": 1, "ts": 1, "args": {"v": "1"}}),
    "unclosed-B": lambda d: d["traceEvents"].append(
        {"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 1e9}),
    "backwards": lambda d: d["traceEvents"].append(dict(d["traceEvents"][x], ts=0)),
    "no-ts": lambda d: d["traceEvents"][x].pop("ts"),
}
for name, damage in cases.items():
    d = json.loads(json.dumps(doc))
    damage(d)
    json.dump(d, open(f"{sys.argv[2]}-{name}.trace", "w"))
EOF
for f in "$tmp"/broken-*.trace; do
	if "$PY" "$VALIDATE" "$f" >/dev/null; then
		echo "FAIL: validate-trace.py accepted $(basename "$f")"
		fail=1
	fi
done
"$PY" "$VALIDATE" "$tmp/r2.trace" --records 5 >/dev/null &&
	{ echo "FAIL: validate-trace.py accepted a wrong record count"; fail=1; }

# An input is never the output: refused, the log unchanged.
cp "$tmp/r2.ntlog" "$tmp/r2.copy"
if "$NT" report "$tmp/r2.ntlog" --perfetto "$tmp/r2.ntlog" >/dev/null 2>"$tmp/err"; then
	echo "FAIL: the log as --perfetto was accepted"
	fail=1
fi
cmp -s "$tmp/r2.ntlog" "$tmp/r2.copy" || { echo "FAIL: the log was changed"; fail=1; }
[ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: not one line:"; cat "$tmp/err"; fail=1; }

# A FIFO is written in place (its reader gets the trace; it stays a FIFO).
# The shell holds the FIFO open for writing until noisetool is done: that open waits for the
# reader (noisetool's own, O_NONBLOCK, would fail without one), and the reader sees the end
# only when both have closed it.
mkfifo "$tmp/fifo"
timeout 60 cat "$tmp/fifo" >"$tmp/from-fifo" &
reader=$!
exec 3>"$tmp/fifo"
"$NT" report "$tmp/r5.ntlog" --no-symbols --perfetto "$tmp/fifo" >/dev/null 2>"$tmp/err" ||
	{ echo "FAIL: --perfetto FIFO:"; cat "$tmp/err"; fail=1; }
exec 3>&-
wait $reader
[ -p "$tmp/fifo" ] || { echo "FAIL: the FIFO was replaced"; fail=1; }
cmp -s "$tmp/from-fifo" "$tmp/r5.trace" || { echo "FAIL: the FIFO's reader got another trace"; fail=1; }

# A failed write (the file size limit, EFBIG) leaves nothing: no new file, no temporary file,
# and a file it was to replace unchanged.
echo old >"$tmp/old.trace"
for out in new.trace old.trace; do
	if (trap '' XFSZ; ulimit -f 8; exec "$NT" report "$tmp/r17.ntlog" --no-symbols \
		--perfetto "$tmp/$out" >/dev/null 2>"$tmp/err"); then
		echo "FAIL: a write past the size limit succeeded ($out)"
		fail=1
	fi
	[ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: not one line:"; cat "$tmp/err"; fail=1; }
done
[ ! -e "$tmp/new.trace" ] || { echo "FAIL: a failed write left new.trace"; fail=1; }
[ "$(cat "$tmp/old.trace")" = old ] || { echo "FAIL: a failed write changed old.trace"; fail=1; }
ls "$tmp" | grep -q '\.tmp\.' && { echo "FAIL: a temporary file was left"; ls "$tmp"; fail=1; }
# A device that fails: one line, status 1.
if "$NT" report "$tmp/r2.ntlog" --perfetto /dev/full >/dev/null 2>"$tmp/err"; then
	echo "FAIL: --perfetto /dev/full succeeded"
	fail=1
fi
grep -q "perfetto" "$tmp/err" || { echo "FAIL: /dev/full: no reason:"; cat "$tmp/err"; fail=1; }
exit $fail
