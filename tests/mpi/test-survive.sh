#!/usr/bin/env bash
# Jobs that end badly keep their measurement (issue 14): SIGKILL of one rank, SIGTERM of
# mpiexec, `timeout 2` on a 10 s job and MPI_Abort each leave the ranks' live files, from which
# `noisetool report` prints a report marked partial (while the job runs: saying its ranks still
# run), once the ranks have ended naming those that ended without MPI_Finalize, whose MPI_Allreduce count is what the ranks completed (each rank keeps its
# count in a file it maps, exact at its death; the tool counts a call before it returns, so
# at most one more per rank, within 1 %), and so is its count of the probes that found nothing
# (3 before each allreduce): most of them untimed, counted by their site's countdown, which
# the live file's reader adds (wrappers/sites.h). A clean run leaves only its log.
#
#   test-survive.sh LIB PROGRAM NOISETOOL        PROGRAM: killed
set -u
LIB=${1:?usage: test-survive.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_SUMMARY 0)

# start CASE LIMIT [ABORT]: the job in the background, into $tmp/CASE (its counts and logs);
# returns once both ranks have completed calls.
start() {
	local case=$1
	mkdir -p "$tmp/$case/out"
	setsid mpiexec -n 2 $(nt_bind 2) "${pre[@]}" -genv NOISETOOL_OUT "$tmp/$case/out" \
		"$PROG" "$tmp/$case" "$2" "${3:-0}" 3 >"$tmp/$case/stdout" 2>"$tmp/$case/stderr" &
	job=$!
	for _ in $(seq 200); do
		[ -s "$tmp/$case/count-0" ] && [ -s "$tmp/$case/count-1" ] && return 0
		sleep 0.05
	done
	echo "FAIL: $case: the job did not start"
	fail=1
	return 1
}

# ended CASE: wait (at most 20 s) until the job's ranks have ended: a launcher may return
# before its ranks do (Open MPI's mpirun, signalled), and until then their files still change.
# A zombie has ended.
ended() {
	local case=$1 k pid state
	for _ in $(seq 400); do
		local running=0
		for k in 0 1; do
			pid=$(cat "$tmp/$case/pid-$k" 2>/dev/null) || continue
			state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1) || continue
			case $state in '' | Z | X) ;; *) running=1 ;; esac
		done
		[ $running = 0 ] && return 0
		sleep 0.05
	done
	echo "FAIL: $case: the ranks still run 20 s after the launcher ended"
	fail=1
}

# judge CASE: the report of what the job left.
judge() {
	local case=$1 live
	ended "$case"
	live=$(ls -d "$tmp/$case"/out/*.live 2>/dev/null | head -n 1)
	if [ -z "$live" ]; then
		echo "FAIL: $case: no live files left: $(ls "$tmp/$case/out")"
		fail=1
		return
	fi
	if ! timeout 60 "$NT" report "$live" --json "$tmp/$case/report.json" >"$tmp/$case/report.txt" 2>&1; then
		echo "FAIL: $case: noisetool report"
		cat "$tmp/$case/report.txt"
		fail=1
		return
	fi
	grep -m1 "ranks, level" "$tmp/$case/report.txt"
	python3 - "$tmp/$case" "$case" "$PROG" <<'PY' || fail=1
import json, struct, sys
d, case = sys.argv[1:3]
r = json.load(open(d + "/report.json"))
counts = [struct.unpack("<QQ", open(f"{d}/count-{k}", "rb").read(16)) for k in (0, 1)]
did = sum(c[0] for c in counts)
counted = sum(s["calls"] for s in r["sites"] if s["function"] == "MPI_Allreduce")
polled = sum(c[1] for c in counts)
probes = sum(s["calls"] for s in r["sites"] if s["function"] == "MPI_Iprobe")
print(f"{case}: the ranks completed {did} MPI_Allreduce calls, the report counts {counted}; "
      f"{polled} probes, the report {probes}; "
      f"unfinished ranks {r['unfinished_ranks']}, missing {r['missing_ranks']}")
bad = 0
if not r["partial"] or not r["unfinished_ranks"]:
    print(f"FAIL: {case}: the report is not partial naming the unfinished ranks"); bad = 1
if r["running_ranks"]:
    print(f"FAIL: {case}: ranks {r['running_ranks']} said to run after they ended"); bad = 1
if not did <= counted <= did + 2 or abs(counted - did) > 0.01 * did:
    print(f"FAIL: {case}: counts differ by more than the calls in flight"); bad = 1
if not polled <= probes <= polled + 2:
    print(f"FAIL: {case}: probe counts differ by more than the calls in flight"); bad = 1
# The job's command line, from the live files (the program, then the directory it counts in).
if not r["job"]["command"].startswith(f"{sys.argv[3]} {d} ") or r["job"]["commands"] != 1:
    print(f"FAIL: {case}: the report's job {r['job']} does not name {sys.argv[3]} {d} ..."); bad = 1
sys.exit(bad)
PY
	grep -q "ended without MPI_Finalize" "$tmp/$case/report.txt" ||
		{ echo "FAIL: $case: the text does not say the ranks ended without MPI_Finalize"; fail=1; }
	if [ "$case" = abort ]; then
		grep -q "PARTIAL: rank 0 called MPI_Abort" "$tmp/$case/report.txt" ||
			{ echo "FAIL: abort: the report does not say rank 0 called MPI_Abort"; fail=1; }
	elif grep -q "MPI_Abort" "$tmp/$case/report.txt"; then
		echo "FAIL: $case: MPI_Abort named where none was called"; fail=1
	fi
}

# SIGKILL of rank 1 (mpiexec then ends the other).
if start kill 30; then
	sleep 0.5
	kill -KILL "$(cat "$tmp/kill/pid-1")"
	wait $job
	judge kill
fi
# SIGTERM of mpiexec; before it, a report of the job in progress says its ranks still run.
if start term 30; then
	sleep 0.5
	live=$(ls -d "$tmp/term"/out/*.live | head -n 1)
	if ! "$NT" report "$live" --json "$tmp/term/snapshot.json" >"$tmp/term/snapshot.txt" 2>&1 ||
		! grep -q "PARTIAL: ranks 0, 1 still run on this host" "$tmp/term/snapshot.txt" ||
		! python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["running_ranks"] != [0, 1])' \
			"$tmp/term/snapshot.json"; then
		echo "FAIL: term: a report of the running job does not say its ranks still run"
		cat "$tmp/term/snapshot.txt"
		fail=1
	fi
	kill -TERM $job
	wait $job
	judge term
fi
# A time limit: timeout 2 on a 10 s job.
mkdir -p "$tmp/limit/out"
timeout 2 mpiexec -n 2 $(nt_bind 2) "${pre[@]}" -genv NOISETOOL_OUT "$tmp/limit/out" \
	"$PROG" "$tmp/limit" 10 0 3 >/dev/null 2>&1
judge limit
# MPI_Abort after 20,000 calls.
mkdir -p "$tmp/abort/out"
timeout 60 mpiexec -n 2 $(nt_bind 2) "${pre[@]}" -genv NOISETOOL_OUT "$tmp/abort/out" \
	"$PROG" "$tmp/abort" 30 20000 3 >/dev/null 2>&1
judge abort
# A clean run: its log, and nothing else.
mkdir -p "$tmp/clean/out"
timeout 60 mpiexec -n 2 $(nt_bind 2) "${pre[@]}" -genv NOISETOOL_OUT "$tmp/clean/out" \
	"$PROG" "$tmp/clean" 0.5 >/dev/null 2>&1 || { echo "FAIL: clean run"; fail=1; }
left=$(ls "$tmp/clean/out" | grep -v '\.ntlog$')
[ "$(ls "$tmp"/clean/out/*.ntlog | wc -l)" -eq 1 ] && [ -z "$left" ] ||
	{ echo "FAIL: a clean run left: $(ls "$tmp/clean/out")"; fail=1; }
exit $fail
