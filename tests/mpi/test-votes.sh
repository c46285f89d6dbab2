#!/usr/bin/env bash
# The adaptive-wait votes: votes.c (34 ranks on the allowed CPUs) in NOISETOOL_WAIT=sleep, where
# every member votes to sleep, and adaptive. Each run must end with correct results, and in
# sleep mode every rank must have finished votes on MPI_COMM_WORLD (slot 0, along a tree: more
# than 32 members), votes sent directly (pairs, a split of 11-12 ranks) and along a tree (a
# duplicate of MPI_COMM_WORLD), as its telemetry line says (NOISETOOL_SUMMARY=1).
#
#   test-votes.sh LIB PROGRAM
set -u
usage="usage: test-votes.sh LIB PROGRAM"
LIB=${1:?$usage}
PROG=${2:?$usage}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
NP=34
CALLS=300
fail=0

for wait in sleep adaptive; do
	mkdir "$tmp/$wait"
	# Unbound: Open MPI 4.1.4 with 17 ranks pinned to each of 2 CPUs took over 4 minutes in
	# its own MPI_Finalize after the tool's part was done, with the library before these votes
	# too (unbound: seconds).
	nt_launch 300 "$wait" -n $NP -genv LD_PRELOAD "$(nt_preload "$LIB")" \
		-genv NOISETOOL_OUT "$tmp/$wait" -genv NOISETOOL_WAIT "$wait" \
		-genv NOISETOOL_SUMMARY 1 "$PROG" $CALLS
	rc=$(cat "$tmp/$wait.rc")
	if [ "$rc" -ne 0 ] || [ "$(cat "$tmp/$wait.out")" != "ok $CALLS" ]; then
		echo "FAIL: NOISETOOL_WAIT=$wait: exit $rc, '$(cat "$tmp/$wait.out")'"
		grep -v "^noisetool: rank" "$tmp/$wait.err" | tail -n 5
		fail=1
		continue
	fi
	echo "ok: NOISETOOL_WAIT=$wait: $NP ranks, correct results"
done
# noisetool: rank R waits sleep: ...; votes W on MPI_COMM_WORLD, D direct, T by tree; E events
for r in $(seq 0 $((NP - 1))); do
	line=$(grep "^noisetool: rank $r waits sleep:" "$tmp/sleep.err")
	world=$(sed -n 's/.*votes \([0-9]*\) on MPI_COMM_WORLD,.*/\1/p' <<<"$line")
	direct=$(sed -n 's/.*votes [0-9]* on MPI_COMM_WORLD, \([0-9]*\) direct, \([0-9]*\) by tree;.*/\1/p' <<<"$line")
	tree=$(sed -n 's/.*votes [0-9]* on MPI_COMM_WORLD, \([0-9]*\) direct, \([0-9]*\) by tree;.*/\2/p' <<<"$line")
	if [ -z "$direct" ] || [ "$world" -eq 0 ] || [ "$direct" -eq 0 ] || [ "$tree" -eq 0 ]; then
		echo "FAIL: rank $r finished no vote on MPI_COMM_WORLD, no direct or no tree vote: '${line:-no telemetry line}'"
		fail=1
	fi
done
[ $fail -eq 0 ] && grep "^noisetool: rank 0 waits sleep:" "$tmp/sleep.err" | sed 's/.*; votes/rank 0: votes/'
exit $fail
