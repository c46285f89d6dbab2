#!/usr/bin/env bash
# A callback that calls MPI from inside a test call (callbacks.c: a generalized request's query
# function calls MPI_Testany while MPI_Test completes its request). An untimed test call runs
# with no reentry guard (wrappers/call.h: nt_fast_untimed), so once the program gave MPI a
# callback every test call must be timed, inside the guard (nt_callbacks_registered):
# 1. the calls made from inside MPI_Test are never counted (no MPI_Testany site: without the
#    switch, ~63 in 64 of them were, those inside untimed tests);
# 2. every call the program made itself is counted exactly, at the default sampling: its
#    probes before the first callback (sampled, their pending untimed calls counted when the
#    callback came) and after it (timed), and its tests (ground truth: the program's counts);
# 3. its output is the same as without the library.
#
#   test-callbacks.sh LIB PROGRAM NOISETOOL
set -u
usage="usage: test-callbacks.sh LIB PROGRAM NOISETOOL"
LIB=${1:?$usage}
PROG=${2:?$usage}
NT=${3:?$usage}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_need_python "read the report"
nt_tmpdir
POLLS=5000 REQUESTS=300
fail=0

nt_launch 120 plain -n 2 $(nt_bind 2) "$PROG" $POLLS $REQUESTS
mkdir "$tmp/out"
nt_launch 120 tool -n 2 $(nt_bind 2) -genv LD_PRELOAD "$(nt_preload "$LIB")" \
	-genv NOISETOOL_OUT "$tmp/out" -genv NOISETOOL_SUMMARY 0 "$PROG" $POLLS $REQUESTS
for run in plain tool; do
	[ "$(cat "$tmp/$run.rc")" = 0 ] ||
		{ echo "FAIL: $run: exit $(cat "$tmp/$run.rc")"; cat "$tmp/$run.out" "$tmp/$run.err"; exit 1; }
done
if cmp -s <(sort "$tmp/plain.out") <(sort "$tmp/tool.out") && grep -q nested "$tmp/tool.out"; then
	echo "ok: the same output as without the library"
else
	echo "FAIL: the output differs from the program's without the library"
	cat "$tmp/plain.out" "$tmp/tool.out"
	fail=1
fi
log=$(ls "$tmp/out"/*.ntlog 2>/dev/null | head -n 1)
[ -n "$log" ] || { echo "FAIL: no log"; ls -la "$tmp/out"; exit 1; }
"$NT" report "$log" --top 0 --json "$tmp/report.json" >"$tmp/report.txt" 2>&1 ||
	{ echo "FAIL: report"; cat "$tmp/report.txt"; exit 1; }
python3 - "$tmp/report.json" "$tmp/tool.out" <<'PY' || fail=1
import json, re, sys
doc = json.load(open(sys.argv[1]))
made = {"probes": 0, "tests": 0, "nested": 0}
for line in open(sys.argv[2]):
    m = re.match(r"rank \d+ probes (\d+) found 0 tests (\d+) nested (\d+)$", line.strip())
    if m:
        for k, v in zip(made, m.groups()):
            made[k] += int(v)
calls = {}
for s in doc["sites"]:
    calls[s["function"]] = calls.get(s["function"], 0) + s["calls"]
bad = 0
for fn, want, what in (("MPI_Iprobe", made["probes"], "the program's probes"),
                       ("MPI_Test", made["tests"], "the program's tests"),
                       ("MPI_Testany", 0, f"none of the {made['nested']} calls made inside MPI_Test")):
    got = calls.get(fn, 0)
    if got == want:
        print(f"ok: {fn}: {got} calls counted, {what}")
    else:
        print(f"FAIL: {fn}: {got} calls counted, want {want}: {what}")
        bad = 1
if made["nested"] != made["tests"] or made["tests"] == 0:
    print(f"FAIL: the program's query function ran {made['nested']} times for {made['tests']} tests")
    bad = 1
sys.exit(bad)
PY
exit $fail
