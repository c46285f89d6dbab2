#!/usr/bin/env bash
# Where a job's log goes, decided before the work (issue 14): a NOISETOOL_OUT that cannot take
# a log is reported once, by rank 0, inside MPI_Init, and the job runs as without the tool;
# NOISETOOL_JOB names the log; and jobs started together in one directory each get their own
# log, with nothing left behind.
#
#   test-outdir.sh LIB PROGRAM        PROGRAM: allreduce-loop
set -u
LIB=${1:?usage: test-outdir.sh LIB PROGRAM}
PROG=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
JOBS=20 # pairs of jobs started together
fail=0
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) -genv LD_PRELOAD "$(nt_preload "$LIB")" \
	-genv NOISETOOL_SUMMARY 0 "$@"; }

timeout 120 mpiexec -n 2 $(nt_bind 2) "$PROG" 100 >"$tmp/plain.out" 2>/dev/null ||
	{ echo "FAIL: plain run"; exit 1; }

# A bad NOISETOOL_OUT: one line from rank 0, before the program's first collective (the line
# comes from MPI_Init: the program's own stderr lines come after the loop), same results.
touch "$tmp/a-file"
for out in "$tmp/missing" "$tmp/a-file"; do
	run -genv NOISETOOL_OUT "$out" "$PROG" 100 >"$tmp/bad.out" 2>"$tmp/bad.err" ||
		{ echo "FAIL: NOISETOOL_OUT=$out: the job failed"; cat "$tmp/bad.err"; fail=1; }
	cmp -s "$tmp/plain.out" "$tmp/bad.out" || { echo "FAIL: NOISETOOL_OUT=$out: results differ"; fail=1; }
	n=$(grep -c "noisetool: NOISETOOL_OUT='$out'" "$tmp/bad.err")
	first=$(grep -n . "$tmp/bad.err" | head -n 1)
	echo "NOISETOOL_OUT=$out: $(grep "noisetool:" "$tmp/bad.err")"
	[ "$n" -eq 1 ] || { echo "FAIL: NOISETOOL_OUT=$out: $n messages, want 1"; fail=1; }
	case "$first" in
	*"NOISETOOL_OUT="*) ;;
	*) echo "FAIL: NOISETOOL_OUT=$out: the message is not the job's first line: $first"; fail=1 ;;
	esac
done
[ -e "$tmp/missing" ] && { echo "FAIL: the missing NOISETOOL_OUT was created"; fail=1; }

# NOISETOOL_JOB names the log; a bad one is said and the default used.
mkdir "$tmp/named"
run -genv NOISETOOL_OUT "$tmp/named" -genv NOISETOOL_JOB run-42 "$PROG" 100 >/dev/null 2>&1 ||
	{ echo "FAIL: NOISETOOL_JOB run"; fail=1; }
ls "$tmp"/named/*-run-42.ntlog >/dev/null 2>&1 || { echo "FAIL: no log named by NOISETOOL_JOB: $(ls "$tmp/named")"; fail=1; }
run -genv NOISETOOL_OUT "$tmp/named" -genv NOISETOOL_JOB ../x "$PROG" 100 >/dev/null 2>"$tmp/job.err"
grep -q "NOISETOOL_JOB='../x'" "$tmp/job.err" || { echo "FAIL: a bad NOISETOOL_JOB is not said"; fail=1; }
[ "$(ls "$tmp"/named/*.ntlog | wc -l)" -eq 2 ] || { echo "FAIL: $(ls "$tmp/named")"; fail=1; }

# Jobs of one program started together, one directory: every job its own log.
mkdir "$tmp/shared"
for i in $(seq "$JOBS"); do
	run -genv NOISETOOL_OUT "$tmp/shared" "$PROG" 100 >/dev/null 2>"$tmp/j$i.a" &
	run -genv NOISETOOL_OUT "$tmp/shared" "$PROG" 100 >/dev/null 2>"$tmp/j$i.b" &
	wait
done
logs=$(ls "$tmp"/shared/*.ntlog | wc -l)
echo "$((2 * JOBS)) jobs started in pairs in one directory: $logs logs"
[ "$logs" -eq $((2 * JOBS)) ] || { echo "FAIL: want $((2 * JOBS)) logs"; cat "$tmp"/j*.[ab] | sort | uniq -c; fail=1; }
left=$(ls "$tmp/shared" | grep -v '\.ntlog$')
[ -z "$left" ] || { echo "FAIL: left behind: $left"; fail=1; }
exit $fail
