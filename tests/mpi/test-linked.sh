#!/usr/bin/env bash
# A program linked with -lnoisetool-MPI (no preload) is recorded just the same.
set -u
PROG=${1:?usage: test-linked.sh PROGRAM NOISETOOL}
NT=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
ldd "$PROG" | grep -q "libnoisetool-$NT_MPI\.so" || { echo "FAIL: not linked with libnoisetool-$NT_MPI"; exit 1; }
nt_tmpdir
timeout 120 mpiexec -n 2 $(nt_bind 2) -genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_SUMMARY 0 \
	"$PROG" 500 >"$tmp/out" 2>"$tmp/err" || { echo "FAIL: run"; cat "$tmp/err"; exit 1; }
log=$(ls "$tmp"/*.ntlog 2>/dev/null | head -n 1)
[ -n "$log" ] || { echo "FAIL: no log"; cat "$tmp/err"; exit 1; }
"$NT" report "$log" --json "$tmp/r.json" || { echo "FAIL: report"; exit 1; }
grep -q '"calls": 1000,' "$tmp/r.json" || { echo "FAIL: want 1000 MPI_Allreduce calls"; exit 1; }
