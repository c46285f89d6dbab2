#!/usr/bin/env bash
# The default level's reads against their budget (issue 35, "Cost"): jobs of about 0.01, 0.05,
# 0.2, 0.5, 1, 2 and 4 s of examples/allreduce-loop with 1 ms of work between 8-byte
# allreduces, and of about 1, 2 and 4 s with 100 us (where the probe windows read most), on 2
# ranks, one per CPU, under
# the preload at its default level; per job, from the log's report: the slowest
# rank's wall time, then over the ranks the largest share of the wall time their probe windows'
# reads took, the largest cost of the readings of /proc at both ends (the node's threads,
# interrupts and softirqs: scan_ns, thread CPU time), the largest probe_pct (both together,
# budget 1 %), and whether the other tasks were read at both ends (a job too short for that
# within the budget says "skipped"), and when they were first read. The first reading is made
# at a probe read on the grid once the job has run long enough for both within the budget
# (wrappers/cpushare.h), the second inside MPI_Finalize; none in the fast path.
#
#   bench-reads.sh LIB LOOP NOISETOOL [REPEATS]      LOOP: examples/allreduce-loop
set -u
LIB=${1:?usage: bench-reads.sh LIB LOOP NOISETOOL [REPEATS]}
LOOP=${2:?}
NT=${3:?}
REPEATS=${4:-2}
. "$(dirname "$0")/../tests/lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "2 ranks, one per CPU"
nt_tmpdir

echo "2 ranks, one per CPU; work between 8-byte MPI_Allreduce calls; default level"
printf "%8s %6s %8s %10s %10s %10s %9s  %s\n" "work us" calls "wall s" "reads %" "scans ms" \
	"probe %" verdict "other tasks"
over=0
for job in 1000:10 1000:50 1000:200 1000:500 1000:1000 1000:2000 1000:4000 100:10000 100:20000 \
	100:40000; do
	work=${job%:*} calls=${job#*:}
	for rep in $(seq 1 "$REPEATS"); do
		run="$work-$calls-$rep" out="$tmp/$work-$calls-$rep"
		mkdir -p "$out"
		nt_launch 300 "$run" -n 2 $(nt_bind 2) -genv LD_PRELOAD "$(nt_preload "$LIB")" \
			-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$out" "$LOOP" --calls "$calls" \
			--compute-us "$work" --outliers 0
		log=$(ls "$out"/*.ntlog 2>/dev/null | head -n 1)
		if [ "$(cat "$out.rc")" != 0 ] || [ -z "$log" ] ||
			! "$NT" report "$log" --no-symbols --json "$out.json" >/dev/null 2>"$out.err"; then
			printf "%8s %6s  FAIL: the job or its report failed\n" "$work" "$calls"
			cat "$out.err" 2>/dev/null | tail -n 5
			over=1
			continue
		fi
		python3 - "$out.json" "$work" "$calls" <<'PY' || over=1
import json, sys
ranks = json.load(open(sys.argv[1]))["rank_times"]
wall = max(k["wall_ns"] for k in ranks)
reads = max(100.0 * k["probe_reads"] * k["probe_read_ns"] / k["wall_ns"] for k in ranks)
scans = max(k["scan_ns"] for k in ranks)
pct = max(k["probe_pct"] for k in ranks)
others = ["skipped" if k["cpus"].get("others_skipped") else
          "read from %.2f s" % (k["cpus"]["others"]["from_ns"] / 1e9) if "others" in k["cpus"]
          else "none" for k in ranks]
print("%8s %6s %8.2f %10.3f %10.2f %10.3f %9s  %s" % (sys.argv[2], sys.argv[3], wall / 1e9, reads,
      scans / 1e6, pct, "ok" if pct <= 1.0 else "OVER", ", ".join(others)))
sys.exit(0 if pct <= 1.0 else 1)
PY
	done
done
[ $over = 0 ] && echo "every job's reads within 1 % of its wall time" ||
	echo "some job's reads took more than 1 % of its wall time"
exit $over
