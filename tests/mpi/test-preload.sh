#!/usr/bin/env bash
# A plain MPI program under mpiexec with the wrapper library preloaded: same results as without
# it, and rank 0's summary names its call sites with the right call counts.
set -u
LIB=${1:?usage: test-preload.sh LIB PROGRAM}
PROG=${2:?}
command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec"; exit 77; }
N=20000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { timeout 120 mpiexec -n 2 -bind-to core "$@"; }

run "$PROG" $N >"$tmp/plain.out" 2>"$tmp/plain.err" || { echo "FAIL: plain run"; cat "$tmp/plain.err"; exit 1; }
run -genv LD_PRELOAD "$LIB" "$PROG" $N >"$tmp/pre.out" 2>"$tmp/pre.err" ||
	{ echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
cat "$tmp/pre.err"
grep '^result' "$tmp/plain.out" >"$tmp/a"
grep '^result' "$tmp/pre.out" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: results differ"; fail=1; }
grep -q "noisetool: 2 ranks" "$tmp/pre.err" || { echo "FAIL: no summary"; fail=1; }
calls=$(awk '/noisetool: +MPI_Allreduce / { print $(NF-3) }' "$tmp/pre.err")
[ "$calls" = "$((2 * N))" ] || { echo "FAIL: MPI_Allreduce calls '$calls', want $((2 * N))"; fail=1; }
grep -q "MPI_Barrier .*$(basename "$PROG")+0x" "$tmp/pre.err" ||
	{ echo "FAIL: barrier site not named module+offset"; fail=1; }

# NOISETOOL_DISABLE=1: no summary, same result.
run -genv LD_PRELOAD "$LIB" -genv NOISETOOL_DISABLE 1 "$PROG" $N >"$tmp/off.out" 2>"$tmp/off.err" ||
	{ echo "FAIL: disabled run"; fail=1; }
grep -q noisetool "$tmp/off.err" && { echo "FAIL: disabled run printed a summary"; fail=1; }
grep '^result' "$tmp/off.out" | cmp -s - "$tmp/a" || { echo "FAIL: disabled results differ"; fail=1; }

# A bad setting: one message from rank 0 naming the variable, the job still runs.
run -genv LD_PRELOAD "$LIB" -genv NOISETOOL_LEVEL bogus "$PROG" 100 >"$tmp/bad.out" 2>"$tmp/bad.err" ||
	{ echo "FAIL: run with a bad NOISETOOL_LEVEL"; fail=1; }
[ "$(grep -c 'NOISETOOL_LEVEL=' "$tmp/bad.err")" -eq 1 ] ||
	{ echo "FAIL: want exactly one NOISETOOL_LEVEL message"; cat "$tmp/bad.err"; fail=1; }
grep -q "timing, os, full" "$tmp/bad.err" || { echo "FAIL: accepted values not named"; fail=1; }
exit $fail
