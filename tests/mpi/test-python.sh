#!/usr/bin/env bash
# Python call sites (doc/python.md): an mpi4py program's MPI calls are named by the user's
# file.py:line, not by mpi4py's C code. python-sites.py makes N rounds of comm.Allreduce
# (site A: 2N calls over 2 ranks) and comm.allreduce (site B, pickled: mpi4py 3.1 makes it of
# a reduction to rank 0 by MPI_Send/MPI_Recv and two MPI_Bcast, on a duplicate of the
# communicator made once per rank), MPI.COMM_WORLD.allreduce (site D) and a variable f =
# comm.allreduce called (site E); every one of those calls must be at its line, in the
# text report, the JSON report and the report of a killed job's live files, and none at an
# address inside mpi4py; each site is named by its Python call as the bytecode says
# (comm.Allreduce, comm.allreduce, MPI.COMM_WORLD.allreduce; none for f(...)), and the MPI
# calls of each Python call are summed. Results are unchanged. mpi4py is Debian's
# python3-mpi4py (on Open MPI), run by /usr/bin/python3.
#
#   test-python.sh LIB NOISETOOL SCRIPT
set -u
LIB=${1:?usage: test-python.sh LIB NOISETOOL SCRIPT}
NT=${2:?}
SRC=${3:?}
N=100
PY=/usr/bin/python3
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0
# setup.sh installs python3-mpi4py: without it the set-up is broken, not the test skipped.
"$PY" -c 'import mpi4py' 2>/dev/null ||
	{ echo "FAIL: $PY cannot import mpi4py: apt-get install -y python3-mpi4py"; exit 1; }
mpi4py_version=$("$PY" -c 'import mpi4py; print(mpi4py.__version__)')
line_of() { grep -n "# site $1\$" "$SRC" | cut -d: -f1; }
A=$(line_of A)
B=$(line_of B)
C=$(line_of C)
D=$(line_of D)
E=$(line_of E)
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_SUMMARY 0)

# Each rank writes its results to a file of its own: the launcher may merge two ranks' lines.
mkdir "$tmp/out" "$tmp/plain" "$tmp/pre"
run -genv RESULTS "$tmp/plain" "$PY" "$SRC" $N >"$tmp/plain.out" 2>&1 ||
	{ echo "FAIL: plain run"; cat "$tmp/plain.out"; exit 1; }
run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/out" -genv RESULTS "$tmp/pre" "$PY" "$SRC" $N \
	>"$tmp/pre.out" 2>"$tmp/pre.err" || { echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
cat "$tmp"/plain/rank-*
for r in 0 1; do
	[ -s "$tmp/plain/rank-$r" ] && cmp -s "$tmp/plain/rank-$r" "$tmp/pre/rank-$r" ||
		{ echo "FAIL: rank $r: results differ"; diff "$tmp/plain/rank-$r" "$tmp/pre/rank-$r"; fail=1; }
done
[ -s "$tmp/pre.err" ] && { echo "FAIL: the preloaded run wrote on stderr:"; cat "$tmp/pre.err"; fail=1; }
log=$(ls "$tmp"/out/*.ntlog | head -n 1)
"$NT" report "$log" --top 0 --json "$tmp/report.json" >"$tmp/report" 2>"$tmp/report.err" ||
	{ echo "FAIL: report"; cat "$tmp/report.err"; exit 1; }
cat "$tmp/report"
[ -s "$tmp/report.err" ] && { echo "FAIL: the report wrote on stderr:"; cat "$tmp/report.err"; fail=1; }
sed -n '/^Call sites by MPI time/,/^$/p' "$tmp/report" >"$tmp/sites"

# calls FILE FUNCTION LINE CALL: the calls of FUNCTION at python-sites.py:LINE in a report's
# table, its rows naming the Python call CALL ("-": none; a row reads "python-sites.py:19
# comm.allreduce", the call name a column of its own before the calls).
calls() {
	awk -v f="$2" -v l="python-sites.py:$3" -v c="$4" '
	$1 == f && $2 == l { if ($3 ~ /^[0-9]+$/) { call = "-"; k = $3 } else { call = $3; k = $4 }
			     if (call == c) n += k; else bad = 1 }
	END { print bad ? "wrong-call-name" : n + 0 }' "$1"
}
# expect WHAT FILE FUNCTION LINE CALLS [CALL]
expect() {
	local got
	got=$(calls "$2" "$3" "$4" "${6:--}")
	[ "$got" = "$5" ] || { echo "FAIL: $1: $3 at python-sites.py:$4 ${6:-(no call name)}: $got calls, want $5"; fail=1; }
}
# grouped FILE CALL LINE MPI_CALLS: the line of CALL in "MPI calls by Python call".
grouped() {
	local got
	got=$(sed -n '/^MPI calls by Python call/,/^$/p' "$1" |
		awk -v c="$2" -v l="python-sites.py:$3" '$1 == c && $2 == l { n += $3 } END { print n + 0 }')
	[ "$got" = "$4" ] || { echo "FAIL: MPI calls by Python call: $2 at python-sites.py:$3: $got MPI calls, want $4"; fail=1; }
}
# sites_at WHAT FILE: every call site of the table is at a line of python-sites.py.
sites_at() {
	local other
	other=$(awk 'NR > 2 && NF && $2 !~ /^python-sites\.py:[0-9]+$/' "$2")
	[ -z "$other" ] || { echo "FAIL: $1: call sites not named by the Python line:"; echo "$other"; fail=1; }
}
expect "log" "$tmp/sites" MPI_Allreduce "$A" $((2 * N)) comm.Allreduce
grouped "$tmp/report" comm.Allreduce "$A" $((2 * N))
sites_at "log" "$tmp/sites"
case "$mpi4py_version" in
3.1.*)
	expect "log" "$tmp/sites" MPI_Bcast "$B" $((4 * N)) comm.allreduce
	expect "log" "$tmp/sites" MPI_Send "$B" $((2 * N)) comm.allreduce
	expect "log" "$tmp/sites" MPI_Recv "$B" $((2 * N)) comm.allreduce
	expect "log" "$tmp/sites" MPI_Comm_dup "$B" 2 comm.allreduce
	grouped "$tmp/report" comm.allreduce "$B" $((8 * N + 2))
	for fn in MPI_Bcast MPI_Send MPI_Recv; do
		k=$([ $fn = MPI_Bcast ] && echo 4 || echo 2)
		expect "log" "$tmp/sites" $fn "$D" $((k * N)) MPI.COMM_WORLD.allreduce
		expect "log" "$tmp/sites" $fn "$E" $((k * N))
	done
	grouped "$tmp/report" MPI.COMM_WORLD.allreduce "$D" $((8 * N))
	;;
*) # another mpi4py makes comm.allreduce of other calls: they must be at its line all the same
	[ "$(awk -v l="python-sites.py:$B" '$2 == l { n += $3 } END { print n + 0 }' "$tmp/sites")" -ge $((2 * N)) ] ||
		{ echo "FAIL: log: fewer than $((2 * N)) calls at python-sites.py:$B (mpi4py $mpi4py_version)"; fail=1; }
	;;
esac

# The JSON report: the file, line and function of each Python site.
"$PY" - "$tmp/report.json" "$SRC" "$A" "$B" $((2 * N)) "$D" "$E" <<'PYEOF' || fail=1
import json, os, sys
doc, src, a, b, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
d, e = int(sys.argv[6]), int(sys.argv[7])
report = json.load(open(doc))
sites = report["sites"]
ok = True
for s in sites:
    if s.get("language") != "python" or s["file"] != os.path.abspath(src) or s["caller"] != "rounds" \
            or s["line"] != s["offset"] or s["location"] != f"python-sites.py:{s['line']}":
        print(f"FAIL: JSON site {s}")
        ok = False
got = sum(s["calls"] for s in sites if s["function"] == "MPI_Allreduce" and s["line"] == a)
if got != n:
    print(f"FAIL: JSON: MPI_Allreduce at line {a}: {got} calls, want {n}")
    ok = False
if not any(s["line"] == b for s in sites):
    print(f"FAIL: JSON: no site at line {b}")
    ok = False
want = {a: "comm.Allreduce", b: "comm.allreduce", d: "MPI.COMM_WORLD.allreduce", e: ""}
for s in sites:
    if s.get("python_call") != want.get(s["line"]):
        print(f"FAIL: JSON: site at line {s['line']}: python_call {s.get('python_call')!r}, want {want.get(s['line'])!r}")
        ok = False
groups = {(g["python_call"], g["line"]): g for g in report["python_calls"]}
if set(groups) != {(c, l) for l, c in want.items() if c}:
    print(f"FAIL: JSON: python_calls {sorted(groups)}")
    ok = False
for (c, l), g in groups.items():
    at = [s for s in sites if s["line"] == l]
    if g["mpi_calls"] != sum(s["calls"] for s in at) or g["time_ns_total"] != sum(s["time_ns_total"] for s in at) \
            or sorted(m["function"] for m in g["mpi_functions"]) != sorted(s["function"] for s in at):
        print(f"FAIL: JSON: python_calls {c} at line {l}: {g}")
        ok = False
sys.exit(0 if ok else 1)
PYEOF

# As a user runs it: noisetool run with Open MPI's own launcher and python3, which names no MPI:
# the launcher tells noisetool run which library to preload, and the report names the lines.
mkdir "$tmp/run"
timeout 120 "$NT" run --out "$tmp/run" -- "$NT_MPIEXEC" -n 2 "$PY" "$SRC" $N >"$tmp/run.out" 2>"$tmp/run.err" ||
	{ echo "FAIL: noisetool run -- $NT_MPIEXEC -n 2 $PY"; cat "$tmp/run.err"; fail=1; }
grep -q "noisetool run: Open MPI (the launcher $NT_MPIEXEC is Open MPI's): preloading .*libnoisetool-ompi.so" "$tmp/run.err" ||
	{ echo "FAIL: noisetool run did not say it preloads Open MPI's library"; cat "$tmp/run.err"; fail=1; }
grep -Eq "^MPI_Allreduce +python-sites.py:$A comm.Allreduce +$((2 * N)) " "$tmp/run.out" ||
	{ echo "FAIL: noisetool run's report does not name python-sites.py:$A"; cat "$tmp/run.out"; fail=1; }

# A killed job: its live files name the same lines.
mkdir "$tmp/killed"
run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/killed" "$PY" "$SRC" $N kill >"$tmp/killed.out" 2>&1
live=$(ls -d "$tmp"/killed/*.live 2>/dev/null | head -n 1)
if [ -z "$live" ]; then
	echo "FAIL: killed job: no live files: $(ls "$tmp/killed")"
	cat "$tmp/killed.out"
	fail=1
else
	"$NT" report "$live" --top 0 >"$tmp/live-report" 2>&1 || { echo "FAIL: report of $live"; cat "$tmp/live-report"; fail=1; }
	sed -n '/^Call sites by MPI time/,/^$/p' "$tmp/live-report" >"$tmp/live-sites"
	cat "$tmp/live-sites"
	expect "live files" "$tmp/live-sites" MPI_Allreduce "$A" $((2 * N)) comm.Allreduce
	expect "live files" "$tmp/live-sites" MPI_Barrier "$C" 2 comm.Barrier
	sites_at "live files" "$tmp/live-sites"
fi
[ $fail = 0 ] && echo "PASS: Python call sites at python-sites.py:$A, :$B, :$D and :$E, named by their Python calls (mpi4py $mpi4py_version)"
exit $fail
