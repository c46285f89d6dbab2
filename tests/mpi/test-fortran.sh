#!/usr/bin/env bash
# Fortran, through MPICH's C entry points or the library's own Fortran ones (Open MPI): an
# MPI_IN_PLACE allreduce, and nonblocking collectives on a split communicator completed by
# wait, waitall, testany and waitsome, give identical results with and without the library,
# every call is recorded, and the call sites are the Fortran lines.
set -u
LIB=${1:?usage: test-fortran.sh LIB NOISETOOL SOURCE NONBLOCKING_SOURCE}
NT=${2:?}
SRC=${3:?}
NB_SRC=${4:?}
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

# Nonblocking: every start an instance timed to its completion, at its own line.
"$NT_MPIF90" -g "$NB_SRC" -o "$tmp/nb" 2>"$tmp/cc.err" ||
	{ echo "FAIL: $NT_MPIF90 cannot build $NB_SRC:"; cat "$tmp/cc.err"; exit 1; }
mkdir "$tmp/nb.logs"
run "$tmp/nb" >"$tmp/nb.plain" 2>&1 || { echo "FAIL: plain run of nonblocking.f90"; cat "$tmp/nb.plain"; exit 1; }
run -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/nb.logs" -genv NOISETOOL_SUMMARY 0 \
	"$tmp/nb" >"$tmp/nb.pre" 2>"$tmp/nb.err" || { echo "FAIL: preloaded run of nonblocking.f90"; cat "$tmp/nb.err"; exit 1; }
grep result "$tmp/nb.plain"
cmp -s <(grep result "$tmp/nb.plain") <(grep result "$tmp/nb.pre") ||
	{ echo "FAIL: nonblocking.f90: results differ"; fail=1; }
"$NT" report "$tmp"/nb.logs/*.ntlog --json "$tmp/nb.json" >"$tmp/nb.report" ||
	{ echo "FAIL: report of nonblocking.f90"; exit 1; }
# gfortran's line table can lack a line (with Open MPI's `use mpi` module it gives lines 21-22
# the loop's last line): such a site is named by the line the table gives its call, which
# addr2line says too; the test then finds it by function among the unmarked lines.
readelf --debug-dump=decodedline "$tmp/nb" | awk '$1 == "nonblocking.f90" { print $2 }' |
	sort -u >"$tmp/nb.lines"
python3 - "$tmp/nb.json" "$NB_SRC" "$tmp/nb.lines" <<'PY' || fail=1
import json, re, sys
rep = json.load(open(sys.argv[1]))
src = open(sys.argv[2]).read().splitlines()
have = set(int(l) for l in open(sys.argv[3]) if l.strip().isdigit())
line = {m.group(1): i + 1 for i, l in enumerate(src) for m in [re.search(r"! site (\w)$", l)] if m}
want = {"W": "MPI_Iallreduce", "A": "MPI_Ibarrier", "B": "MPI_Iallreduce", "T": "MPI_Iallreduce",
        "S": "MPI_Ibcast", "Z": "MPI_Ibarrier"}
def calls_at(fn, ln):
    return sum(s["calls"] for s in rep["sites"]
               if s["function"] == fn and s["location"] == f"nonblocking.f90:{ln}")
bad = 0
for site, fn in want.items():
    ln = line[site]
    if ln in have:
        calls, where = calls_at(fn, ln), f"nonblocking.f90:{ln}"
    else:  # the compiler named it otherwise: the site of fn at a line no marked site has
        others = [s for s in rep["sites"] if s["function"] == fn and
                  s["location"].startswith("nonblocking.f90:") and
                  int(s["location"].split(":")[1]) not in line.values()]
        calls = sum(s["calls"] for s in others if s["calls"] == 100)
        where = (f"line {ln}, absent from gfortran's line table, named "
                 f"{[s['location'] for s in others]}")
    ok = calls == 2 * 50
    print(("ok: " if ok else "FAIL: ") + f"{fn} at {where}: {calls} calls (want 100, 50 per rank)")
    bad |= not ok
ok = not rep["partial"]
print(("ok: " if ok else "FAIL: ") + "the log is complete")
sys.exit(bad or not ok)
PY
exit $fail
