#!/usr/bin/env bash
# MPI_Pcontrol as mpiP's (doc/environment.md): a pause on some ranks only changes nothing
# collective, and a reset forgets what it resets. Program: pcontrol.c.
#   pause: rank 1 pauses for N allreduces, in every wait mode (NOISETOOL_WAIT): the job ends
#          (a paused rank that stopped voting hung the others) with the output it has without
#          the library; only rank 0's allreduces are counted; the barriers after the resume are
#          instances N..N+M-1 on both ranks (a paused rank that stopped numbering joined
#          different calls across ranks), each recorded by both
#   reset: K barriers, MPI_Pcontrol(2), L allreduces: the barrier's site is gone from the
#          report, and every record is one of the allreduces, on both ranks (the barriers'
#          records went to the allreduce's site)
#
#   test-pcontrol.sh LIB PROGRAM NOISETOOL
set -u
usage="usage: test-pcontrol.sh LIB PROGRAM NOISETOOL"
LIB=${1:?$usage}
PROG=${2:?$usage}
NT=${3:?$usage}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_need_python "read the report"
nt_tmpdir
N=3000 M=10 K=10 L=10
fail=0

# launch RUN ARGS...: a 2-rank job into $tmp/RUN.out, .err and .rc (a hang is a failure).
launch() { nt_launch 60 "$1" -n 2 $(nt_bind 2) "${@:2}"; }

# check CASE A B WAIT: pcontrol CASE A B without the library and with it at NOISETOOL_WAIT=WAIT;
# the checks of CASE on its report and timeline.
check() {
	local case=$1 a=$2 b=$3 wait=$4 run=$1.$4 rc
	[ -e "$tmp/$case.plain.rc" ] || launch "$case.plain" "$PROG" "$case" "$a" "$b"
	if [ "$(cat "$tmp/$case.plain.rc")" -ne 0 ]; then
		echo "FAIL: $case without the library: exit $(cat "$tmp/$case.plain.rc")"
		cat "$tmp/$case.plain.out" "$tmp/$case.plain.err"
		fail=1
		return
	fi
	mkdir "$tmp/$run"
	launch "$run" -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/$run" \
		-genv NOISETOOL_WAIT "$wait" "$PROG" "$case" "$a" "$b"
	rc=$(cat "$tmp/$run.rc")
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: $case, NOISETOOL_WAIT=$wait: exit $rc$([ "$rc" -eq 124 ] && echo ' (hung)'), without the library 0"
		tail -n 20 "$tmp/$run.out" "$tmp/$run.err"
		fail=1
		return
	fi
	cmp -s "$tmp/$case.plain.out" "$tmp/$run.out" || {
		echo "FAIL: $case, NOISETOOL_WAIT=$wait: output differs"
		diff "$tmp/$case.plain.out" "$tmp/$run.out"
		fail=1
	}
	if ! "$NT" report "$tmp/$run"/*.ntlog --top 0 --no-symbols --json "$tmp/$run.json" \
		--perfetto "$tmp/$run.trace" >/dev/null; then
		echo "FAIL: $case, NOISETOOL_WAIT=$wait: no report"
		cat "$tmp/$run.err"
		fail=1
		return
	fi
	"$PY" - "$tmp/$run.json" "$tmp/$run.trace" "$case, NOISETOOL_WAIT=$wait" "$case" "$a" "$b" <<-'PY' || fail=1
		import json, sys
		report, trace = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
		what, case, a, b = sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
		calls = lambda f: sum(s["calls"] for s in report["sites"] if s["function"] == f)
		records = [e["args"] for e in trace["traceEvents"]
		           if e.get("ph") == "X" and "collective" in e.get("cat", "")]
		def seqs(rank, f):
		    return sorted(r["seq"] for r in records if r["rank"] == rank and r["function"] == f)
		bad = []
		if case == "pause":
		    want = {"MPI_Allreduce": a, "MPI_Barrier": 2 * b}
		    barriers = list(range(a, a + b))
		    for rank in (0, 1):
		        if seqs(rank, "MPI_Barrier") != barriers:
		            bad.append(f"rank {rank}'s barrier records are instances "
		                       f"{seqs(rank, 'MPI_Barrier')}, made {barriers[0]}..{barriers[-1]}")
		    if seqs(1, "MPI_Allreduce"):
		        bad.append(f"rank 1 recorded {len(seqs(1, 'MPI_Allreduce'))} allreduces while paused")
		    if [s for s in seqs(0, "MPI_Allreduce") if s >= a]:
		        bad.append("rank 0 has allreduce records after instance %d" % (a - 1))
		else:
		    want = {"MPI_Allreduce": 2 * b, "MPI_Barrier": 0}
		    allreduces = list(range(a, a + b))
		    for rank in (0, 1):
		        if seqs(rank, "MPI_Allreduce") != allreduces:
		            bad.append(f"rank {rank}'s allreduce records are instances "
		                       f"{seqs(rank, 'MPI_Allreduce')}, made {allreduces[0]}..{allreduces[-1]}")
		    others = [r for r in records if r["function"] != "MPI_Allreduce"]
		    if others:
		        bad.append(f"{len(others)} records of {sorted({r['function'] for r in others})} "
		                   "made before the reset are in the log")
		for f, n in want.items():
		    if calls(f) != n:
		        bad.append(f"{calls(f)} {f} calls counted, {n} made while recording")
		lost = {k: v for k, v in report["losses"].items() if v}
		if report["partial"] or lost:
		    bad.append(f"the report is partial (losses {lost or 'none'})")
		for m in bad:
		    print(f"FAIL: {what}: {m}")
		if not bad:
		    print(f"ok: {what}")
		sys.exit(1 if bad else 0)
	PY
}

for wait in mpi busy adaptive sleep; do
	check pause $N $M $wait
done
for wait in mpi adaptive; do
	check reset $K $L $wait
done
[ $fail -eq 0 ] && echo "MPI_Pcontrol: a pause on one rank changes nothing collective, a reset forgets its records"
exit $fail
