#!/usr/bin/env bash
# Open MPI: the tool leaves no nonblocking-collective progress function in MPI's progress loop
# after MPI_Init (tests/mpi/nbc-progress.c says why and how it is read). Without the tool it is
# not there (else this Open MPI puts it there itself: skipped); under the preload at the
# default level, the level timing, with adaptive waits and with the tool off
# (NOISETOOL_DISABLE=1, where the ranks still agree at MPI_Init), it must not be there either,
# and the application's own nonblocking collectives complete, right, on 2 ranks.
set -u
LIB=${1:?usage: test-nbc-progress.sh LIB PROGRAM}
PROG=${2:?}
. "$(dirname "$0")/../lib.sh"
[ "$NT_MPI" = ompi ] || nt_skip "Open MPI only (MPICH has no progress function of this kind)"
nt_need_mpiexec
nt_tmpdir

# run NAME [VAR=VALUE ...]: the program on 2 ranks; its output in $tmp/NAME.out.
run() {
	local name=$1 rc
	shift
	env "$@" timeout 120 mpiexec -n 2 $(nt_bind 2) "$PROG" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	[ $rc = 77 ] && nt_skip "$(head -n 1 "$tmp/$name.out")"
	[ $rc = 0 ] || { echo "FAIL: $name: exit $rc"; cat "$tmp/$name.out" "$tmp/$name.err"; exit 1; }
	[ "$(grep -c ': collectives ok$' "$tmp/$name.out")" = 2 ] ||
		{ echo "FAIL: $name: the application's nonblocking collectives:"; cat "$tmp/$name.out"; exit 1; }
}

run none
grep -q 'libnbc progress registered' "$tmp/none.out" &&
	nt_skip "this Open MPI has libnbc's progress function registered after MPI_Init without the tool"
fail=0
for mode in default timing adaptive disabled; do
	env=(LD_PRELOAD="$(nt_preload "$LIB")" NOISETOOL_OUT="$tmp" NOISETOOL_SUMMARY=0)
	case $mode in
	timing) env+=(NOISETOOL_LEVEL=timing) ;;
	adaptive) env+=(NOISETOOL_WAIT=adaptive) ;;
	disabled) env+=(NOISETOOL_DISABLE=1) ;;
	esac
	run "$mode" "${env[@]}"
	n=$(grep -c 'libnbc progress not registered' "$tmp/$mode.out")
	echo "$mode: libnbc's progress function left out on $n of 2 ranks"
	[ "$n" = 2 ] || { echo "FAIL: $mode: the tool left it registered:"; cat "$tmp/$mode.out"; fail=1; }
done
exit $fail
