#!/usr/bin/env bash
# The tool's own start and end cost: the wall time of a whole job that only starts MPI, does one
# allreduce and ends (bench/startup.c), without the preload, with it (default settings: summary
# on, log written to a scratch directory), and with it and NOISETOOL_DISABLE=1; at 2 ranks (one
# per CPU) and at 4 ranks on the same 2 CPUs (two ranks per CPU: MPICH's blocking calls spin, so
# every message between two ranks sharing a CPU can cost a 4 ms scheduler slice). Runs are
# alternated, the order rotating every pair. The table gives each mode's median wall time, the
# median over pairs of (preload - none) against the budgets (DESIGN.md section 5), the same for
# the time from MPI_Init to the end of MPI_Finalize (the program's own clock, the slowest rank:
# what a tool can add to, without the launcher's noise), and the median clock error bound the
# preload runs' logs state (so that a cheaper clock sync can be seen not to be a worse one).
set -u
LIB=${1:?usage: bench-startup.sh LIB PROGRAM NOISETOOL [PAIRS]}
PROG=${2:?}
NT=${3:?}
PAIRS=${4:-7}
. "$(dirname "$0")/../tests/lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "2 ranks one per CPU, 4 ranks two per CPU"

modes=(none preload disabled)
mapfile -t cpus < <(nt_cpus)
BUDGET_MS_2=10 # 2 ranks, one per CPU
BUDGET_MS_4=50 # 4 ranks on 2 CPUs

# clock_error DIR: the clock error bound (ns) that the one log in DIR states, or a reason on
# stderr and status 1.
clock_error() {
	local logs=("$1"/*.ntlog) json there
	if [ ${#logs[@]} -ne 1 ] || [ ! -f "${logs[0]}" ]; then
		there=$(ls -A "$1" | paste -sd ' ')
		echo "    not one log in $1 (there: ${there:-nothing})" >&2
		return 1
	fi
	json=$("$NT" report "${logs[0]}" --json - 2>"$1/report-err") ||
		{ sed 's/^/    /' "$1/report-err" >&2; return 1; }
	python3 -c 'import json, sys
try:
    print(json.load(sys.stdin)["clock_sync"]["max_error_ns"])
except (ValueError, KeyError, TypeError) as e:
    sys.exit("    noisetool report --json gave no clock_sync.max_error_ns: %r" % e)' <<<"$json"
}

# run NP MODE: "WALL_NS IN_MPI_NS" of one job (mpiexec's start to its end; the slowest rank's
# MPI_Init to MPI_Finalize), or "fail"; a preload run's stated clock error (ns) is appended to
# $tmp/clock-error-NP (a preload run without a readable log fails). Each job writes its log to a
# directory of its own, so a log is never another job's or removed while it is read.
run() {
	local np=$1 mode=$2 env=() bind="" i logs
	for ((i = 0; i < np; i++)); do
		bind+="${bind:+,}${cpus[i % 2]}"
	done
	case $mode in
	none) env=(-genv LD_PRELOAD "") ;;
	preload) env=(-genv LD_PRELOAD "$(nt_preload "$LIB")") ;;
	disabled) env=(-genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_DISABLE 1) ;;
	esac
	logs=$(mktemp -d "$tmp/logs.XXXXXX") || { echo fail; return; }
	local t0 t1
	t0=$(date +%s%N)
	if timeout 120 mpiexec -n "$np" -bind-to "user:$bind" "${env[@]}" \
		-genv NOISETOOL_OUT "$logs" -genv NOISETOOL_WAIT mpich "$PROG" >"$tmp/out" 2>"$tmp/err"; then
		t1=$(date +%s%N)
		if [ "$mode" = preload ] && ! clock_error "$logs" >>"$tmp/clock-error-$np"; then
			echo fail
			echo "    (no clock error from the log of this preload job at $np ranks; its stderr:)" >&2
			sed 's/^/    /' "$tmp/err" >&2
		else
			echo "$((t1 - t0)) $(awk '/^in_mpi_ns/ && $2 > m { m = $2 } END { print m + 0 }' "$tmp/out")"
		fi
	else
		echo fail
		sed 's/^/    /' "$tmp/err" >&2
	fi
	rm -rf "$logs"
}

# median: of the numbers on stdin, one a line ("-" for none).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)]; else printf "-" }'; }
ms() { awk -v a="$1" -v b="${2:-0}" 'BEGIN { printf "%.1f", (a - b) / 1e6 }'; }

nt_tmpdir
declare -A wall inmpi
ok=1
printf "bench-startup: %d pairs per rank count; %s with NOISETOOL_WAIT=mpich (adaptive waits off)\n" \
	"$PAIRS" "$(basename "$PROG")"
for np in 2 4; do
	printf "\n%d ranks on CPUs %s,%s (wall ms: mpiexec's start to end; in-MPI: MPI_Init to the end of MPI_Finalize)\n" \
		"$np" "${cpus[0]}" "${cpus[1]}"
	printf "%4s %9s %9s %9s %13s %16s\n" pair none preload disabled "preload-none" "in-MPI pre-none"
	run "$np" none >/dev/null # warm the page cache and the launcher
	good=()
	for p in $(seq 1 "$PAIRS"); do
		failed=0
		for k in 0 1 2; do
			m=${modes[$(((k + p) % 3))]}
			# Not < <(run ...): read returned at the first line and the run's report and
			# clean-up went on beside the next job (which removed the log being read).
			read -r w i <<<"$(run "$np" "$m")"
			[ "$w" = fail ] && failed=1
			wall[$m]=$w inmpi[$m]=${i:-0}
		done
		if [ $failed = 1 ]; then
			echo "pair $p: a job failed"
			ok=0
			continue
		fi
		good+=("${wall[none]} ${wall[preload]} ${wall[disabled]} ${inmpi[none]} ${inmpi[preload]}")
		printf "%4d %9s %9s %9s %13s %16s\n" "$p" "$(ms "${wall[none]}")" "$(ms "${wall[preload]}")" \
			"$(ms "${wall[disabled]}")" "$(ms "${wall[preload]}" "${wall[none]}")" \
			"$(ms "${inmpi[preload]}" "${inmpi[none]}")"
	done
	# column EXPR: the median over good pairs of an awk expression of $1..$5 (ns), in ms.
	column() { printf "%s\n" "${good[@]}" | awk "{ print ($1) / 1e6 }" | median; }
	diff=$(column '$2 - $1')
	budget=$((np == 2 ? BUDGET_MS_2 : BUDGET_MS_4))
	printf "%4s %9s %9s %9s %13s %16s   budget <= %d ms (preload-none); NOISETOOL_DISABLE=1 - none: %s ms\n" \
		med "$(column '$1')" "$(column '$2')" "$(column '$3')" "$diff" "$(column '$5 - $4')" \
		"$budget" "$(column '$3 - $1')"
	printf "clock error the preload runs' logs state: median %s ns, range %s ns\n" \
		"$(median <"$tmp/clock-error-$np")" \
		"$(sort -g "$tmp/clock-error-$np" | sed -n '1p;$p' | paste -sd - -)"
	[ "$diff" != - ] && [ "$(echo "$diff <= $budget" | bc -l)" = 1 ] || ok=0
done
echo
[ $ok = 1 ] && echo "within budget" || { echo "OVER BUDGET"; exit 1; }
