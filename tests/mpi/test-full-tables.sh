#!/usr/bin/env bash
# Request tables full: nonblocking starts beyond the table of outstanding requests are neither
# timed nor counted, persistent collectives beyond the table of persistent requests are never
# registered; the log counts both, so that each site's calls and its count of losses add up to
# what the program did, the report names both losses in the words rank 0 used on the job's
# stderr, and results are unchanged.
set -u
LIB=${1:?usage: test-full-tables.sh LIB PROGRAM NOISETOOL PYTHON3}
PROG=${2:?}
NT=${3:?}
PY=${4:?}
N=6000 # above the 4,096 entries of each table at the default NOISETOOL_MEM (wrappers/arena.c)
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }
run "$PROG" $N >"$tmp/plain" 2>&1 || { echo "FAIL: plain run"; cat "$tmp/plain"; exit 1; }
run -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_SUMMARY 0 \
	"$PROG" $N >"$tmp/pre" 2>"$tmp/pre.err" || { echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
cmp -s "$tmp/plain" "$tmp/pre" || { echo "FAIL: results differ"; diff "$tmp/plain" "$tmp/pre"; fail=1; }
log=$(ls "$tmp"/*.ntlog | head -n 1)
"$NT" report "$log" --no-symbols --json "$tmp/report.json" >"$tmp/report" ||
	{ echo "FAIL: report"; exit 1; }
echo "job's stderr:"
cat "$tmp/pre.err"
head -4 "$tmp/report"

# Persistent collectives are MPI 4: under an MPI 3 (Open MPI 4.1) only the request table fills.
mpi4=$([ "${NT_MPI_VERSION:-4}" -ge 4 ] && echo 1 || echo 0)
"$PY" - "$tmp/report.json" $N $mpi4 <<'PY' || fail=1
import json, sys
rep, n, mpi4 = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3] == "1"
losses = rep["losses"]
calls = {s["function"]: s["calls"] for s in rep["sites"]}
bad = 0
def check(ok, what):
    global bad
    print(("ok: " if ok else "FAIL: ") + what)
    bad |= not ok
check(rep["partial"] and rep["log_version"] == 9, "the log is version 9 and partial")
check(losses["untimed_instances"] > 0 and (losses["unregistered_persistent"] > 0) == mpi4,
      f"the tables overflowed: {losses}")
check(calls["MPI_Ibarrier"] + losses["untimed_instances"] == 2 * n,
      f"MPI_Ibarrier: {calls['MPI_Ibarrier']} timed + {losses['untimed_instances']} not = 2 x {n}")
check(calls.get("MPI_Barrier_init", 0) + losses["unregistered_persistent"] == 2 * n * mpi4,
      f"MPI_Barrier_init: {calls.get('MPI_Barrier_init', 0)} starts timed + "
      f"{losses['unregistered_persistent']} not registered = 2 x {n}")
for kind in losses:
    check(losses[kind] == sum(r[kind] for r in rep["rank_times"]), f"{kind}: the ranks' sum")
sys.exit(bad)
PY

# The report's lines and rank 0's stderr name the two losses in the same words.
whats=("nonblocking or persistent collective instances were not timed")
[ "$mpi4" = 0 ] || whats+=("persistent collectives were not registered")
for what in "${whats[@]}"; do
	line=$(grep -o "PARTIAL: [0-9]* $what (.*)" "$tmp/report")
	[ -n "$line" ] || { echo "FAIL: the report does not say '$what'"; fail=1; continue; }
	grep -qxF "noisetool: $line" "$tmp/pre.err" ||
		{ echo "FAIL: the job's stderr does not say '$line'"; fail=1; }
done
exit $fail
