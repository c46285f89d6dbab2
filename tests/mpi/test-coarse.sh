#!/usr/bin/env bash
# A coarse-grained program (three sites called twice each, tens of ms of compute between them,
# rank 1 given twice the work) gets every instance recorded on both ranks and joined, and
# every late one blamed on the rank that arrived last, for time it spent running or runnable:
# the relative recording rules (slow against the site's own mean) never fire for a site called
# twice, the absolute floor (1 ms) does. Which rank arrived last is the program's own ground
# truth (its arrival times on the host's CLOCK_MONOTONIC): rank 1 by construction, unless the
# machine held rank 0 up for longer than rank 1's extra work (seen beside other MPI jobs).
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
python3 - "$tmp/r.json" "$tmp/out" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
arrive = {}
for line in open(sys.argv[2]):
    w = line.split()
    if len(w) == 4 and w[0] == "arrive":
        arrive[(int(w[1]), int(w[2]))] = float(w[3])
fail = []
if len(arrive) != 12:
    fail.append(f"the program printed {len(arrive)} arrival times, not 12")
att = rep["attribution"]
# Six instances (3 sites x 2 calls), each kept by both ranks and joined.
if att["instances_joined"] != 6:
    fail.append(f"{att['instances_joined']} instances joined, not 6")
late = {x["seq"]: x for x in rep["late_instances"] if x["comm_id"] == 0}  # world
for seq in range(6):
    a0, a1 = arrive.get((seq, 0)), arrive.get((seq, 1))
    if a0 is None or a1 is None:
        continue
    truth = 1 if a1 > a0 else 0
    gap = abs(a1 - a0)
    if gap < 2e6:
        continue  # within 2 ms: the clocks' and the report's thresholds decide, not the work
    x = late.get(seq)
    if x is None or x["delay_ns"] < 1e6:
        fail.append(f"instance {seq}: rank {truth} arrived {gap / 1e6:.1f} ms after the other, "
                    f"and the report has it {'late by ' + str(x['delay_ns']) + ' ns' if x else 'not late'}")
        continue
    if x["last_rank"] != truth:
        fail.append(f"instance {seq} blamed on rank {x['last_rank']}, but rank {truth} arrived "
                    f"{gap / 1e6:.1f} ms after the other")
    c = x["causes"]
    # Computing (on the CPU, runnable beside something else, or on a vCPU the hypervisor
    # took): never blocked, faulting or injected beyond rounding.
    cpu = c["preemption_ns"] + c["steal_ns"] + c["extra_work_ns"] + c["unexplained_ns"]
    if cpu < 0.9 * x["delay_ns"]:
        fail.append(f"instance {seq}: only {cpu} of {x['delay_ns']} ns on or waiting for a CPU")
blamed_1 = sum(1 for x in late.values() if x["last_rank"] == 1 and x["delay_ns"] >= 1e6)
print(f"{blamed_1} of 6 instances late by 1 ms or more and blamed on rank 1 (the ground truth agrees "
      "with every blame)" if not fail else "")
for f in fail:
    print("FAIL: " + f)
sys.exit(1 if fail else 0)
PY
