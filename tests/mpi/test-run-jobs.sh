#!/usr/bin/env bash
# noisetool run reports its own job (issue 14): 20 times, two runs of one program started
# together with one --out directory, each with its own number of calls: 40 logs, and each run's
# report counts its own job's calls. And a run stopped by a time limit (timeout sends it
# SIGTERM) passes the signal to the job and reports what the ranks' live files hold. And
# (issue 36) a job whose processes did not form one MPI job: the program started by the other
# MPI's launcher, which gives it no process manager, runs as 3 jobs of 1 rank; noisetool run
# says so, with what to change, and still reports one of them.
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

# The other MPI's launcher (where it is installed): 3 jobs of 1 rank.
if [ "${NT_MPI:-mpich}" = ompi ]; then
	other=(mpiexec.mpich -n 3) mpi=openmpi
else
	other=(mpirun.openmpi --oversubscribe -n 3) mpi=mpich
	[ "$(id -u)" = 0 ] && other=(mpirun.openmpi --allow-run-as-root --oversubscribe -n 3)
fi
if command -v "${other[0]}" >/dev/null; then
	mkdir "$tmp/single"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 "$NT" run --mpi "$mpi" \
		--out "$tmp/single" --json "$tmp/single.json" -- "${other[@]}" "$LOOP" 50 \
		>"$tmp/single.out" 2>"$tmp/single.err"
	rc=$?
	n=$(ls "$tmp/single"/*.ntlog 2>/dev/null | wc -l)
	if [ $rc = 0 ] && [ "$n" = 3 ] &&
		grep -q "the job left 3 logs of 1 rank each: its processes did not form one MPI job" \
			"$tmp/single.err" && grep -q -- "--mpi=pmi2" "$tmp/single.err" &&
		python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["ranks"] != 1)' \
			"$tmp/single.json"; then
		echo "${other[0]} with a program of the other MPI: 3 jobs of 1 rank, said so"
	else
		echo "FAIL: ${other[0]} with a program of the other MPI: exit $rc, $n logs:"
		cat "$tmp/single.err"
		fail=1
	fi
else
	echo "(${other[0]} is not installed: no job of 1-rank processes tried)"
fi
exit $fail
