#!/usr/bin/env bash
# Several builds of the library against each other on the 8-byte MPI_Allreduce loop, in one
# alternating run: for judging experiments (a part of the fast path compiled out, a layout),
# where bench-overhead.sh compares one build with one baseline. Modes: no preload, the bare
# two-read wrapper (the floor) and each NAME=LIB[@LEVEL] given (LEVEL: NOISETOOL_LEVEL, default
# timing). The order rotates every pair, every run of a pair has the same environment size
# (bench_equal_env) and each pair draws a new one; a run's figure is its median ratio to its
# PMPI reference batches (overhead-loop.c), and each build is shown as the median over pairs of
# its figure over the floor's in the same pair, with every pair's value. No verdict.
#   bench-builds.sh PROGRAM BARE_LIB PAIRS NAME=LIB[@LEVEL]...
#   NT_BENCH_NP=1 runs one rank (the code's own cost). Example (doc/overhead.md, 2026-11-28):
#   NT_MPI=mpich bash bench/bench-builds.sh build/bench/overhead-loop \
#       build/bench/libbare-wrapper.so 11 main=build/wrappers/libnoisetool-mpich.so.0.1.0 \
#       min=/tmp/min/libnoisetool-mpich.so.0.1.0
set -u
PROG=${1:?usage: bench-builds.sh PROGRAM BARE_LIB PAIRS NAME=LIB[@LEVEL]...}
BARE=${2:?}
PAIRS=${3:?}
shift 3
[ $# -gt 0 ] || { echo "bench-builds.sh: no build given (NAME=LIB[@LEVEL])" >&2; exit 2; }
. "$(dirname "$0")/../tests/lib.sh"
. "$(dirname "$0")/bench-lib.sh"
nt_need_mpiexec
NP=${NT_BENCH_NP:-2}
nt_need_cpus "$NP" "one rank per CPU"
BATCHES=${NT_BENCH_BATCHES:-3000}
RANDOM=42

names=(none bare) libs=("" "$BARE") levels=(timing timing)
for a in "$@"; do
	case $a in
	?*=?*) ;;
	*) echo "bench-builds.sh: '$a' is not NAME=LIB[@LEVEL]" >&2; exit 2 ;;
	esac
	lib=${a#*=} level=timing
	case $lib in *@*) level=${lib##*@} lib=${lib%@*} ;; esac
	[ -f "$lib" ] || { echo "bench-builds.sh: $lib: no such file" >&2; exit 2; }
	names+=("${a%%=*}") libs+=("$lib") levels+=("$level")
done
n=${#names[@]}

nt_tmpdir
declare -A q # [pair,mode]: the run's median ratio to its reference
printf "bench-builds: %d pairs, %d batches of 100 calls per run, %d rank(s)\n" "$PAIRS" "$BATCHES" "$NP"
for p in $(seq 1 "$PAIRS"); do
	base=$(((RANDOM % 256) * 16))
	for ((k = 0; k < n; k++)); do
		i=$(((k + p) % n))
		q[$p,$i]=$(bench_equal_env "$base" "$tmp" LD_PRELOAD "${libs[$i]}" \
			NOISETOOL_LEVEL "${levels[$i]}" -- "$PROG" "$BATCHES" ref 2>/dev/null |
			awk '/^median_ratio_to_reference/ { print $2 }')
	done
done

printf "\n%-14s %8s  %s\n" build "/ floor" "per pair (sorted)"
for ((i = 0; i < n; i++)); do
	vals=$(for p in $(seq 1 "$PAIRS"); do
		echo "${q[$p,$i]:-0} ${q[$p,1]:-0}"
	done | awk '$1 > 0 && $2 > 0 { printf "%.4f\n", $1 / $2 }' | sort -g)
	med=$(echo "$vals" | awk 'NF { v[++k] = $1 } END {
		if (!k) print "-"; else if (k % 2) print v[(k + 1) / 2]; else printf "%.4f\n", (v[k / 2] + v[k / 2 + 1]) / 2 }')
	printf "%-14s %8s  %s\n" "${names[$i]}" "$med" "$(echo $vals)"
done
