#!/usr/bin/env bash
# Per-call cost against the number of call sites: a 2-rank 8-byte MPI_Allreduce loop (one rank
# per CPU) over N distinct call sites taken in turn (rr) or in a random order (sites-loop.c; one
# binary, N an argument), with no preload, the bare two-read wrapper (the floor) and the default
# level of the library. Runs are alternated (the order rotates every pair) and share one
# environment size per pair (bench_equal_env, bench-lib.sh), as bench-overhead.sh does.
# Acceptance (issue 18): the per-call cost flat in the number of call sites up to the arena's
# capacity -- the default level's ratio to no tool at N = 100, 1,000 and 4,000 within 5 % of
# its ratio at N = 1 (the median over pairs of (default/none at N) / (default/none at 1), both
# ratios taken in the same pair, each the ratio of two runs' ratios to their PMPI reference
# batches); the added ns (default - none) are shown beside it.
# With NT_BENCH_BASELINE_LIB set to another build of the library (the commit before a change),
# its default level runs in the same rotation as mode "baseline" and gets the same summary.
# Beside it, "in run": the same comparison made inside each run, where every N-site batch is
# followed by a batch from one site (sites-loop.c): the median over pairs of (mode's N-site /
# one-site batches) / (none's), the VM's state cancelling within 10-50 us instead of between
# runs seconds apart (~0.5 % spread over runs here, against ~3 % for vs N=1).
set -u
LIB=${1:?usage: bench-sites.sh LIB PROGRAM BARE_LIB [PAIRS] [BATCHES] [ORDERS] [WARMUP]}
PROG=${2:?}
BARE=${3:?}
PAIRS=${4:-7}
BATCHES=${5:-2000}      # of 100 calls, per run
ORDERS=${6:-rr random} # the orders in which the sites are called
# Calls of every site before the timed batches: past the recording policy's early samples (a
# site's thresholds refresh at its calls 8, 16, ... 1024, each time keeping a record, then every
# 1024th call; wrappers/recpolicy.h), so that the batches see what a site costs for the rest of
# a job. With 2, a site's early samples fall in the batches (the start of a job).
WARMUP=${7:-1100}
. "$(dirname "$0")/../tests/lib.sh"
. "$(dirname "$0")/bench-lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU"

modes=(none bare default)
BASELINE=${NT_BENCH_BASELINE_LIB:-}
[ -n "$BASELINE" ] && modes+=(baseline)
# NT_BENCH_SITES: the numbers of sites to run instead (the first must be 1: the others are
# compared with it), e.g. "1 4000" for twice the pairs in the same time.
read -r -a sites <<<"${NT_BENCH_SITES:-1 100 1000 4000}"
[ "${sites[0]}" = 1 ] || { echo "bench-sites: NT_BENCH_SITES must start with 1" >&2; exit 2; }
read -r -a orders <<<"$ORDERS"
TOLERANCE=0.05
MIN_PAIRS=5
RANDOM=42 # the same layouts every time the bench runs

# One run: "NS REF RATIO MERGED ONE" -- the median per-call time, the median of the reference
# batches (PMPI_Allreduce, seen by no wrapper: the machine's state), the median per-batch ratio
# of the two (ratios of modes are taken of these, so that the VM's speed states cancel:
# overhead-loop.c), the calls that found the site table full (the rank-0 summary's line; 0
# without the library) and the median per-batch ratio of the N-site batch to the one-site batch
# that follows it.
run() {
	local mode=$1 base=$2 n=$3 order=$4 env=()
	case $mode in
	none) env=(LD_PRELOAD "") ;;
	bare) env=(LD_PRELOAD "$BARE") ;;
	default) env=(LD_PRELOAD "$LIB") ;;
	baseline) env=(LD_PRELOAD "$BASELINE") ;;
	esac
	bench_equal_env "$base" "$logs" "${env[@]}" -- "$PROG" "$n" "$order" "$BATCHES" "$WARMUP" 2>&1 |
		awk '/median_per_call_ns/ { ns = $2 }
		     /median_reference_ns/ { ref = $2 }
		     /median_ratio_to_reference/ { q = $2 }
		     /median_ratio_to_one_site/ { one = $2 }
		     /calls found the site table full/ { merged = $2 }
		     END { if (ns != "" && ref != "" && q != "" && one != "") print ns, ref, q, merged + 0, one }'
	rm -rf "${logs:?}"/* # the logs are not kept
}

nt_tmpdir
logs=$tmp # every mode gets it (equal environments)
declare -A ns ref q merged one # [pair,order,N,mode]
printf "bench-sites: %d pairs, %d batches of 100 calls per run after %d calls of each site, 2 ranks, one per CPU of the mask; N call sites in the orders: %s\n" \
	"$PAIRS" "$BATCHES" "$WARMUP" "${orders[*]}"
printf "median per-call ns of each run (rr: the sites in turn; random: a random order; *: calls found the\n"
printf "site table full); ref max: the slowest of the three runs' reference batches (PMPI_Allreduce)\n\n"
printf "%4s %-6s %-8s" pair order mode
printf " %9s" "${sites[@]/#/N=}"
echo
combos=()
for o in "${orders[@]}"; do
	for n in "${sites[@]}"; do
		for m in "${modes[@]}"; do
			combos+=("$o $n $m")
		done
	done
done
for p in $(seq 1 "$PAIRS"); do
	base=$(((RANDOM % 256) * 16))
	# Rotate the order so that no run always comes first.
	for ((k = 0; k < ${#combos[@]}; k++)); do
		read -r o n m <<<"${combos[$(((k + p * 5) % ${#combos[@]}))]}"
		read -r v r qq c w1 < <(run "$m" "$base" "$n" "$o")
		ns[$p,$o,$n,$m]=${v:-}
		ref[$p,$o,$n,$m]=${r:-}
		q[$p,$o,$n,$m]=${qq:-}
		merged[$p,$o,$n,$m]=${c:-0}
		one[$p,$o,$n,$m]=${w1:-}
	done
	for o in "${orders[@]}"; do
		for m in "${modes[@]}"; do
			printf "%4d %-6s %-8s" "$p" "$o" "$m"
			for n in "${sites[@]}"; do
				v=${ns[$p,$o,$n,$m]:--}
				[ "${merged[$p,$o,$n,$m]}" != 0 ] && v="$v*"
				printf " %9s" "$v"
			done
			echo
		done
		printf "%4d %-6s %-8s" "$p" "$o" "ref max"
		for n in "${sites[@]}"; do
			printf " %9s" "$(for m in "${modes[@]}"; do echo "${ref[$p,$o,$n,$m]:-}"; done |
				sort -g | tail -n 1)"
		done
		echo
	done
done

# This VM switches between a fast state and a slow one now and then (an 8-byte allreduce here
# 210-250 ns against 600-680 ns, for minutes at a time). A run is in the slow state when its
# reference batches (PMPI_Allreduce, which no wrapper sees) took 1.8x or more the fastest
# reference of any run: the tool's own cost never moves it, however large. A pair's N whose
# three runs are not in one state straddles a switch and is left out.
fastest=$(for k in "${!ref[@]}"; do echo "${ref[$k]}"; done |
	awk 'NF && ($1 < min || min == "") { min = $1 } END { print min }')
declare -A state
for p in $(seq 1 "$PAIRS"); do
	for o in "${orders[@]}"; do
		for n in "${sites[@]}"; do
			st=
			for m in "${modes[@]}"; do
				v=${ref[$p,$o,$n,$m]}
				if [ -z "$v" ] || [ -z "${ns[$p,$o,$n,$m]}" ]; then
					st=missing
					break
				fi
				c=$(echo "$v < 1.8 * $fastest" | bc -l)
				c=$([ "$c" = 1 ] && echo fast || echo slow)
				if [ -z "$st" ]; then st=$c; elif [ "$st" != "$c" ]; then
					st=mixed
					break
				fi
			done
			state[$p,$o,$n]=$st
		done
	done
done

# med EXPR STATE ORDER N: the median over the pairs of STATE of EXPR, a mode's ns (default),
# a ratio of two modes (default/none: of their ratios to the reference), a difference
# (default-none, in ns), or flat:MODE: the pair's (MODE/none at N) / (MODE/none at N=1), for
# pairs with both N in STATE; inrun:MODE: the pair's (MODE's N-site / one-site batches) / (none's),
# both taken inside their runs (pairs with N in STATE).
med() {
	local expr=$1 class=$2 o=$3 n=$4 p t
	for p in $(seq 1 "$PAIRS"); do
		[ "${state[$p,$o,$n]}" = "$class" ] || continue
		case $expr in
		flat:*)
			[ "${state[$p,$o,1]}" = "$class" ] || continue
			t=${expr#flat:}
			echo "(${q[$p,$o,$n,$t]} / ${q[$p,$o,$n,none]}) /" \
				"(${q[$p,$o,1,$t]} / ${q[$p,$o,1,none]})" | bc -l
			;;
		inrun:*) # N=1's runs need not be in the state: only its own run's one-site batches count
			t=${expr#inrun:}
			echo "${one[$p,$o,$n,$t]} / ${one[$p,$o,$n,none]}" | bc -l
			;;
		*/*) echo "${q[$p,$o,$n,${expr%/*}]} / ${q[$p,$o,$n,${expr#*/}]}" | bc -l ;;
		*-*) echo "${ns[$p,$o,$n,${expr%-*}]} - ${ns[$p,$o,$n,${expr#*-}]}" | bc -l ;;
		*) echo "${ns[$p,$o,$n,$expr]}" ;;
		esac
	done | sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", v[int((NR + 1) / 2)]; else printf "-" }'
}
count() {
	local class=$1 o=$2 n=$3 p k=0
	for p in $(seq 1 "$PAIRS"); do
		[ "${state[$p,$o,$n]}" = "$class" ] && [ "${state[$p,$o,1]}" = "$class" ] && k=$((k + 1))
	done
	echo $k
}
# The pairs of the in-run comparison: N's runs in STATE (N=1's need not be).
count_in() {
	local class=$1 o=$2 n=$3 p k=0
	for p in $(seq 1 "$PAIRS"); do
		[ "${state[$p,$o,$n]}" = "$class" ] && k=$((k + 1))
	done
	echo $k
}

out=
for p in $(seq 1 "$PAIRS"); do
	for o in "${orders[@]}"; do
		for n in "${sites[@]}"; do
			case ${state[$p,$o,$n]} in
			mixed) out+="pair $p, $o, N=$n left out: the machine changed speed during it"$'\n' ;;
			missing) out+="pair $p, $o, N=$n left out: a run printed no time"$'\n' ;;
			esac
		done
	done
done
[ -z "$out" ] || printf "\n%s" "$out"

# The arena's capacity: every default run's sites must have found room in the site table (a
# call at a site without room is merged into its function's overflow site, and the rank-0
# summary counts it).
full=
for p in $(seq 1 "$PAIRS"); do
	for o in "${orders[@]}"; do
		for n in "${sites[@]}"; do
			c=${merged[$p,$o,$n,default]}
			[ "$c" != 0 ] && full+=" pair $p $o N=$n: $c calls"
		done
	done
done
echo
if [ -n "$full" ]; then
	echo "the site table was full (* above; calls merged at the overflow site):$full"
else
	echo "every site found room in the site table at the default NOISETOOL_MEM (no merged calls)"
fi

ok=1 any=0 decided=0
for o in "${orders[@]}"; do
	for class in fast slow; do
		k=0
		for n in "${sites[@]}"; do
			k=$((k + $(count $class "$o" "$n")))
		done
		[ $k -gt 0 ] || continue
		any=1
		echo
		echo "$o order, $class state (reference batches $([ $class = slow ] && echo "1.8x or more" || echo "under 1.8x") the fastest, $fastest ns):" \
			"medians over pairs, ratios taken within each pair"
		printf "%6s %5s %9s %9s  %-8s %9s %10s %10s %10s %9s %9s\n" N pairs "none ns" "bare ns" \
			mode "mode ns" mode/none mode/bare "mode-none" "vs N=1" "in run"
		worst=0 worst_in=0 fewest=$PAIRS fewest_in=$PAIRS
		for n in "${sites[@]}"; do
			c=$(count $class "$o" "$n")
			[ "$c" -lt "$fewest" ] && fewest=$c
			c_in=$(count_in $class "$o" "$n")
			[ "$c_in" -lt "$fewest_in" ] && fewest_in=$c_in
			[ "$c" -gt 0 ] || continue
			for t in default ${BASELINE:+baseline}; do
				f=$(med flat:$t $class "$o" "$n")
				if [ $t = default ]; then
					printf "%6s %5d %9.1f %9.1f " "$n" "$c" \
						"$(med none $class "$o" "$n")" "$(med bare $class "$o" "$n")"
					d=$(echo "$f - 1" | bc -l | tr -d -)
					[ "$(echo "$d > $worst" | bc -l)" = 1 ] && worst=$d
					d=$(echo "$(med inrun:$t $class "$o" "$n") - 1" | bc -l | tr -d -)
					[ "$(echo "$d > $worst_in" | bc -l)" = 1 ] && worst_in=$d
				else
					printf "%6s %5s %9s %9s " "" "" "" ""
				fi
				printf " %-8s %9.1f %10s %10s %10.1f %9s %9s\n" $t "$(med $t $class "$o" "$n")" \
					"$(med $t/none $class "$o" "$n")" "$(med $t/bare $class "$o" "$n")" \
					"$(med $t-none $class "$o" "$n")" "$f" "$(med inrun:$t $class "$o" "$n")"
			done
		done
		few=
		[ "$fewest" -ge $MIN_PAIRS ] || few=" (provisional: $fewest pairs for some N, the acceptance needs $MIN_PAIRS)"
		w=$(printf "%.1f" "$(echo "100 * $worst" | bc -l)")
		if [ "$fewest" = 0 ]; then
			echo "$o order, $class state: no pair for some N, no verdict"
			continue
		elif [ "$(echo "$worst <= $TOLERANCE" | bc -l)" = 1 ]; then
			echo "$o order, $class state: default/none at every N within ${w} % of N=1 (<= 5 %): flat$few"
		else
			echo "$o order, $class state: default/none up to ${w} % from N=1 (acceptance <= 5 %): NOT FLAT$few"
			[ -z "$few" ] && ok=0
		fi
		[ -z "$few" ] && decided=1
		printf "%s order, %s state, in run (each N-site batch against one site's, same run; %d pairs or more): default/none at most %.1f %% from one site (for information; the verdict is the line above)\n" \
			"$o" $class "$fewest_in" "$(echo "100 * $worst_in" | bc -l)"
	done
done
[ -z "$full" ] || ok=0
[ $any = 1 ] || { echo "no pair measured in one state: no verdict"; exit 1; }
[ $decided = 1 ] || { echo "no state has $MIN_PAIRS pairs for every N: no verdict (more pairs: PAIRS argument)"; exit 1; }
[ $ok = 1 ] || exit 1
