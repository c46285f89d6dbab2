#!/usr/bin/env bash
# MPI_THREAD_MULTIPLE: collectives from two threads on two communicators are both recorded, each
# at its own call site with the exact call count; a call site both threads call at once counts
# every call of both; results are unchanged.
set -u
LIB=${1:?usage: test-threads.sh LIB PROGRAM NOISETOOL SOURCE}
PROG=${2:?}
NT=${3:?}
SRC=${4:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
# Each of the two threads of a rank makes N calls. Ranks are not bound: their threads may use
# every CPU of the mask (hydra's processes inherit it). On one CPU MPICH's busy waits advance
# about one collective per scheduler slice (~5 ms here), so N is smaller there.
N=3000
[ "$(nt_ncpus)" -ge 2 ] || N=500
nt_tmpdir
fail=0
timeout 120 mpiexec -n 2 "$PROG" $N >"$tmp/plain" 2>&1
rc=$?
[ $rc -eq 77 ] && nt_skip "this MPI has no MPI_THREAD_MULTIPLE"
[ $rc -eq 0 ] || { echo "FAIL: plain run"; cat "$tmp/plain"; exit 1; }
timeout 120 mpiexec -n 2 -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp" \
	-genv NOISETOOL_SUMMARY 0 "$PROG" $N >"$tmp/pre" 2>"$tmp/pre.err" ||
	{ echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
grep -q result "$tmp/plain" || { echo "FAIL: the plain run printed no result"; fail=1; }
cmp -s <(grep result "$tmp/plain") <(grep result "$tmp/pre") || { echo "FAIL: results differ"; fail=1; }
"$NT" report "$(ls "$tmp"/*.ntlog | head -n 1)" >"$tmp/report" || { echo "FAIL: report"; exit 1; }
cat "$tmp/report"
sed -i -n '/^Call sites by MPI time/,/^$/p' "$tmp/report" # the call-site table only
for site in A B S; do
	line=$(grep -n "/\* site $site \*/" "$SRC" | cut -d: -f1)
	calls=$((2 * N)) # 2 ranks
	[ $site = S ] && calls=$((4 * N)) # 2 ranks x 2 threads
	grep -Eq "MPI_Allreduce +threads.c:$line +$calls " "$tmp/report" ||
		{ echo "FAIL: site $site (threads.c:$line) with $calls calls"; fail=1; }
done
exit $fail
