#!/usr/bin/env bash
# The tool's communicators never take what the application can create: comm-limit.c duplicates
# MPI_COMM_WORLD (with an allreduce on each) until the MPI refuses or N are held, without the
# library, with it (NOISETOOL_WAIT=mpi) and in every wait mode. The library may hold one
# communicator of its own (its duplicate of MPI_COMM_WORLD); a wait mode may hold no more than
# MARGIN beyond that. MPICH 4.0.2 holds 2,046 without the library, 2,045 with it; a wait mode
# with a twin per communicator held 1,023, with at most 64 twins 1,982 -- both fail here.
#
#   test-comm-limit.sh LIB PROGRAM
set -u
usage="usage: test-comm-limit.sh LIB PROGRAM"
LIB=${1:?$usage}
PROG=${2:?$usage}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
N=4096
MARGIN=2
fail=0

# launch RUN ARGS...: a 2-rank job into $tmp/RUN.out, .err and .rc (a hang is a failure).
launch() { nt_launch 300 "$1" -n 2 $(nt_bind 2) "${@:2}"; }

# made RUN: how many communicators RUN held, or nothing when it did not say (it crashed or
# hung), then a failure; the program exits 0 exactly when it held N.
made() {
	local n rc
	n=$(sed -n 's/^made \([0-9][0-9]*\)$/\1/p' "$tmp/$1.out")
	rc=$(cat "$tmp/$1.rc")
	if [ -z "$n" ] || { [ "$n" -eq $N ] && [ "$rc" -ne 0 ]; } ||
		{ [ "$n" -lt $N ] && [ "$rc" -ne 1 ]; }; then
		echo "FAIL: $1: exit $rc, '$(cat "$tmp/$1.out")'" >&2
		tail -n 5 "$tmp/$1.err" >&2
		return 1
	fi
	echo "$n"
}

launch plain "$PROG" $N
plain=$(made plain) || exit 1
echo "without the library: $plain communicators (of $N asked)"
lib=
for wait in mpi busy adaptive sleep; do
	mkdir "$tmp/$wait"
	launch "$wait" -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/$wait" \
		-genv NOISETOOL_WAIT "$wait" "$PROG" $N
	if ! n=$(made "$wait"); then
		fail=1
		continue
	fi
	if [ "$wait" = mpi ]; then
		lib=$n
		if [ "$n" -lt $((plain - 1)) ]; then
			echo "FAIL: NOISETOOL_WAIT=mpi: $n communicators; without the library $plain (the tool may take 1)"
			fail=1
		else
			echo "ok: NOISETOOL_WAIT=mpi: $n communicators; without the library $plain"
		fi
	elif [ -n "$lib" ] && [ "$n" -lt $((lib - MARGIN)) ]; then
		echo "FAIL: NOISETOOL_WAIT=$wait: $n communicators; without a wait mode $lib (at most $MARGIN fewer)"
		fail=1
	else
		echo "ok: NOISETOOL_WAIT=$wait: $n communicators; without a wait mode ${lib:-?}"
	fi
done
exit $fail
