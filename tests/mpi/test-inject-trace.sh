#!/usr/bin/env bash
# NOISETOOL_INJECT=trace= naming what is not a regular file (issue 38 item 4): a FIFO without a
# writer hung MPI_Init in open(), /dev/zero in a read that never ended. Now: one line from the
# lowest rank, and the job runs without injection, with the same results; `timeout` turns a
# regression into a failure.
#
#   test-inject-trace.sh LIB PROGRAM        PROGRAM: allreduce-loop
set -u
LIB=${1:?usage: test-inject-trace.sh LIB PROGRAM}
PROG=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0
run() { timeout 60 mpiexec -n 2 $(nt_bind 2) "$@"; }

run "$PROG" 200 >"$tmp/plain.out" 2>/dev/null || { echo "FAIL: plain run"; exit 1; }
grep '^result' "$tmp/plain.out" >"$tmp/want"
mkfifo "$tmp/fifo" || nt_skip "mkfifo failed here"
mkdir "$tmp/dir" "$tmp/out"
for t in "$tmp/fifo" /dev/zero "$tmp/dir"; do
	start=$(date +%s)
	run -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/out" \
		-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_INJECT "trace=$t" "$PROG" 200 \
		>"$tmp/run.out" 2>"$tmp/run.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL: trace=$t: the job failed ($rc; 124: it hung for $(($(date +%s) - start)) s)"
		cat "$tmp/run.err"
		fail=1
		continue
	fi
	grep '^result' "$tmp/run.out" | cmp -s - "$tmp/want" || { echo "FAIL: trace=$t: results differ"; fail=1; }
	n=$(grep -c "noisetool: NOISETOOL_INJECT on rank 0: trace '$t': not a regular file.*injection is off" "$tmp/run.err")
	echo "trace=$t: $(grep 'noisetool:' "$tmp/run.err")"
	[ "$n" -eq 1 ] || { echo "FAIL: trace=$t: $n messages, want 1"; cat "$tmp/run.err"; fail=1; }
done
exit $fail
