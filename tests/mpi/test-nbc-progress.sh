#!/usr/bin/env bash
# Open MPI: the tool leaves no nonblocking-collective progress function in MPI's progress loop
# after MPI_Init, nor after 200 blocking allreduces on MPI_COMM_WORLD, where adaptive waits vote
# (tests/mpi/nbc-progress.c says why and how it is read). Without the tool it is not there
# (else this Open MPI puts it there itself: skipped); under the preload at the default level,
# the level timing, with adaptive waits and with the tool off (NOISETOOL_DISABLE=1, where the
# ranks still agree at MPI_Init), it must not be there either, and the application's own
# nonblocking collectives complete, right, on 2 ranks. With adaptive waits the ranks must have
# voted on MPI_COMM_WORLD (the tool's line on standard error says how often).
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
	adaptive) env+=(NOISETOOL_WAIT=adaptive NOISETOOL_SUMMARY=1) ;; # the summary: its votes
	disabled) env+=(NOISETOOL_DISABLE=1) ;;
	esac
	run "$mode" "${env[@]}"
	if [ "$mode" = adaptive ]; then
		# "noisetool: rank R waits adaptive: ...; votes W on MPI_COMM_WORLD, ..." (mpiwait.c)
		votes=$(sed -n 's/.* votes \([0-9]*\) on MPI_COMM_WORLD.*/\1/p' "$tmp/$mode.err" | sort -n | head -n 1)
		echo "$mode: the fewest votes on MPI_COMM_WORLD of a rank: ${votes:-none said}"
		[ "${votes:-0}" -gt 0 ] ||
			{ echo "FAIL: $mode: no rank said it voted on MPI_COMM_WORLD:"; cat "$tmp/$mode.err"; fail=1; }
	fi
	for when in "after MPI_Init" "after 200 allreduces"; do
		n=$(grep -c "libnbc progress not registered $when\$" "$tmp/$mode.out")
		echo "$mode: libnbc's progress function left out on $n of 2 ranks $when"
		[ "$n" = 2 ] ||
			{ echo "FAIL: $mode: the tool left it registered:"; cat "$tmp/$mode.out"; fail=1; }
	done
done
exit $fail
