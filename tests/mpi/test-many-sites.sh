#!/usr/bin/env bash
# More call sites than the site table holds (NOISETOOL_MEM=64K: 16 sites): every call is still
# counted, at its function's merged site, and the report says PARTIAL and why; with the default
# table the same job is complete. Results are unchanged.
set -u
LIB=${1:?usage: test-many-sites.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
N=50
SITES=64
fail=0
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }
run "$PROG" $N >"$tmp/plain" 2>&1 || { echo "FAIL: plain run"; cat "$tmp/plain"; exit 1; }
for mem in 64K 16M; do
	mkdir "$tmp/$mem"
	run -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/$mem" \
		-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_MEM $mem "$PROG" $N >"$tmp/pre" 2>"$tmp/err" ||
		{ echo "FAIL: NOISETOOL_MEM=$mem: the run"; cat "$tmp/err"; exit 1; }
	cmp -s "$tmp/plain" "$tmp/pre" || { echo "FAIL: NOISETOOL_MEM=$mem: results differ"; fail=1; }
	"$NT" report "$tmp/$mem"/*.ntlog --top 0 --json "$tmp/$mem.json" >"$tmp/$mem.txt" ||
		{ echo "FAIL: report"; exit 1; }
	head -n 2 "$tmp/$mem.txt"
	calls=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(s["calls"] for s in r["sites"] if s["function"] == "MPI_Allreduce"))' "$tmp/$mem.json")
	echo "NOISETOOL_MEM=$mem: $calls MPI_Allreduce calls counted"
	[ "$calls" -eq $((2 * N * SITES)) ] ||
		{ echo "FAIL: NOISETOOL_MEM=$mem: $calls calls counted, not $((2 * N * SITES))"; fail=1; }
done
grep -q "PARTIAL: [0-9]* calls found the site table full" "$tmp/64K.txt" ||
	{ echo "FAIL: a full site table is not reported as partial, naming it"; fail=1; }
grep -q "complete" "$tmp/16M.txt" || { echo "FAIL: the default table is reported partial"; fail=1; }
exit $fail
