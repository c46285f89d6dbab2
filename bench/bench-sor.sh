#!/usr/bin/env bash
# examples/sor with a CPU load on the last rank's CPU (Thitikamol & Keleher, Tables 2-3):
# elapsed time with MPICH's own waits, the busy test loop, the napping test loop and adaptive
# waits, in alternating runs (the order rotates), and the median of each. SHARE below 1 gives
# the loaded rank fewer rows (the seed's "10,10,10,2" mapping), so that it waits for the others
# and how it waits matters; at 1 it is the slowest rank and never waits.
set -u
LIB=${1:?usage: bench-sor.sh LIB SOR [RUNS] [LOAD] [SHARE] [ITERS]}
SOR=${2:?}
RUNS=${3:-5}
LOAD=${4:-100}
SHARE=${5:-0.35}
ITERS=${6:-3000}
. "$(dirname "$0")/../tests/lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU"
nt_tmpdir
out=$tmp
modes=(mpich busy sleep adaptive)
n=${#modes[@]}
declare -A t
printf "sor, 2 ranks, %s iterations, load %s %% on the last rank's CPU, its rows x %s: elapsed s\n" \
	"$ITERS" "$LOAD" "$SHARE"
printf "%4s" run; printf " %9s" "${modes[@]}"; echo
for r in $(seq 1 "$RUNS"); do
	for k in $(seq 0 $((n - 1))); do
		m=${modes[$(((k + r) % n))]}
		t[$r,$m]=$(timeout 600 mpiexec -n 2 $(nt_bind 2) -genv LD_PRELOAD "$LIB" \
			-genv NOISETOOL_WAIT $m -genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$out" \
			"$SOR" --load "$LOAD" --load-share "$SHARE" --iters "$ITERS" |
			awk '{ for (i = 1; i <= NF; i++) if ($i == "elapsed") print $(i + 1) }')
	done
	printf "%4d" "$r"; for m in "${modes[@]}"; do printf " %9s" "${t[$r,$m]}"; done; echo
done
for m in "${modes[@]}"; do
	for r in $(seq 1 "$RUNS"); do echo "${t[$r,$m]}"; done | sort -g |
		awk -v m=$m '{ v[NR] = $1 } END { printf "median %-9s %.3f s\n", m, v[int((NR + 1) / 2)] }'
done
