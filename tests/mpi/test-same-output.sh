#!/usr/bin/env bash
# A program's standard output (results, return codes) is byte-identical without the library,
# with it, and with it disabled.
set -u
LIB=${1:?usage: test-same-output.sh LIB PROGRAM [ARGS...]}
shift
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")")
run "$@" >"$tmp/plain" 2>"$tmp/plain.err" || { echo "FAIL: plain run"; cat "$tmp/plain.err"; exit 1; }
run "${pre[@]}" -genv NOISETOOL_OUT "$tmp" "$@" >"$tmp/pre" 2>"$tmp/pre.err" ||
	{ echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
run "${pre[@]}" -genv NOISETOOL_DISABLE 1 "$@" >"$tmp/off" 2>"$tmp/off.err" ||
	{ echo "FAIL: disabled run"; cat "$tmp/off.err"; exit 1; }
cat "$tmp/plain"
fail=0
[ -s "$tmp/plain" ] || { echo "FAIL: the program printed nothing"; fail=1; }
diff -u "$tmp/plain" "$tmp/pre" || { echo "FAIL: output differs with the library"; fail=1; }
diff -u "$tmp/plain" "$tmp/off" || { echo "FAIL: output differs with the library disabled"; fail=1; }
grep -q "log written" "$tmp/pre.err" || { echo "FAIL: no log"; cat "$tmp/pre.err"; fail=1; }
exit $fail
