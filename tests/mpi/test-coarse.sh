#!/usr/bin/env bash
# A coarse-grained program (three sites called twice each, tens of ms of compute between them,
# rank 1 given twice the work) gets every instance recorded on both ranks and joined, and
# every late one blamed on rank 1, for time it spent running or runnable: the relative recording
# rules (slow against the site's own mean) never fire for a site called twice, the absolute
# floor (1 ms) does.
set -u
LIB=${1:?usage: test-coarse.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
US=20000 # rank 0 computes 20 ms per phase, rank 1 40 ms: 20 ms late at every instance
timeout 120 mpiexec -n 2 $(nt_bind 2) -genv LD_PRELOAD "$(nt_preload "$LIB")" \
	-genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_SUMMARY 0 "$PROG" $US >"$tmp/out" 2>"$tmp/err" ||
	{ echo "FAIL: the run"; cat "$tmp/err"; exit 1; }
log=$(ls "$tmp"/*.ntlog) || { echo "FAIL: no log"; cat "$tmp/err"; exit 1; }
"$NT" report "$log" --json "$tmp/r.json" >"$tmp/report" || { echo "FAIL: report"; exit 1; }
cat "$tmp/report"
python3 - "$tmp/r.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
fail = []
att = rep["attribution"]
# Six instances (3 sites x 2 calls), each kept by both ranks and joined.
if att["instances_joined"] != 6:
    fail.append(f"{att['instances_joined']} instances joined, not 6")
# Rank 1 is 20 ms late by construction; a rank 0 stall that long at that moment is the only
# other way to be late by 1 ms or more, and would have to outlast rank 1's extra work.
late = [x for x in rep["late_instances"] if x["delay_ns"] >= 1e6]
if len(late) != 6:
    fail.append(f"{len(late)} instances late by 1 ms or more, not 6")
for x in late:
    if x["last_rank"] != 1:
        fail.append(f"instance {x['seq']} blamed on rank {x['last_rank']}, not rank 1")
    c = x["causes"]
    # Computing (on the CPU, or runnable beside something else): never blocked, faulting or
    # injected beyond rounding.
    cpu = c["preemption_ns"] + c["extra_work_ns"] + c["unexplained_ns"]
    if cpu < 0.9 * x["delay_ns"]:
        fail.append(f"instance {x['seq']}: only {cpu} of {x['delay_ns']} ns on or waiting for a CPU")
for f in fail:
    print("FAIL: " + f)
sys.exit(1 if fail else 0)
PY
