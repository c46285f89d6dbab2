#!/usr/bin/env bash
# examples/sor with a 100 % CPU load on the last rank's CPU (Thitikamol & Keleher, Tables 2-3):
# elapsed time with MPICH's own waits, the busy test loop and adaptive waits, in alternating
# runs (the order rotates), and the median of each.
set -u
LIB=${1:?usage: bench-sor.sh LIB SOR [RUNS] [LOAD]}
SOR=${2:?}
RUNS=${3:-5}
LOAD=${4:-100}
command -v mpiexec >/dev/null || { echo "bench-sor: no mpiexec"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
modes=(mpich busy adaptive)
declare -A t
printf "sor, 2 ranks, load %s %% on the last rank's CPU: elapsed s\n%4s %10s %10s %10s\n" \
	"$LOAD" run mpich busy adaptive
for r in $(seq 1 "$RUNS"); do
	for k in 0 1 2; do
		m=${modes[$(((k + r) % 3))]}
		t[$r,$m]=$(timeout 600 mpiexec -n 2 -bind-to core -genv LD_PRELOAD "$LIB" \
			-genv NOISETOOL_WAIT $m -genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$out" \
			"$SOR" --load "$LOAD" --iters 1000 | awk '{ for (i = 1; i <= NF; i++) if ($i == "elapsed") print $(i + 1) }')
	done
	printf "%4d %10s %10s %10s\n" "$r" "${t[$r,mpich]}" "${t[$r,busy]}" "${t[$r,adaptive]}"
done
for m in "${modes[@]}"; do
	for r in $(seq 1 "$RUNS"); do echo "${t[$r,$m]}"; done | sort -g |
		awk -v m=$m '{ v[NR] = $1 } END { printf "median %-9s %.3f s\n", m, v[int((NR + 1) / 2)] }'
done
