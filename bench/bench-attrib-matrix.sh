#!/usr/bin/env bash
# The attribution matrix (issue 34, item 5): a 2-rank loop of WORK_US of compute and an 8-byte
# allreduce, one rank per CPU (tests/mpi/disturb.c), disturbed on rank 1 by a known cause, run
# through noisetool run; one row a case: the ground truth (what the program measured around its
# disturbances, what the injector spun, or for the CPU hog the delay itself), the job's delay,
# rank 1's share of it, issue 34's two figures against the ground truth (the share of it given to
# rank 1, and of that the share in the expected cause, with a verdict against 90 %; the cause's
# time beyond the truth as "over ms"), the share of rank 1's delay in the expected cause (of all
# of it, and of what is beyond CPU competition: preemption and steal), and its other causes
# (bench/attrib-matrix.py). "noOS %": the job's delay on instances without OS data. The first
# row, undisturbed, is the machine's own noise. The last line: every case at its aim, or how
# many are not.
#
#   bench-attrib-matrix.sh NOISETOOL DISTURB DUTY_HOG [ITERS=5000] [WORK_US=200]
set -u
NT=${1:?usage: bench-attrib-matrix.sh NOISETOOL DISTURB DUTY_HOG [ITERS] [WORK_US]}
PROG=${2:?}
HOG=${3:?}
ITERS=${4:-5000}
WORK=${5:-200}
. "$(dirname "$0")/../tests/lib.sh"
MATRIX="python3 $(dirname "$0")/attrib-matrix.py"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU, so that a rank's lateness comes from what happens on its own CPU"
nt_tmpdir
DUTY=30 # the hog's share of each 10 ms

# run_case NAME CAUSE TRUTH KIND EVERY AMOUNT [noisetool run options]: the job with rank 1 disturbed
# by KIND every EVERY iterations, and its row. TRUTH: the program's measured_ns when "measured",
# else attrib-matrix.py's (injected, delay).
run_case() {
	local name=$1 cause=$2 truth=$3 kind=$4 every=$5 amount=$6
	local f=$tmp/${name//[^A-Za-z0-9-]/_}
	shift 6
	timeout 600 "$NT" run --out "$f" --json "$f.json" "$@" -- \
		mpiexec -n 2 $(nt_bind 2) "$PROG" "$ITERS" "$WORK" "$kind" 1 "$every" "$amount" \
		>"$f.out" 2>&1 || { echo "FAIL: $name: the run failed:"; cat "$f.out"; return 1; }
	[ "$truth" = measured ] &&
		truth=$(sed -n 's/^disturb rank 1 kind .* measured_ns \([0-9]*\)$/\1/p' "$f.out")
	[ -n "$truth" ] || { echo "FAIL: $name: no ground truth in the output:"; cat "$f.out"; return 1; }
	$MATRIX row "$name" "$f.json" "$truth" "$cause" 1 | tee -a "$tmp/rows"
}

echo "bench-attrib-matrix ($NT_MPI): 2 ranks, $ITERS x ($WORK us of compute + 8-byte allreduce), rank 1 disturbed"
$MATRIX header
fail=0
run_case undisturbed preemption_ns 0 none 1 0 || fail=1
run_case inject-short injected_ns injected none 1 0 \
	--inject period=5ms,detour=200us,mode=unsync,ranks=1,seed=1 || fail=1
run_case inject-long injected_ns injected none 1 0 \
	--inject period=20ms,detour=1ms,mode=unsync,ranks=1,seed=1 || fail=1
taskset -c "$(nt_rank_cpu 2 1)" "$HOG" "$DUTY" 600 &
hog=$!
nt_on_exit "kill $hog 2>/dev/null; wait $hog 2>/dev/null"
run_case "hog-$DUTY%" preemption_ns delay none 1 0 || fail=1
# The hog inside the collectives: rank 1 does no compute (disturb.c, idle), so that it is
# always inside an allreduce, waiting for rank 0, when the hog takes its CPU; rank 0 then waits
# for it inside the call (held up, doc/attribution.md). Its second row is the held-up time's:
# rank 1's share of it given as preemption.
run_case "hog-in-call" preemption_ns delay idle 1 0 || fail=1
$MATRIX held "hog-in-call" "$tmp/hog-in-call.json" preemption_ns 1 | tee -a "$tmp/rows"
kill "$hog"
wait "$hog" 2>/dev/null
run_case sleep-1ms/10 blocked_ns measured sleep 10 1000 || fail=1
run_case faults-512/10 page_fault_ns measured faults 10 512 || fail=1
# No hardware counters on this VM: extra work is on the CPU and unexplained.
run_case extra-1ms/10 unexplained_ns measured extra 10 1000 || fail=1
# The acceptance's verdict (issue 34): every disturbed case's two shares of its ground truth at
# 90 % or more, the in-call hog's held-up and late time together at 80 % (attrib-matrix.py held);
# the undisturbed row is the machine's noise, not judged.
under=$(grep -v '^undisturbed ' "$tmp/rows" | grep -c -E ' under |\(under, aim')
echo "against the ground truth: $([ "$under" = 0 ] && echo "every case at its aim" ||
	echo "$under case(s) under their aim (the undisturbed row's delay is the machine's own noise)")"
exit $fail
