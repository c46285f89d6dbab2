#!/usr/bin/env bash
# A plain MPI program under mpiexec with the wrapper library preloaded: same results as without
# it, rank 0's summary counts its calls right, the job log is written and its report names the
# program's own file:line.
set -u
LIB=${1:?usage: test-preload.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
# On one CPU MPICH's busy waits advance about one collective per scheduler slice (5.4 ms per
# 8-byte allreduce measured here), so N is smaller there.
N=20000
[ "$(nt_ncpus)" -ge 2 ] || N=1000
nt_tmpdir
fail=0
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")")

run "$PROG" $N >"$tmp/plain.out" 2>"$tmp/plain.err" || { echo "FAIL: plain run"; cat "$tmp/plain.err"; exit 1; }
mkdir "$tmp/logs" "$tmp/nologs"
run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/logs" "$PROG" $N >"$tmp/pre.out" 2>"$tmp/pre.err" ||
	{ echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
cat "$tmp/pre.err"
grep '^result' "$tmp/plain.out" >"$tmp/a"
grep '^result' "$tmp/pre.out" >"$tmp/b"
[ -s "$tmp/a" ] || { echo "FAIL: the plain run printed no result"; fail=1; }
cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: results differ"; fail=1; }
grep -q "noisetool: 2 ranks" "$tmp/pre.err" || { echo "FAIL: no summary"; fail=1; }
calls=$(awk '/noisetool: +MPI_Allreduce / { print $(NF-3) }' "$tmp/pre.err")
[ "$calls" = "$((2 * N))" ] || { echo "FAIL: MPI_Allreduce calls '$calls', want $((2 * N))"; fail=1; }
grep -q "MPI_Barrier .*$(basename "$PROG")+0x" "$tmp/pre.err" ||
	{ echo "FAIL: barrier site not named module+offset"; fail=1; }

# The job log: one .ntlog, readable, its report naming allreduce-loop.c:LINE for the allreduce.
logs=("$tmp"/logs/*.ntlog)
[ ${#logs[@]} -eq 1 ] && [ -f "${logs[0]}" ] || { echo "FAIL: want one .ntlog, got: ${logs[*]}"; fail=1; }
ls "$tmp/logs" | grep -q '\.tmp' && { echo "FAIL: temporary file left"; fail=1; }
line=$(grep -n 'MPI_Allreduce(&x, &sum' "$(dirname "$0")/allreduce-loop.c" | cut -d: -f1)
if "$NT" report "${logs[0]}" --json "$tmp/report.json" >"$tmp/report.txt" 2>&1; then
	cat "$tmp/report.txt"
	grep -q "MPI_Allreduce .*allreduce-loop.c:$line " "$tmp/report.txt" ||
		{ echo "FAIL: report does not name allreduce-loop.c:$line"; fail=1; }
	grep -q "\"calls\": $((2 * N))," "$tmp/report.json" || { echo "FAIL: JSON calls"; fail=1; }
	grep -q '"partial": false' "$tmp/report.json" || { echo "FAIL: JSON partial"; fail=1; }
	# The job as its ranks recorded it (log version 4): the program and its argument exactly,
	# the MPI the test was built for, this noisetool, one command line on one host.
	case "$NT_MPI" in mpich) want_mpi=MPICH ;; *) want_mpi="Open MPI" ;; esac
	python3 - "$tmp/report.json" "$PROG $N" "$want_mpi" "$("$NT" --version | head -n 1)" <<'PY' ||
import json, sys
job = json.load(open(sys.argv[1]))["job"]
want = {"command": sys.argv[2], "commands": 1, "hosts": 1,
        "tool_version": sys.argv[4].split()[-1]}
bad = {k: (job.get(k), v) for k, v in want.items() if job.get(k) != v}
if not job["mpi"].startswith(sys.argv[3]):
    bad["mpi"] = (job["mpi"], sys.argv[3] + "...")
if bad:
    sys.exit(f"FAIL: the report's job: {bad} (got, want)")
print(f"job: {job['command']!r} on {job['mpi']!r}")
PY
		fail=1
	grep -qxF "command: $PROG $N" "$tmp/report.txt" ||
		{ echo "FAIL: the text report does not name the command line"; fail=1; }
	grep -q "^MPI: $want_mpi" "$tmp/report.txt" || { echo "FAIL: the text report does not name the MPI"; fail=1; }
else
	echo "FAIL: noisetool report"; cat "$tmp/report.txt"; fail=1
fi
# A second job in the same directory never overwrites the first.
run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/logs" "$PROG" 10 >/dev/null 2>&1
[ "$(ls "$tmp"/logs/*.ntlog | wc -l)" -eq 2 ] || { echo "FAIL: second log"; fail=1; }

# A job started by a relative path, reported from another directory: the log holds absolute
# module paths, so the report names the same file:line wherever it runs.
mkdir "$tmp/rel"
(cd "$(dirname "$PROG")" && run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/rel" "./$(basename "$PROG")" 100) \
	>/dev/null 2>&1 || { echo "FAIL: run by a relative path"; fail=1; }
rel=$(ls "$tmp"/rel/*.ntlog)
(cd / && "$NT" report "$rel" >"$tmp/rel.txt" 2>&1) &&
	grep -q "MPI_Allreduce .*allreduce-loop.c:$line " "$tmp/rel.txt" ||
	{ echo "FAIL: a report from / of a job started as ./$(basename "$PROG") does not name allreduce-loop.c:$line"; cat "$tmp/rel.txt"; fail=1; }

# A module rebuilt after the job ran, then gone: the report says so, naming it.
mkdir "$tmp/copy"
cp "$PROG" "$tmp/copy/prog"
run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/copy" "$tmp/copy/prog" 100 >/dev/null 2>&1 ||
	{ echo "FAIL: run of a copy"; fail=1; }
# File times come from the kernel's coarse clock (one tick: 4 ms at HZ=250), the log's from
# clock_gettime: a touch within a tick of the job's end may carry an earlier time.
sleep 0.1
touch "$tmp/copy/prog"
"$NT" report "$tmp"/copy/*.ntlog >/dev/null 2>"$tmp/changed.err"
grep -q "module $tmp/copy/prog changed after the job ran" "$tmp/changed.err" ||
	{ echo "FAIL: a module modified after the job is not said"; cat "$tmp/changed.err"; fail=1; }
rm "$tmp/copy/prog"
"$NT" report "$tmp"/copy/*.ntlog >/dev/null 2>"$tmp/gone.err"
grep -q "module $tmp/copy/prog: No such file" "$tmp/gone.err" ||
	{ echo "FAIL: a module gone is not said"; cat "$tmp/gone.err"; fail=1; }

# The per-rank fallback (used when a rank cannot open the shared file): a header file and one part per
# rank, which the reader puts together.
mkdir "$tmp/parts"
run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/parts" -genv NOISETOOL_LOG per-rank "$PROG" 300 \
	>/dev/null 2>&1 || { echo "FAIL: per-rank run"; fail=1; }
[ "$(ls "$tmp"/parts/*.part* | wc -l)" -eq 2 ] || { echo "FAIL: want two part files"; ls "$tmp/parts"; fail=1; }
"$NT" report "$(ls "$tmp"/parts/*.ntlog)" --json "$tmp/parts.json" >/dev/null &&
	grep -q '"calls": 600,' "$tmp/parts.json" || { echo "FAIL: per-rank log unreadable"; fail=1; }

# NOISETOOL_DISABLE=1: no summary, no files, same result.
run "${pre[@]}" -genv NOISETOOL_DISABLE 1 -genv NOISETOOL_OUT "$tmp/nologs" "$PROG" $N \
	>"$tmp/off.out" 2>"$tmp/off.err" || { echo "FAIL: disabled run"; fail=1; }
[ -z "$(ls -A "$tmp/nologs")" ] || { echo "FAIL: disabled run wrote files"; fail=1; }
grep -q noisetool "$tmp/off.err" && { echo "FAIL: disabled run printed a summary"; fail=1; }
grep '^result' "$tmp/off.out" | cmp -s - "$tmp/a" || { echo "FAIL: disabled results differ"; fail=1; }

# A bad setting: one message from rank 0 naming the variable, the job still runs.
run "${pre[@]}" -genv NOISETOOL_LEVEL bogus -genv NOISETOOL_OUT "$tmp/logs" "$PROG" 100 >"$tmp/bad.out" 2>"$tmp/bad.err" ||
	{ echo "FAIL: run with a bad NOISETOOL_LEVEL"; fail=1; }
[ "$(grep -c 'NOISETOOL_LEVEL=' "$tmp/bad.err")" -eq 1 ] ||
	{ echo "FAIL: want exactly one NOISETOOL_LEVEL message"; cat "$tmp/bad.err"; fail=1; }
grep -q "timing, os, full" "$tmp/bad.err" || { echo "FAIL: accepted values not named"; fail=1; }
# noisetool run: preloads through mpiexec, prints the report naming file:line, keeps the
# job's exit status; a command that is not an MPI program gives a clear message.
timeout 120 "$NT" run --out "$tmp/run" -- mpiexec -n 2 $(nt_bind 2) "$PROG" 1000 >"$tmp/run.out" 2>"$tmp/run.err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: noisetool run exit $rc"; cat "$tmp/run.err"; fail=1; }
grep -q "MPI_Allreduce .*allreduce-loop.c:$line " "$tmp/run.out" ||
	{ echo "FAIL: noisetool run report"; cat "$tmp/run.out"; fail=1; }
grep -q "noisetool:   top call sites" "$tmp/run.err" && { echo "FAIL: duplicate in-job summary"; fail=1; }
# The MPI's own launcher, named as a user would (not tests/launch/mpiexec): noisetool run
# finds the library from it and says so; Open MPI's gets -x for the preload.
case "$NT_MPI" in
mpich) title=MPICH ;;
ompi) title="Open MPI" ;;
esac
timeout 120 "$NT" run --out "$tmp/real" -- "$NT_MPIEXEC" -n 2 "$PROG" 1000 >"$tmp/real.out" 2>"$tmp/real.err" ||
	{ echo "FAIL: noisetool run -- $NT_MPIEXEC"; cat "$tmp/real.err"; fail=1; }
grep -q "noisetool run: $title (the launcher $NT_MPIEXEC is $title's): preloading .*libnoisetool-$NT_MPI.so" "$tmp/real.err" ||
	{ echo "FAIL: noisetool run did not say it preloads $title's library"; cat "$tmp/real.err"; fail=1; }
grep -q "MPI_Allreduce .*allreduce-loop.c:$line " "$tmp/real.out" ||
	{ echo "FAIL: noisetool run -- $NT_MPIEXEC: report"; cat "$tmp/real.out"; fail=1; }
other=$([ "$NT_MPI" = mpich ] && echo openmpi || echo mpich)
"$NT" run --mpi "$other" --out "$tmp/run3" -- true 2>"$tmp/other.err" >/dev/null
grep -q "(--mpi $other): preloading" "$tmp/other.err" ||
	{ echo "FAIL: --mpi $other is not what noisetool run preloads"; cat "$tmp/other.err"; fail=1; }
"$NT" run --mpi "$NT_MPI" --out "$tmp/run2" -- true >"$tmp/true.out" 2>"$tmp/true.err"
[ $? -eq 1 ] && grep -q "left no log" "$tmp/true.err" || { echo "FAIL: run of a non-MPI command"; fail=1; }
# NOISETOOL_LIB names the library's file: a directory or a missing file is refused before the
# job starts (the loader would skip it and the job would run untraced).
for bad in "$tmp" "$tmp/no-such-lib.so"; do
	NOISETOOL_LIB=$bad "$NT" run --out "$tmp/run4" -- touch "$tmp/ran" 2>"$tmp/lib.err" >/dev/null
	rc=$?
	[ $rc -eq 1 ] && grep -q "NOISETOOL_LIB=$bad: " "$tmp/lib.err" && [ ! -e "$tmp/ran" ] ||
		{ echo "FAIL: NOISETOOL_LIB=$bad: exit $rc"; cat "$tmp/lib.err"; fail=1; }
done
"$NT" run --level loud -- true 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: bad --level must exit 2"; fail=1; }
exit $fail
