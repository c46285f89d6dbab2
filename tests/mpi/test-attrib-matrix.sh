#!/usr/bin/env bash
# The attribution matrix's cases that hold on a loaded machine (bench/bench-attrib-matrix.sh has
# them all, with the figures): a known disturbance on rank 1 of a 2-rank loop of 200 us of
# compute and an allreduce (disturb.c), measured by the program or the injector. Rank 1 gets
# the majority of the job's delay; the expected cause is the largest of rank 1's delay beyond
# CPU competition and half of it or more; it holds no more than the ground truth and the noise
# allowance below (bench/attrib-matrix.py check, which says why CPU competition is set apart).
set -u
NT=${1:?usage: test-attrib-matrix.sh NOISETOOL DISTURB}
PROG=${2:?}
. "$(dirname "$0")/../lib.sh"
MATRIX="python3 $(dirname "$0")/../../bench/attrib-matrix.py"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU, so that a rank's lateness comes from what happens on its own CPU"
nt_tmpdir
WORK=200
fail=0

# check NAME CAUSE TRUTH ALLOWANCE ITERS KIND EVERY AMOUNT [noisetool run options]: the job
# with rank 1 disturbed by KIND every EVERY of ITERS iterations, its row and its check. TRUTH:
# "measured" (the program's measured_ns) or "injected" (what the injector spun).
check() {
	local name=$1 cause=$2 truth=$3 allowance=$4 iters=$5 kind=$6 every=$7 amount=$8
	shift 8
	timeout 120 "$NT" run --out "$tmp/$name" --json "$tmp/$name.json" "$@" -- \
		mpiexec -n 2 $(nt_bind 2) "$PROG" "$iters" "$WORK" "$kind" 1 "$every" "$amount" \
		>"$tmp/$name.out" 2>&1 || { echo "FAIL: $name: the run failed:"; cat "$tmp/$name.out"; return 1; }
	# The application's own result: every allreduce summed 1 + 2.
	grep -q "^result $((3 * iters)).0$" "$tmp/$name.out" ||
		{ echo "FAIL: $name: the program's result changed"; grep result "$tmp/$name.out"; return 1; }
	[ "$truth" = measured ] &&
		truth=$(sed -n 's/^disturb rank 1 kind .* measured_ns \([0-9]*\)$/\1/p' "$tmp/$name.out")
	[ -n "$truth" ] || { echo "FAIL: $name: no ground truth:"; cat "$tmp/$name.out"; return 1; }
	$MATRIX check "$name" "$tmp/$name.json" "$truth" "$cause" 1 "$allowance"
}

# The disturbances are large beside the machine's own noise: undisturbed, 3,000 phases of 200 us
# (0.6 s of work) took 0.9-2.7 s beside the other jobs of this 2-vCPU VM (load average 3-4.5),
# 0.17-1.29 s of it delay, 94-99 % preemption; a 1 ms detour every 20 ms (the bench's
# inject-long) is a twentieth of the time.
$MATRIX header
# 10 ms sleeps every 2 iterations (1.5 s). The ground truth is the sleeps' wall time, which
# holds all of rank 1's blocking: undisturbed, rank 1 blocked 0 ns (MPICH and Open MPI poll
# their shared memory), and the split only scales causes down. 1 ms is the allowance for what
# else may block it now and then (a page of the program read from disk), none ever seen: 1.51 s
# blocked of 1.52 s measured, at most 1.56 of 1.57 s in 12 runs, 4 of them beside a hog on
# every CPU.
check sleep blocked_ns measured 1000000 300 sleep 2 10000 || fail=1
# 2,048 fresh pages touched every 2 of 300 iterations (~1 s). A first touch of an anonymous page
# costs 1.5-1.7 us of CPU (2.3-2.5 us of wall) in this KVM guest; the tool charges the kernel's
# time in the window and the on-CPU time left beside the extra faults (attrib.c); at a fixed
# 0.25 us a fault it gave them 7 % (959 ms measured, 76.8 ms as faults); now 98-99 %. The
# allowance is 15 % of the faults' measured wall time: the on-CPU time left unexplained beside
# them goes to them (up to 10 us a fault), and beside a hog on every CPU (an AMD EPYC guest,
# 2026-12-07) that was more than the faults took: Open MPI failed 5 of 17 runs with a 1 ms
# allowance, each failure read (3) this case, over by 5.4-9.6 % (734 ms given for 670
# measured) (doc/attribution.md, page_fault_ns).
check faults page_fault_ns measured 15% 300 faults 2 2048 || fail=1
# 5 ms detours every 10 ms: the injector's spun time is exact (doc/attribution.md), so no
# allowance; what the host or another task took inside a detour is not counted as spun.
# Injected 88-97 % of rank 1's delay beyond CPU competition (both MPIs; MPICH beside a hog on
# every CPU 87-92 %). Open MPI beside a hog on every CPU gave 42-64 % (one run of two failed)
# until a late arrival took the causes of its own hold inside the instance before (attrib.c,
# carry_hold): a rank preempted inside an allreduce (Open MPI yields when oversubscribed,
# tests/launch/mpiexec) left it up to 36 ms after the other and arrived that much later at the
# next one with nothing in that interval's window to explain it. Now 80-86 % beside a hog on
# every CPU, both MPIs.
check inject injected_ns injected 0 3000 none 1 0 \
	--inject period=10ms,detour=5ms,mode=unsync,ranks=1,seed=1 || fail=1
exit $fail
