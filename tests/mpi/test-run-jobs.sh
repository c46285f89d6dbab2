#!/usr/bin/env bash
# noisetool run reports its own job (issue 14): 20 times, two runs of one program started
# together with one --out directory, each with its own number of calls: 40 logs, and each run's
# report counts its own job's calls. And a run stopped by a time limit (timeout sends it
# SIGTERM) passes the signal to the job and reports what the ranks' live files hold.
#
#   test-run-jobs.sh NOISETOOL ALLREDUCE-LOOP KILLED
set -u
NT=${1:?usage: test-run-jobs.sh NOISETOOL ALLREDUCE-LOOP KILLED}
LOOP=${2:?}
KILLED=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
PAIRS=20
fail=0
run() { timeout 120 "$NT" run --out "$tmp/out" --json "$1" -- mpiexec -n 2 $(nt_bind 2) "$LOOP" "$2"; }
calls() { python3 -c 'import json, sys
print(sum(s["calls"] for s in json.load(open(sys.argv[1]))["sites"] if s["function"] == "MPI_Allreduce"))' "$1"; }

for i in $(seq "$PAIRS"); do
	run "$tmp/a$i.json" 300 >/dev/null 2>"$tmp/a$i.err" &
	run "$tmp/b$i.json" 500 >/dev/null 2>"$tmp/b$i.err" &
	wait
	a=$(calls "$tmp/a$i.json" 2>/dev/null) b=$(calls "$tmp/b$i.json" 2>/dev/null)
	[ "$a" = 600 ] && [ "$b" = 1000 ] ||
		{ echo "FAIL: pair $i: the reports count $a and $b calls, their jobs made 600 and 1000"; fail=1; }
done
logs=$(ls "$tmp"/out/*.ntlog | wc -l)
echo "$PAIRS pairs of noisetool run in one directory: $logs logs, each run reporting its own job"
[ "$logs" -eq $((2 * PAIRS)) ] || { echo "FAIL: want $((2 * PAIRS)) logs"; fail=1; }

# A time limit: timeout stops noisetool run, which stops the job and reports its live files.
mkdir "$tmp/limit"
timeout -s TERM 2 "$NT" run --out "$tmp/limit" --json "$tmp/limit.json" -- \
	mpiexec -n 2 $(nt_bind 2) "$KILLED" "$tmp/limit" 30 >"$tmp/limit.out" 2>"$tmp/limit.err"
grep "noisetool run:" "$tmp/limit.err"
python3 - "$tmp/limit.json" "$tmp/limit" <<'PY' || fail=1
import json, struct, sys
r = json.load(open(sys.argv[1]))
did = sum(struct.unpack("<Q", open(f"{sys.argv[2]}/count-{k}", "rb").read(8))[0] for k in (0, 1))
counted = sum(s["calls"] for s in r["sites"] if s["function"] == "MPI_Allreduce")
print(f"run under timeout 2: the ranks completed {did} calls, the report counts {counted}; "
      f"unfinished ranks {r['unfinished_ranks']}")
sys.exit(0 if r["partial"] and r["unfinished_ranks"] and did <= counted <= did + 2 else 1)
PY
exit $fail
