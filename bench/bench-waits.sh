#!/usr/bin/env bash
# Adaptive MPI waits: an 8-byte MPI_Allreduce loop (examples/allreduce-loop, 4096 calls; the
# slowest rank's time per call) with 4 ranks on 2 cores (two per CPU of the mask) under
# MPICH's own busy waits, the busy test loop and the adaptive loop; then 2 ranks on 2 cores,
# alternating runs without the tool, with it and MPICH's waits, and with adaptive waits
# (bench/overhead-loop, median per call over batches of 100).
set -u
LIB=${1:?usage: bench-waits.sh LIB ALLREDUCE_LOOP OVERHEAD_LOOP [PAIRS]}
LOOP=${2:?}
OVER=${3:?}
PAIRS=${4:-5}
. "$(dirname "$0")/../tests/lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "4 ranks two per CPU, and 2 ranks one per CPU"
nt_tmpdir
out=$tmp

echo "4 ranks on 2 cores, 4096 x 8-byte MPI_Allreduce (slowest rank per call)"
printf "%-10s %12s %12s %12s\n" wait "median us" "p99 us" "mean us"
for w in mpich busy adaptive; do
	timeout 600 mpiexec -n 4 $(nt_bind 4) -genv LD_PRELOAD "$LIB" -genv NOISETOOL_WAIT $w \
		-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$out" "$LOOP" --outliers 0 2>&1 |
		awk -v w=$w '/^allreduce-loop:/ { gsub(/,/, ""); for (i = 1; i <= NF; i++) {
			if ($i == "mean") m = $(i + 1); if ($i == "median") md = $(i + 1);
			if ($i == "p99") p = $(i + 1) }
			printf "%-10s %12s %12s %12s\n", w, md, p, m }'
done

echo
echo "2 ranks on 2 cores, median per call over batches of 100 (alternating, $PAIRS pairs)"
printf "%4s %10s %12s %14s %8s %8s\n" pair "none ns" "mpich-wait" "adaptive-wait" mpich adaptive
for p in $(seq 1 "$PAIRS"); do
	declare -A v=()
	for mode in none mpich adaptive; do
		env=()
		[ $mode != none ] && env=(-genv LD_PRELOAD "$LIB" -genv NOISETOOL_WAIT $mode)
		v[$mode]=$(timeout 300 mpiexec -n 2 $(nt_bind 2) "${env[@]}" -genv NOISETOOL_SUMMARY 0 \
			-genv NOISETOOL_OUT "$out" "$OVER" 2000 2>/dev/null | awk '/median/ { print $2 }')
	done
	printf "%4d %10s %12s %14s %8.3f %8.3f\n" "$p" "${v[none]}" "${v[mpich]}" "${v[adaptive]}" \
		"$(echo "${v[mpich]} / ${v[none]}" | bc -l)" "$(echo "${v[adaptive]} / ${v[none]}" | bc -l)"
done
