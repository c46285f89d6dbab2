#!/usr/bin/env bash
# noisetool run under a real Slurm (issue 36 item 1): a private slurmctld and slurmd of this
# host that the test starts and stops (slurm-lib.sh; as root, skipped with the reason
# elsewhere). For the MPI under test (NT_MPI: MPICH through srun --mpi=pmi2, Open MPI through
# --mpi=pmix):
#   - noisetool run -- srun -n 2 LOOP: one job of 2 ranks, every allreduce counted, the batch
#     job, its node and user in the report (log version 8);
#   - MPICH with srun --mpi=none: 2 jobs of 1 rank, which exit 0; noisetool run says so and
#     what to change;
#   - a batch script whose last line is `exec noisetool run ... -- srun ... KILLED`, cancelled
#     with scancel while it runs (the SIGCONT, SIGTERM, SIGKILL that a time limit sends, at
#     once): the report of the ranks' live files is written, partial, naming the ranks that
#     ended early.
#
# With the SPANK plugin (SPANK, where it was built: Slurm's spank.h), through plugstack.conf
# (rewritten between steps: each reads it as it starts):
#   - srun --noisetool: the log in the site directory DIR/YYYY/MM/DD, named slurm-JOB.STEP,
#     complete; --noisetool=timing: that level; a user's NOISETOOL_OUT wins;
#   - sbatch --noisetool: its steps are measured;
#   - default=on: every step measured, --no-noisetool opts out; a site directory that cannot
#     be made: one line, the job runs and succeeds, no log.
#
#   test-slurm.sh NOISETOOL LOOP KILLED [SPANK LIB]     LIB: the wrapper library of NT_MPI
set -u
NT=${1:?usage: test-slurm.sh NOISETOOL LOOP KILLED [SPANK LIB]}
LOOP=${2:?}
KILLED=${3:?}
SPANK=${4:-}
LIB=${5:-}
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
if [ $rc = 0 ] && python3 - "$tmp/one.json" "$(hostname -s)" "$(id -un)" <<'PY'; then
import json, re, sys
r = json.load(open(sys.argv[1]))
calls = sum(s["calls"] for s in r["sites"] if s["function"] == "MPI_Allreduce")
job = r["job"]
print(f"srun: {r['ranks']} ranks, {calls} allreduce calls; batch job {job['batch_system']} "
      f"{job['batch_job']} on {job['batch_nodes']}, user {job['user']}")
sys.exit(0 if r["ranks"] == 2 and calls == 600 and not r["partial"] and
         job["batch_system"] == "slurm" and re.fullmatch(r"[0-9]+\.0", job["batch_job"]) and
         job["batch_nodes"] == sys.argv[2] and job["user"] == sys.argv[3] else 1)
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

# The SPANK plugin.
if [ -z "$SPANK" ] || [ ! -f "$SPANK" ]; then
	echo "(no SPANK plugin built here: Slurm's spank.h was missing)"
	exit $fail
fi
site=$tmp/site
mkdir -m 1777 "$site"
kind=mpich
[ $plugin = pmix ] && kind=ompi
plugstack() { echo "optional $SPANK dir=${2:-$site} $kind=$LIB $1" >"$SLURM_DIR/plugstack.conf"; }
# logs_in DIR: the logs under DIR, one per line.
logs_in() { find "$1" -name '*.ntlog' 2>/dev/null | sort; }
# check_log WHAT LOG LEVEL: a complete log of 2 ranks, every allreduce counted, at LEVEL.
check_log() {
	"$NT" report "$2" --json "$tmp/spank.json" >"$tmp/spank.txt" 2>&1 &&
		python3 - "$tmp/spank.json" "$3" <<'PY' && echo "$1: $(basename "$2")" || {
import json, sys
r = json.load(open(sys.argv[1]))
calls = sum(s["calls"] for s in r["sites"] if s["function"] == "MPI_Allreduce")
sys.exit(0 if r["ranks"] == 2 and calls == 600 and not r["partial"] and
         r["level"] == sys.argv[2] else 1)
PY
		echo "FAIL: $1: $2"
		cat "$tmp/spank.txt"
		fail=1
	}
}
step() { timeout 120 srun --mpi=$plugin -n 2 "$@" "$LOOP" 300 >"$tmp/step.out" 2>&1; }
day=$(date -u +%Y/%m/%d)

plugstack default=off
step --noisetool || { echo "FAIL: srun --noisetool"; cat "$tmp/step.out"; fail=1; }
log=$(logs_in "$site")
case "$log" in
"$site/$day/"*-slurm-[0-9]*.[0-9]*.ntlog)
	check_log "srun --noisetool" "$log" os
	# The log's batch job is the one its name gives (slurm-JOB.STEP).
	id=${log##*-slurm-}
	grep -q "^batch job: slurm ${id%.ntlog} on " "$tmp/spank.txt" ||
		{
			echo "FAIL: srun --noisetool: the report's batch job is not ${id%.ntlog}:"
			grep "^batch" "$tmp/spank.txt"
			fail=1
		}
	;;
*) echo "FAIL: srun --noisetool: logs '$log', want one in $site/$day named by the job"; fail=1 ;;
esac
rm -rf "${site:?}"/*
step --noisetool=timing || fail=1
log=$(logs_in "$site")
[ -n "$log" ] && check_log "srun --noisetool=timing" "$log" timing ||
	{ echo "FAIL: srun --noisetool=timing: no log"; fail=1; }
rm -rf "${site:?}"/*
mkdir "$tmp/mine"
NOISETOOL_OUT=$tmp/mine step --noisetool || fail=1
[ -z "$(logs_in "$site")" ] && [ -n "$(logs_in "$tmp/mine")" ] &&
	echo "srun --noisetool with the user's NOISETOOL_OUT: the log there" ||
	{ echo "FAIL: the user's NOISETOOL_OUT did not win"; fail=1; }
step || fail=1
[ -z "$(logs_in "$site")" ] && echo "srun without --noisetool (default off): no log" ||
	{ echo "FAIL: a step without --noisetool was measured"; fail=1; }

# sbatch --noisetool: the option reaches its steps.
job=$(sbatch -n 2 --noisetool --parsable -o "$tmp/batch.out" \
	--wrap "srun --mpi=$plugin -n 2 $LOOP 300") || { echo "FAIL: sbatch --noisetool"; fail=1; }
for _ in $(seq 300); do
	[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
	sleep 0.1
done
log=$(logs_in "$site")
[ -n "$log" ] && check_log "sbatch --noisetool" "$log" os ||
	{ echo "FAIL: sbatch --noisetool: no log"; cat "$tmp/batch.out"; fail=1; }
rm -rf "${site:?}"/*

# The site's default, the opt-out, a directory that cannot be made.
plugstack default=on
step || fail=1
n=$(logs_in "$site" | wc -l)
step --no-noisetool || fail=1
[ "$n" = 1 ] && [ "$(logs_in "$site" | wc -l)" = 1 ] &&
	echo "default=on: a step measured; --no-noisetool: not" ||
	{ echo "FAIL: default=on gave $n logs, --no-noisetool $(logs_in "$site" | wc -l)"; fail=1; }
touch "$tmp/a-file"
plugstack default=on "$tmp/a-file/logs"
if step && grep -q "noisetool: cannot write in $tmp/a-file/logs" "$tmp/step.out" &&
	[ "$(grep -c 'noisetool: cannot write' "$tmp/step.out")" = 1 ]; then
	echo "a site directory that cannot be made: one line, the job ran"
else
	echo "FAIL: with a directory that cannot be made:"
	cat "$tmp/step.out"
	fail=1
fi
exit $fail
