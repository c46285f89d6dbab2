#!/usr/bin/env bash
# NOISETOOL_TEST_CLOCK with a value that is not a finite number in its bounds (issue 38 item
# 12): one line from rank 0, the same results, no clock skewed, and a log the report reads
# (a nan offset made every time of the log nan, and the report refused it).
#
#   test-test-clock.sh LIB PROGRAM NOISETOOL        PROGRAM: allreduce-loop
set -u
LIB=${1:?usage: test-test-clock.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }

run "$PROG" 200 >"$tmp/plain.out" 2>/dev/null || { echo "FAIL: plain run"; exit 1; }
grep '^result' "$tmp/plain.out" >"$tmp/want"
[ -s "$tmp/want" ] || { echo "FAIL: the plain run printed no result"; exit 1; }
i=0
for v in "1:nan:0" "1:0:nan" "1:inf:0" "1:-inf:0" "0:0:infinity" "1:1e300:0" "1:0:-2e6" \
	"1:5e12:0" "1:0:20000" "1:50x:0" "1:50:100;1:nan:0" "-1:0:0" "1::0" "1:0:1e4.5"; do
	i=$((i + 1))
	mkdir "$tmp/$i"
	if ! run -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/$i" \
		-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_TEST_CLOCK "$v" "$PROG" 200 \
		>"$tmp/$i.out" 2>"$tmp/$i.err"; then
		echo "FAIL: NOISETOOL_TEST_CLOCK='$v': the job failed"
		cat "$tmp/$i.err"
		fail=1
		continue
	fi
	grep '^result' "$tmp/$i.out" | cmp -s - "$tmp/want" ||
		{ echo "FAIL: NOISETOOL_TEST_CLOCK='$v': results differ"; fail=1; }
	n=$(grep -c "noisetool: NOISETOOL_TEST_CLOCK='$v': expected" "$tmp/$i.err")
	[ "$n" -eq 1 ] || { echo "FAIL: NOISETOOL_TEST_CLOCK='$v': $n messages, want 1:"; cat "$tmp/$i.err"; fail=1; }
	log=$(ls "$tmp/$i"/*.ntlog 2>/dev/null | head -n 1)
	if [ -z "$log" ]; then
		echo "FAIL: NOISETOOL_TEST_CLOCK='$v': no log"
		fail=1
	elif ! timeout 60 "$NT" report "$log" --json "$tmp/$i.json" >"$tmp/$i.txt" 2>&1; then
		echo "FAIL: NOISETOOL_TEST_CLOCK='$v': the report cannot read the log:"
		cat "$tmp/$i.txt"
		fail=1
	elif grep -q '"test_error_ns"' "$tmp/$i.json"; then
		echo "FAIL: NOISETOOL_TEST_CLOCK='$v': refused, yet the report has a clock test's error"
		fail=1
	fi
	[ $fail -eq 0 ] && echo "ok: NOISETOOL_TEST_CLOCK='$v': $(grep -m1 'noisetool:' "$tmp/$i.err")"
done
exit $fail
