#!/usr/bin/env bash
# Fortran through MPICH's C entry points: an MPI_IN_PLACE allreduce gives identical results with
# and without the library, every call is recorded, and the call sites are the Fortran lines
# (found past the Fortran binding on the stack).
set -u
LIB=${1:?usage: test-fortran.sh LIB NOISETOOL SOURCE}
NT=${2:?}
SRC=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
# setup.sh installs gfortran and both MPIs: without the MPI's mpif90, or when it cannot build a 20-line
# program, the set-up is broken, which is a failure, not a machine that lacks something.
command -v "$NT_MPIF90" >/dev/null ||
	{ echo "FAIL: no $NT_MPIF90 (apt-get install gfortran $NT_MPI_PACKAGES; ./setup.sh installs them)"; exit 1; }
nt_tmpdir
"$NT_MPIF90" -g "$SRC" -o "$tmp/inplace" 2>"$tmp/cc.err" ||
	{ echo "FAIL: $NT_MPIF90 cannot build $SRC:"; cat "$tmp/cc.err"; exit 1; }
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }
fail=0
run "$tmp/inplace" >"$tmp/plain" 2>&1 || { echo "FAIL: plain run"; cat "$tmp/plain"; exit 1; }
run -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_SUMMARY 0 \
	"$tmp/inplace" >"$tmp/pre" 2>"$tmp/pre.err" || { echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
grep result "$tmp/plain"
grep -q result "$tmp/plain" || { echo "FAIL: the plain run printed no result"; fail=1; }
cmp -s <(grep result "$tmp/plain") <(grep result "$tmp/pre") || { echo "FAIL: results differ"; fail=1; }
log=$(ls "$tmp"/*.ntlog | head -n 1)
"$NT" report "$log" --json "$tmp/r.json" >"$tmp/report" || { echo "FAIL: report"; exit 1; }
cat "$tmp/report"
sed -i -n '/^Call sites by MPI time/,/^$/p' "$tmp/report" # the call-site table only
line=$(grep -n 'call MPI_Allreduce(MPI_IN_PLACE' "$SRC" | cut -d: -f1)
grep -q "MPI_Allreduce .*inplace.f90:$line " "$tmp/report" ||
	{ echo "FAIL: the allreduce site is not inplace.f90:$line"; fail=1; }
grep -q '"calls": 200,' "$tmp/r.json" || { echo "FAIL: want 200 MPI_Allreduce calls"; fail=1; }
exit $fail
