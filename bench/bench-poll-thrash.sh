#!/usr/bin/env bash
# What an unsuccessful poll costs when the work between polls evicts the caches (issue 37:
# HPCC's MPIRandomAccess, millions of MPI_Testany polls between random updates of a large
# table, ran 1.2-1.3x slower under the default level, the bare wrapper not slower, while the
# poll's fast path is 20 instructions beyond the floor). poll-thrash (1 rank) gives, per run,
# the median over batches of what MPI_Iprobe costs over PMPI_Iprobe in the same process, in ns
# a poll: the floor (the bare two-read wrapper), the timing and the default level, with a
# table of 0 MiB (everything stays in the caches) and of TABLE_MB (256) MiB, 8 random updates
# a poll, and of TABLE_MB MiB polling at two call sites in turn ("x2": a loop testing two
# requests; each site keeps its own sampling, call.h: nt_fast_untimed); "every" is the default
# level with every test call timed (NOISETOOL_POLL_SAMPLE=1), where the default times one in 64.
# Runs alternate, the order rotating every round. With NT_BENCH_BASELINE_LIB set to
# another build of the library, its default level runs too ("baseline").
#
#   bench-poll-thrash.sh LIB PROGRAM BARE_LIB [ROUNDS=5] [TABLE_MB=256]
set -u
LIB=${1:?usage: bench-poll-thrash.sh LIB PROGRAM BARE_LIB [ROUNDS] [TABLE_MB]}
PROG=${2:?}
BARE=${3:?}
ROUNDS=${4:-5}
MB=${5:-256}
. "$(dirname "$0")/../tests/lib.sh"
nt_need_mpiexec
nt_tmpdir

modes=(bare timing default every)
[ -n "${NT_BENCH_BASELINE_LIB:-}" ] && modes+=(baseline)

# run MODE TABLE_MB[xSITES]: the wrapper's ns a poll over PMPI, or nothing if the run failed.
run() {
	local mode=$1 mb=${2%x*} sites=1 env=(NOISETOOL_OUT="$tmp" NOISETOOL_SUMMARY=0)
	[ "$2" = "$mb" ] || sites=${2#*x}
	case $mode in
	bare) env+=(LD_PRELOAD="$(nt_preload "$BARE")") ;;
	timing) env+=(LD_PRELOAD="$(nt_preload "$LIB")" NOISETOOL_LEVEL=timing) ;;
	default) env+=(LD_PRELOAD="$(nt_preload "$LIB")") ;;
	every) env+=(LD_PRELOAD="$(nt_preload "$LIB")" NOISETOOL_POLL_SAMPLE=1) ;;
	baseline) env+=(LD_PRELOAD="$(nt_preload "$NT_BENCH_BASELINE_LIB")") ;;
	esac
	env "${env[@]}" timeout 300 mpiexec -n 1 $(nt_bind 1) "$PROG" "$mb" 8 41 20000 "$sites" 2>"$tmp/err" |
		sed -n 's/.*wrapper over PMPI \([-0-9.]*\) ns a poll.*/\1/p'
	rm -f "$tmp"/*.ntlog
}

declare -A got
printf "bench-poll-thrash (%s): MPI_Iprobe over PMPI_Iprobe, ns a poll, median of 41 batches a run\n" "$NT_MPI"
printf "%5s  %-28s" round order
for mb in 0 "$MB" "${MB}x2"; do for m in "${modes[@]}"; do printf " %13s" "$m/$mb"; done; done
echo
for ((r = 1; r <= ROUNDS; r++)); do
	order=()
	for ((k = 0; k < ${#modes[@]}; k++)); do order+=("${modes[$(((k + r - 1) % ${#modes[@]}))]}"); done
	printf "%5d  %-28s" "$r" "${order[*]}"
	for mb in 0 "$MB" "${MB}x2"; do
		for m in "${order[@]}"; do
			v=$(run "$m" "$mb")
			[ -n "$v" ] || { echo; echo "FAIL: $m, $mb MiB: the run failed:"; cat "$tmp/err"; exit 1; }
			got[$r,$m,$mb]=$v
		done
		for m in "${modes[@]}"; do printf " %13s" "${got[$r,$m,$mb]}"; done
	done
	echo
done
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }'; }
for mb in 0 "$MB" "${MB}x2"; do
	if [ "$mb" = "${mb%x*}" ]; then where="1 call site"; else where="2 call sites"; fi
	printf "table %4s MiB, %s, median over %d rounds:" "${mb%x*}" "$where" "$ROUNDS"
	for m in "${modes[@]}"; do
		printf " %s %s" "$m" "$(for ((r = 1; r <= ROUNDS; r++)); do echo "${got[$r,$m,$mb]}"; done | median)"
	done
	echo " (ns a poll over PMPI)"
done
