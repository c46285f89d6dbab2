#!/usr/bin/env bash
# The tool's own start and end cost: the wall time of a whole job that only starts MPI, does one
# allreduce and ends (bench/startup.c), without the preload, with it (default settings: summary
# on, log written to a scratch directory), and with it and NOISETOOL_DISABLE=1; at 2 ranks (one
# per CPU) and at 4 ranks on the same 2 CPUs (two ranks per CPU: MPICH's blocking calls spin, so
# every message between two ranks sharing a CPU can cost a 4 ms scheduler slice). Runs are
# alternated, the order rotating every pair; the table gives each mode's median wall time and the
# median over pairs of (preload - none), against the budgets (DESIGN.md section 5), and the
# median clock error bound the preload runs' logs state (so that a cheaper clock sync can be
# seen not to be a worse one).
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

# run NP MODE: one job's wall time in ns (mpiexec's start to its end), or "fail"; a preload
# run's stated clock error (ns) is appended to $tmp/clock-error-NP.
run() {
	local np=$1 mode=$2 env=() bind="" i
	for ((i = 0; i < np; i++)); do
		bind+="${bind:+,}${cpus[i % 2]}"
	done
	case $mode in
	none) env=(-genv LD_PRELOAD "") ;;
	preload) env=(-genv LD_PRELOAD "$(nt_preload "$LIB")") ;;
	disabled) env=(-genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_DISABLE 1) ;;
	esac
	local t0 t1
	t0=$(date +%s%N)
	if timeout 120 mpiexec -n "$np" -bind-to "user:$bind" "${env[@]}" \
		-genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_WAIT mpich "$PROG" >/dev/null 2>"$tmp/err"; then
		t1=$(date +%s%N)
		echo $((t1 - t0))
		if [ "$mode" = preload ]; then
			"$NT" report "$tmp"/*.ntlog --json - 2>/dev/null |
				python3 -c 'import json, sys; print(json.load(sys.stdin)["clock_sync"]["max_error_ns"])' \
					>>"$tmp/clock-error-$np"
		fi
	else
		echo fail
		sed 's/^/    /' "$tmp/err" >&2
	fi
	rm -f "$tmp"/*.ntlog*
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)]; else printf "-" }'; }

nt_tmpdir
declare -A t med
ok=1
printf "bench-startup: %d pairs per rank count; %s with NOISETOOL_WAIT=mpich (adaptive waits off)\n" \
	"$PAIRS" "$(basename "$PROG")"
for np in 2 4; do
	printf "\n%d ranks on CPUs %s,%s\n%4s %10s %10s %10s %12s\n" "$np" "${cpus[0]}" "${cpus[1]}" \
		pair "none ms" "preload ms" "disabled ms" "pre-none ms"
	run "$np" none >/dev/null # warm the page cache and the launcher
	for p in $(seq 1 "$PAIRS"); do
		for k in 0 1 2; do
			m=${modes[$(((k + p) % 3))]}
			t[$np,$p,$m]=$(run "$np" "$m")
		done
		if [[ ${t[$np,$p,none]} == fail || ${t[$np,$p,preload]} == fail ||
			${t[$np,$p,disabled]} == fail ]]; then
			echo "pair $p: a job failed"
			ok=0
			continue
		fi
		printf "%4d %10.1f %10.1f %10.1f %12.1f\n" "$p" "$(echo "${t[$np,$p,none]} / 1000000" | bc -l)" \
			"$(echo "${t[$np,$p,preload]} / 1000000" | bc -l)" \
			"$(echo "${t[$np,$p,disabled]} / 1000000" | bc -l)" \
			"$(echo "(${t[$np,$p,preload]} - ${t[$np,$p,none]}) / 1000000" | bc -l)"
	done
	for m in "${modes[@]}" diff off; do
		for p in $(seq 1 "$PAIRS"); do
			[[ ${t[$np,$p,none]:-fail} == fail || ${t[$np,$p,preload]:-fail} == fail ||
				${t[$np,$p,disabled]:-fail} == fail ]] && continue
			case $m in
			diff) echo "(${t[$np,$p,preload]} - ${t[$np,$p,none]}) / 1000000" ;;
			off) echo "(${t[$np,$p,disabled]} - ${t[$np,$p,none]}) / 1000000" ;;
			*) echo "${t[$np,$p,$m]} / 1000000" ;;
			esac
		done | bc -l | median >"$tmp/med"
		med[$m]=$(cat "$tmp/med")
	done
	budget=$((np == 2 ? BUDGET_MS_2 : BUDGET_MS_4))
	printf "median %10s %10s %10s %12s   (budget <= %d ms; NOISETOOL_DISABLE=1 - none: %s ms)\n" \
		"${med[none]}" "${med[preload]}" "${med[disabled]}" "${med[diff]}" "$budget" "${med[off]}"
	printf "clock error the preload runs' logs state: median %s ns, range %s ns\n" \
		"$(median <"$tmp/clock-error-$np")" \
		"$(sort -g "$tmp/clock-error-$np" | sed -n '1p;$p' | paste -sd - -)"
	[[ ${med[diff]} != - ]] && [ "$(echo "${med[diff]} <= $budget" | bc -l)" = 1 ] || ok=0
done
echo
[ $ok = 1 ] && echo "within budget" || { echo "OVER BUDGET"; exit 1; }
