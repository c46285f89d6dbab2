#!/usr/bin/env bash
# A program's standard output (results, return codes) is byte-identical without the library,
# with it, and with it disabled.
set -u
LIB=${1:?usage: test-same-output.sh LIB PROGRAM [ARGS...]}
shift
command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { timeout 120 mpiexec -n 2 -bind-to core "$@"; }
run "$@" >"$tmp/plain" 2>"$tmp/plain.err" || { echo "FAIL: plain run"; cat "$tmp/plain.err"; exit 1; }
run -genv LD_PRELOAD "$LIB" -genv NOISETOOL_OUT "$tmp" "$@" >"$tmp/pre" 2>"$tmp/pre.err" ||
	{ echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
run -genv LD_PRELOAD "$LIB" -genv NOISETOOL_DISABLE 1 "$@" >"$tmp/off" 2>/dev/null ||
	{ echo "FAIL: disabled run"; exit 1; }
cat "$tmp/plain"
fail=0
diff -u "$tmp/plain" "$tmp/pre" || { echo "FAIL: output differs with the library"; fail=1; }
diff -u "$tmp/plain" "$tmp/off" || { echo "FAIL: output differs with the library disabled"; fail=1; }
grep -q "log written" "$tmp/pre.err" || { echo "FAIL: no log"; cat "$tmp/pre.err"; fail=1; }
exit $fail
