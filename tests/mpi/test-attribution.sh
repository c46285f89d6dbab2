#!/usr/bin/env bash
# Attribution on a real job (real mpiexec, injector and hogs), judged by ground truth the tool
# records, so that it holds however loaded the machine is: injected noise is blamed only on the
# rank it was injected into, and for at least half of what it spun outside MPI calls; the rank
# beside a CPU hog imposes delay that is its own preemption; clocks skewed by +-50 ms and
# 100 ppm are corrected within the log's own stated error bound. doc/attribution.md has the model.
set -u
NT=${1:?usage: test-attribution.sh NOISETOOL PROGRAM}
PROG=${2:?}
. "$(dirname "$0")/../lib.sh"
CHECK="python3 $(dirname "$0")/check-attribution.py"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU, so that a rank's lateness comes from what happens on its own CPU"
nt_tmpdir
fail=0
ITERS=6000

# run NAME [noisetool run options]: the job (ITERS x 100 us of work + an 8-byte allreduce, one
# rank per CPU) through noisetool run, its JSON report in $tmp/NAME.json
run() {
	local name=$1
	shift
	timeout 300 "$NT" run --out "$tmp/$name" --json "$tmp/$name.json" "$@" -- \
		mpiexec -n 2 $(nt_bind 2) "$PROG" $ITERS 100 >"$tmp/$name.out" 2>&1 ||
		{ echo "FAIL: $name run"; cat "$tmp/$name.out"; return 1; }
	sed -n '/^Late arrivals/,/^$/p; /^Culprits by rank/,/^$/p' "$tmp/$name.out"
	# The application's own result: every allreduce summed 1 + 2.
	grep -q "^result $((3 * ITERS)).0$" "$tmp/$name.out" ||
		{ echo "FAIL: $name: the program's result changed"; grep result "$tmp/$name.out"; return 1; }
}

# 1. Unsynchronized detours of 5 ms every 25 ms on rank 1: longer than a hog's 4 ms slice, so
#    that each one is recorded and joined whatever else competes for the CPUs.
echo "== 5 ms detours every 25 ms injected on rank 1"
if run inject --inject period=25ms,detour=5ms,mode=unsync,ranks=1,seed=1; then
	$CHECK inject "$tmp/inject.json" 1 || fail=1
else
	fail=1
fi

# 2. A CPU hog on rank 1's CPU (beside whatever else runs there).
echo "== a CPU hog on rank 1's CPU ($(nt_rank_cpu 2 1))"
nt_hog "$(nt_rank_cpu 2 1)"
if run hog; then
	$CHECK hog "$tmp/hog.json" 1 || fail=1
else
	fail=1
fi
nt_hog_stop

# 3. Skewed clocks: +-50 ms offset and +-100 ppm drift on rank 1.
for skew in "1:50000000:100" "1:-50000000:-100"; do
	echo "== clock skew $skew"
	if NOISETOOL_TEST_CLOCK=$skew run clock; then
		$CHECK clock "$tmp/clock.json" || fail=1
	else
		fail=1
	fi
	rm -rf "$tmp/clock"
done
exit $fail
