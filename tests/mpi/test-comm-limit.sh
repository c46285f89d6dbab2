#!/usr/bin/env bash
# The tool's communicators never take what the application can create: comm-limit.c holds 1,500
# duplicates of MPI_COMM_WORLD at once (MPICH 4.0.2 gives a program 2,046), with an allreduce
# on each, in every wait mode (NOISETOOL_WAIT). Each run must make all 1,500, as without the
# library: with a twin per communicator (the wait modes' copies) MPICH ran out at 1,022 and the
# job aborted.
#
#   test-comm-limit.sh LIB PROGRAM
set -u
usage="usage: test-comm-limit.sh LIB PROGRAM"
LIB=${1:?$usage}
PROG=${2:?$usage}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
N=1500
fail=0

# launch RUN ARGS...: a 2-rank job into $tmp/RUN.out, .err and .rc (a hang is a failure).
launch() { nt_launch 240 "$1" -n 2 $(nt_bind 2) "${@:2}"; }

launch plain "$PROG" $N
if [ "$(cat "$tmp/plain.rc")" -ne 0 ]; then
	nt_skip "$NT_MPI holds fewer than $N communicators without the library: $(cat "$tmp/plain.out")"
fi
for wait in mpi busy adaptive sleep; do
	mkdir "$tmp/$wait"
	launch "$wait" -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/$wait" \
		-genv NOISETOOL_WAIT "$wait" "$PROG" $N
	rc=$(cat "$tmp/$wait.rc")
	if [ "$rc" -ne 0 ] || ! cmp -s "$tmp/plain.out" "$tmp/$wait.out"; then
		echo "FAIL: NOISETOOL_WAIT=$wait: exit $rc, '$(cat "$tmp/$wait.out")'; without the library: exit 0, '$(cat "$tmp/plain.out")'"
		tail -n 5 "$tmp/$wait.err"
		fail=1
	else
		echo "ok: NOISETOOL_WAIT=$wait: $(cat "$tmp/$wait.out") communicators, as without the library"
	fi
done
exit $fail
