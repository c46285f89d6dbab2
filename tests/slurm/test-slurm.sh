#!/usr/bin/env bash
# noisetool run under a real Slurm (issue 36 item 1): a private slurmctld and slurmd of this
# host that the test starts and stops (slurm-lib.sh; as root, skipped with the reason
# elsewhere). For the MPI under test (NT_MPI: MPICH through srun --mpi=pmi2, Open MPI through
# --mpi=pmix):
#   - noisetool run -- srun -n 2 LOOP: one job of 2 ranks, every allreduce counted;
#   - MPICH with srun --mpi=none: 2 jobs of 1 rank, which exit 0; noisetool run says so and
#     what to change;
#   - a batch script whose last line is `exec noisetool run ... -- srun ... KILLED`, cancelled
#     with scancel while it runs (the SIGCONT, SIGTERM, SIGKILL that a time limit sends, at
#     once): the report of the ranks' live files is written, partial, naming the ranks that
#     ended early.
#
#   test-slurm.sh NOISETOOL LOOP KILLED
set -u
NT=${1:?usage: test-slurm.sh NOISETOOL LOOP KILLED}
LOOP=${2:?}
KILLED=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/slurm-lib.sh"
nt_slurm_start
fail=0
plugin=pmi2
[ "${NT_MPI:-mpich}" = ompi ] && plugin=pmix
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# One job of 2 ranks.
mkdir "$tmp/one"
timeout 120 "$NT" run --out "$tmp/one" --json "$tmp/one.json" -- srun --mpi=$plugin -n 2 \
	"$LOOP" 300 >"$tmp/one.out" 2>"$tmp/one.err"
rc=$?
if [ $rc = 0 ] && python3 - "$tmp/one.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
calls = sum(s["calls"] for s in r["sites"] if s["function"] == "MPI_Allreduce")
print(f"srun: {r['ranks']} ranks, {calls} allreduce calls")
sys.exit(0 if r["ranks"] == 2 and calls == 600 and not r["partial"] else 1)
PY
	:
else
	echo "FAIL: noisetool run -- srun --mpi=$plugin -n 2: exit $rc"
	cat "$tmp/one.err"
	nt_slurm_logs
	fail=1
fi

# MPICH without its process manager: 2 jobs of 1 rank, said so.
if [ $plugin = pmi2 ]; then
	mkdir "$tmp/none"
	timeout 120 "$NT" run --out "$tmp/none" -- srun --mpi=none -n 2 "$LOOP" 50 \
		>"$tmp/none.out" 2>"$tmp/none.err"
	rc=$?
	n=$(ls "$tmp/none"/*.ntlog 2>/dev/null | wc -l)
	if [ $rc = 0 ] && [ "$n" = 2 ] &&
		grep -q "the job left 2 logs of 1 rank each" "$tmp/none.err" &&
		grep -q -- "--mpi=pmi2" "$tmp/none.err"; then
		echo "srun --mpi=none: 2 jobs of 1 rank, said so"
	else
		echo "FAIL: srun --mpi=none: exit $rc, $n logs"
		cat "$tmp/none.err"
		fail=1
	fi
fi

# A batch job cancelled while it runs.
mkdir "$tmp/batch"
cat >"$tmp/batch/job.sh" <<EOF
#!/bin/bash
exec "$NT" run --out "$tmp/batch" --json "$tmp/batch/report.json" -- srun --mpi=$plugin -n 2 "$KILLED" "$tmp/batch" 60
EOF
job=$(sbatch -n 2 --parsable -o "$tmp/batch/out.txt" "$tmp/batch/job.sh") ||
	{ echo "FAIL: sbatch"; nt_slurm_logs; exit 1; }
# Cancel once both ranks have counted calls (each writes its count to count-RANK).
for _ in $(seq 300); do
	[ -s "$tmp/batch/count-0" ] && [ -s "$tmp/batch/count-1" ] && break
	sleep 0.1
done
sleep 0.5
scancel "$job"
for _ in $(seq 300); do
	[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
	sleep 0.1
done
if python3 - "$tmp/batch/report.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
print(f"sbatch, scancel: a partial report of {r['ranks']} ranks, unfinished {r['unfinished_ranks']}")
sys.exit(0 if r["partial"] and r["ranks"] == 2 and sorted(r["unfinished_ranks"]) == [0, 1] else 1)
PY
	:
else
	echo "FAIL: the cancelled batch job left no partial report of 2 unfinished ranks:"
	cat "$tmp/batch/out.txt"
	nt_slurm_logs
	fail=1
fi
exit $fail
