#!/usr/bin/env bash
# The fast path's cost in instructions (issue 33): what each call kind costs beyond the floor (a
# bare wrapper that reads the cycle counter twice, bench/bare-wrapper.c), counted by callgrind on
# a 1-rank loop (tests/mpi/insn-loop.c): the same binary gives the same count whatever the
# machine does, where timings move with the CPU model and the VM's state. Each count is the
# loop's instructions (the program has callgrind dump them apart from start, end and warm-up)
# over its CALLS calls; it holds the loop's own few instructions a call, the same with any
# library; the default level's rate-limited probe reads (1 % of wall time under valgrind's
# clock) add a fraction of an instruction.
#
#   test-insn.sh LIB PROGRAM FLOOR_LIB [--table]
#
# Budgets (issue 33), beyond the floor: an 8-byte collective at the default level <= 70; a
# point-to-point call (send, receive, wait) <= 40; an unsuccessful MPI_Test or MPI_Iprobe (a
# poll, booked without its histogram: call.h, nt_fast_poll_end) <= 25 (issue 37 asks 20; 24 here, and
# doc/overhead.md says what the last four would cost). The timing level (no probe reads) is printed beside the default;
# doc/overhead.md says why it costs what the default costs. --table prints the counts of every
# level without judging them (meson test --benchmark insn-count-MPI).
set -u
usage="usage: test-insn.sh LIB PROGRAM FLOOR_LIB [--table]"
LIB=${1:?$usage}
PROG=${2:?$usage}
FLOOR=${3:?$usage}
TABLE=${4:-}
. "$(dirname "$0")/../lib.sh"
CALLS=10000
KINDS="allreduce send recv wait test iprobe"
declare -A BUDGET=([allreduce]=70 [send]=40 [recv]=40 [wait]=40 [test]=25 [iprobe]=25)
command -v valgrind >/dev/null ||
	nt_skip "valgrind is not installed here (apt-get install valgrind; setup.sh installs it)"
nt_tmpdir
mkdir "$tmp/logs"

# count LIB KIND [VAR=VALUE...]: KIND's instructions a call with LIB preloaded ("" for none).
count() {
	local lib=$1 kind=$2 out=$tmp/cg ir
	shift 2
	rm -f "$out"*
	env ${lib:+LD_PRELOAD=$(nt_preload "$lib")} NOISETOOL_OUT="$tmp/logs" NOISETOOL_SUMMARY=0 \
		"$@" timeout 300 valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$PROG" "$kind" $CALLS >"$tmp/run.out" 2>&1 ||
		{ echo "FAIL: $kind: the run under callgrind" >&2; tail -n 20 "$tmp/run.out" >&2; return 1; }
	ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$out.1" 2>/dev/null)
	[ -n "$ir" ] || { echo "FAIL: $kind: callgrind dumped no count of the loop" >&2; return 1; }
	awk -v ir="$ir" -v n=$CALLS 'BEGIN { printf "%.1f\n", ir / n }'
}

# The test counts the floor and the default level; the table every level and no tool.
fail=0
printf '%-10s %8s %8s %8s %8s %8s %8s %8s\n' "call" "none" "floor" "timing" "default" "full" \
	"+default" "budget"
for kind in $KINDS; do
	none=- timing=- full=-
	floor=$(count "$FLOOR" $kind) || exit 1
	default=$(count "$LIB" $kind) || exit 1
	if [ "$TABLE" = --table ]; then
		none=$(count "" $kind) || exit 1
		timing=$(count "$LIB" $kind NOISETOOL_LEVEL=timing) || exit 1
		full=$(count "$LIB" $kind NOISETOOL_LEVEL=full) || exit 1
	fi
	over=$(awk -v d="$default" -v f="$floor" 'BEGIN { printf "%.1f", d - f }')
	printf '%-10s %8s %8s %8s %8s %8s %8s %8s\n' "$kind" "$none" "$floor" "$timing" "$default" \
		"$full" "$over" "${BUDGET[$kind]}"
	if [ "$TABLE" != --table ] && awk -v o="$over" -v b="${BUDGET[$kind]}" 'BEGIN { exit !(o > b) }'; then
		echo "FAIL: $kind: $over instructions a call beyond the floor at the default level, budget ${BUDGET[$kind]}"
		fail=1
	fi
done
echo "(instructions a call, $NT_MPI, 1 rank; +default: the default level beyond the floor)"
exit $fail
