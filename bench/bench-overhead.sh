#!/usr/bin/env bash
# Wrapper overhead on a 2-rank 8-byte MPI_Allreduce loop (one rank per CPU): no preload, a bare
# wrapper that only reads the counter twice (the floor), the library with NOISETOOL_DISABLE=1,
# the timing level, the default level (probe windows and attribution records on), and
# mpiP-style call-site capture on every call. Runs are alternated (the order rotates every
# pair) and share one environment size per pair; each run gives a median per-call time; the
# table shows each pair's ratios to the run without preload, and the median ratio per mode.
# With NT_BENCH_BASELINE_LIB set to another build of the library (the commit before a change),
# its default level runs in the same rotation as mode "baseline", so that a change is judged
# against what it replaces in one alternating run.
set -u
LIB=${1:?usage: bench-overhead.sh LIB PROGRAM BARE_LIB [PAIRS] [BATCHES]}
PROG=${2:?}
BARE=${3:?}
PAIRS=${4:-7}
BATCHES=${5:-3000}
. "$(dirname "$0")/../tests/lib.sh"
. "$(dirname "$0")/bench-lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU"

modes=(none bare disabled timing default every-call)
BASELINE=${NT_BENCH_BASELINE_LIB:-}
[ -n "$BASELINE" ] && modes+=(baseline)
RANDOM=42 # the same layouts every time the bench runs

# One run of a mode, in an environment of the pair's size (bench_equal_env, bench-lib.sh).
run() {
	local mode=$1 base=$2 env=()
	case $mode in
	none) env=(LD_PRELOAD "") ;;
	bare) env=(LD_PRELOAD "$BARE") ;;
	disabled) env=(LD_PRELOAD "$LIB" NOISETOOL_DISABLE 1) ;;
	timing) env=(LD_PRELOAD "$LIB" NOISETOOL_LEVEL timing) ;;
	default) env=(LD_PRELOAD "$LIB") ;;
	every-call) env=(LD_PRELOAD "$LIB" NOISETOOL_CALLSITE every-call) ;;
	baseline) env=(LD_PRELOAD "$BASELINE") ;;
	esac
	bench_equal_env "$base" "$logs" "${env[@]}" -- "$PROG" "$BATCHES" 2>/dev/null |
		awk '/median_per_call_ns/ { print $2 }'
}

nt_tmpdir
logs=$tmp # every mode gets it (equal environments); the logs are not kept
declare -A med
printf "bench-overhead: %d pairs, %d batches of 100 calls per run, 2 ranks, one per CPU of the mask\n\n" \
	"$PAIRS" "$BATCHES"
printf "%4s %9s %9s %9s %9s %9s %10s   %6s %6s %6s %6s %6s\n" pair "none ns" "bare ns" \
	"off ns" "timing ns" "default" "every-call" bare off timing default every
for p in $(seq 1 "$PAIRS"); do
	base=$(((RANDOM % 256) * 16))
	# Rotate the order so that no mode always runs first.
	for ((k = 0; k < ${#modes[@]}; k++)); do
		m=${modes[$(((k + p) % ${#modes[@]}))]}
		med[$p,$m]=$(run "$m" "$base")
	done
	printf "%4d %9s %9s %9s %9s %9s %10s   %6.3f %6.3f %6.3f %6.3f %6.3f\n" "$p" \
		"${med[$p,none]}" "${med[$p,bare]}" "${med[$p,disabled]}" "${med[$p,timing]}" \
		"${med[$p,default]}" "${med[$p,every-call]}" \
		"$(echo "${med[$p,bare]} / ${med[$p,none]}" | bc -l)" \
		"$(echo "${med[$p,disabled]} / ${med[$p,none]}" | bc -l)" \
		"$(echo "${med[$p,timing]} / ${med[$p,none]}" | bc -l)" \
		"$(echo "${med[$p,default]} / ${med[$p,none]}" | bc -l)" \
		"$(echo "${med[$p,every-call]} / ${med[$p,none]}" | bc -l)"
	[ -n "$BASELINE" ] && printf "     baseline %s ns: %.3f of none, default/baseline %.3f, default/bare %.3f, baseline/bare %.3f\n" \
		"${med[$p,baseline]}" "$(echo "${med[$p,baseline]} / ${med[$p,none]}" | bc -l)" \
		"$(echo "${med[$p,default]} / ${med[$p,baseline]}" | bc -l)" \
		"$(echo "${med[$p,default]} / ${med[$p,bare]}" | bc -l)" \
		"$(echo "${med[$p,baseline]} / ${med[$p,bare]}" | bc -l)"
done

# This VM switches between a fast state (~330 ns per call) and a slow one (~780 ns) now and
# then; a pair whose runs straddle a switch shows ratios far from 1 and is left out.
valid() {
	local p=$1 m
	for m in bare disabled timing default; do
		echo "${med[$p,$m]} / ${med[$p,none]}" | bc -l |
			awk '{ exit !($1 > 0.8 && $1 < 1.3) }' || return 1
	done
}
# median_ratio MODE CLASS: CLASS fast (baseline < 500 ns), slow, or all.
median_ratio() {
	local m=$1 class=$2
	for p in $(seq 1 "$PAIRS"); do
		valid "$p" || continue
		case $class in
		fast) [ "$(echo "${med[$p,none]} < 500" | bc -l)" = 1 ] || continue ;;
		slow) [ "$(echo "${med[$p,none]} >= 500" | bc -l)" = 1 ] || continue ;;
		esac
		echo "${med[$p,$m]} / ${med[$p,none]}" | bc -l
	done | sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", v[int((NR + 1) / 2)]; else printf "-" }'
}
echo
for p in $(seq 1 "$PAIRS"); do
	valid "$p" || echo "pair $p left out: the machine changed speed during it"
done
ok=1
for class in fast slow; do
	b=$(median_ratio bare $class)
	o=$(median_ratio disabled $class)
	t=$(median_ratio timing $class)
	d=$(median_ratio default $class)
	e=$(median_ratio every-call $class)
	[ "$b" = - ] && continue
	echo "$class state: median ratio to no preload: bare two counter reads $b," \
		"NOISETOOL_DISABLE=1 $o, timing $t (budget <= 1.03), default $d (budget <= 1.06)," \
		"mpiP-style every-call stack walk $e"
	[ "$(echo "$t <= 1.03 && $d <= 1.06" | bc -l)" = 1 ] || ok=0
	if [ -n "$BASELINE" ]; then
		echo "$class state: median ratio to no preload of the baseline build's default level" \
			"$(median_ratio baseline $class)"
	fi
done
[ $ok = 1 ] && echo "within budget" || { echo "OVER BUDGET"; exit 1; }
