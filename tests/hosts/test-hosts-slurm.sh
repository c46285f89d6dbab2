#!/usr/bin/env bash
# A job of a multi-node Slurm (issue 36 item 3): 3 namespace hosts (hosts-lib.sh), slurmctld on
# the first and one slurmd on each (slurm-lib.sh's nt_slurm_start_hosts), and `noisetool run --
# srun -N 3 -n 3` on the first host for the MPI under test (MPICH --mpi=pmi2, Open MPI
# --mpi=pmix): one complete job of 3 ranks, one a host, every allreduce counted, the report
# naming the three hosts and the batch job with its node list; and a batch script
# (`exec noisetool run ... -- srun ...`) submitted on the first host, which leaves its report.
# Skipped, with the reason, where namespaces or a private Slurm cannot be had.
#
#   test-hosts-slurm.sh NOISETOOL LOOP     LOOP: allreduce-loop (tests/mpi)
set -u
NT=${1:?usage: test-hosts-slurm.sh NOISETOOL LOOP}
LOOP=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
command -v nsenter >/dev/null || nt_skip "no nsenter (util-linux)"
. "$(dirname "$0")/hosts-lib.sh"
. "$(dirname "$0")/../slurm/slurm-lib.sh"
nt_hosts_start 3
nt_slurm_start_hosts
h1=${NT_HOSTS[0]} h2=${NT_HOSTS[1]} h3=${NT_HOSTS[2]}
plugin=pmi2
[ "${NT_MPI:-mpich}" = ompi ] && plugin=pmix
fail=0

# check NAME JSON: a complete job of 3 ranks on the three hosts, 900 allreduces, its batch job.
check() {
	python3 - "$2" "$1" "$h1" "$h2" "$h3" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
name, hosts = sys.argv[2], sorted(sys.argv[3:6])
calls = sum(s["calls"] for s in r["sites"] if s["function"] == "MPI_Allreduce")
ran = sorted(k["host"] for k in r["rank_times"])
job = r["job"]
bad = []
if r["ranks"] != 3 or r["partial"] or ran != hosts:
    bad.append(f"{r['ranks']} ranks on {ran}, partial {r['partial']}")
if calls != 900:
    bad.append(f"{calls} allreduce calls, want 900")
# Slurm's node list of the three: "PREFIXh[1-3]"
if job["batch_system"] != "slurm" or not re.fullmatch(r"[0-9]+\.[0-9]+", job["batch_job"]) or \
        not job["batch_nodes"].endswith("h[1-3]"):
    bad.append(f"batch job {job['batch_system']!r} {job['batch_job']!r} on {job['batch_nodes']!r}")
for b in bad:
    print(f"FAIL: {name}: {b}")
if not bad:
    print(f"{name}: 3 ranks on {', '.join(ran)}, {calls} allreduces, batch job slurm "
          f"{job['batch_job']} on {job['batch_nodes']}")
sys.exit(1 if bad else 0)
PY
}

# srun on the first host, under noisetool run.
mkdir "$tmp/srun"
timeout 180 "$NT_ON_HOST" "$h1" SLURM_CONF="$SLURM_CONF" "$NT" run --out "$tmp/srun" \
	--json "$tmp/srun.json" -- srun --mpi=$plugin -N 3 -n 3 "$LOOP" 300 \
	>"$tmp/srun.out" 2>"$tmp/srun.err"
rc=$?
if [ $rc = 0 ]; then
	check "noisetool run -- srun -N 3" "$tmp/srun.json" || fail=1
	for h in "$h1" "$h2" "$h3"; do
		grep -q "$h" "$tmp/srun.out" || { echo "FAIL: the text report does not name $h"; fail=1; }
	done
else
	echo "FAIL: noisetool run -- srun --mpi=$plugin -N 3 -n 3 on $h1: exit $rc"
	cat "$tmp/srun.err"
	nt_slurm_logs
	fail=1
fi

# A batch script, submitted on the first host.
mkdir "$tmp/batch"
cat >"$tmp/batch/job.sh" <<EOF
#!/bin/bash
exec "$NT" run --out "$tmp/batch" --json "$tmp/batch/report.json" -- srun --mpi=$plugin "$LOOP" 300
EOF
job=$("$NT_ON_HOST" "$h1" SLURM_CONF="$SLURM_CONF" sbatch -N 3 -n 3 --parsable \
	-o "$tmp/batch/out.txt" "$tmp/batch/job.sh") ||
	{ echo "FAIL: sbatch on $h1"; nt_slurm_logs; exit 1; }
for _ in $(seq 1200); do
	[ -z "$(nt_slurm_client squeue -h -j "$job" 2>/dev/null)" ] && break
	sleep 0.1
done
if [ -s "$tmp/batch/report.json" ]; then
	check "sbatch -N 3" "$tmp/batch/report.json" || fail=1
else
	echo "FAIL: the batch job left no report:"
	cat "$tmp/batch/out.txt"
	nt_slurm_logs
	fail=1
fi
exit $fail
