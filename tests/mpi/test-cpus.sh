#!/usr/bin/env bash
# Each rank's CPUs in the log and the reports (issue 34, "oversubscription and competitors in
# view"): 2 ranks one per CPU, then 4 ranks two per CPU (nt_bind places them, as
# `-bind-to user:...`). Judged by what the job was given and by what must hold whatever else
# runs: each rank's CPU list is the CPU it was bound to; the ranks within a rank's CPUs are 1,
# then 2 (and the 4 ranks are said to take turns, with the wait mode's advice); a rank's CPU
# time, and that of the ranks beside it, fit in its CPU's busy and steal time, and those in the
# CPU's wall time (within /proc/stat's 10 ms ticks).
#
#   test-cpus.sh LIB LOOP NOISETOOL     LOOP: allreduce-loop
set -u
LIB=${1:?usage: test-cpus.sh LIB LOOP NOISETOOL}
LOOP=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "ranks one per CPU, then two per CPU"
nt_tmpdir
fail=0

for np in 2 4; do
	run=np$np
	mkdir -p "$tmp/$run"
	nt_launch 120 "$run" -n $np $(nt_bind $np) -genv LD_PRELOAD "$(nt_preload "$LIB")" \
		-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$tmp/$run" "$LOOP" --calls 100 \
		--outliers 0
	[ "$(cat "$tmp/$run.rc")" = 0 ] || { echo "FAIL: $run: exit $(cat "$tmp/$run.rc")"; cat "$tmp/$run.err"; fail=1; continue; }
	log=$(ls "$tmp/$run"/*.ntlog 2>/dev/null | head -n 1)
	[ -n "$log" ] || { echo "FAIL: $run: no log"; fail=1; continue; }
	"$NT" report "$log" --no-symbols --json "$tmp/$run.json" >"$tmp/$run.txt" 2>"$tmp/$run.err" ||
		{ echo "FAIL: $run: noisetool report:"; cat "$tmp/$run.err"; fail=1; continue; }
	bound=$(for ((r = 0; r < np; r++)); do nt_rank_cpu $np $r; done | paste -sd,)
	python3 - "$tmp/$run.json" "$tmp/$run.txt" "$np" "$bound" <<'PY' || fail=1
import json, sys
rep = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
np, bound = int(sys.argv[3]), sys.argv[4].split(",")
bad = []
tick = 0.01 * 1e9  # /proc/stat's resolution, ns
ranks = rep["rank_times"]
for k in ranks:
    c, r = k["cpus"], k["rank"]
    if c.get("list") != bound[r]:
        bad.append(f"rank {r}: CPUs {c.get('list')!r}, bound to {bound[r]}")
        continue
    for key in ("cpu_ns", "run_delay_ns", "busy_ns", "steal_ns", "count", "ranks_within"):
        if key not in c:
            bad.append(f"rank {r}: no {key}: {c}")
    if bad:
        continue
    want = 2 if np == 4 else 1
    if c["count"] != 1 or c["ranks_within"] != want:
        bad.append(f"rank {r}: {c['ranks_within']} ranks within {c['count']} CPUs, want {want}/1")
    # the ranks bound to its CPU ran there: their CPU time fits its busy time (and what the
    # hypervisor took, which a task's run time may include)
    mates = sum(m["cpus"]["cpu_ns"] for m in ranks if m["cpus"]["list"] == c["list"])
    if mates > c["busy_ns"] + c["steal_ns"] + 3 * tick:
        bad.append(f"rank {r}: its CPU's ranks ran {mates} ns, the CPU was busy {c['busy_ns']} ns")
    if c["busy_ns"] + c["steal_ns"] > k["wall_ns"] + 3 * tick:
        bad.append(f"rank {r}: its CPU busy {c['busy_ns']} + steal {c['steal_ns']} ns in "
                   f"{k['wall_ns']} ns of wall time")
    if c["run_delay_ns"] > k["wall_ns"]:
        bad.append(f"rank {r}: waited {c['run_delay_ns']} ns in {k['wall_ns']} ns")
crowded = rep.get("crowded_ranks")
said = "take turns on their CPUs" in text
if np == 4 and (crowded != 4 or not said or "--wait adaptive" not in text):
    bad.append(f"4 ranks on 2 CPUs: crowded_ranks {crowded}, said so: {said}")
if np == 2 and (crowded != 0 or said):
    bad.append(f"2 ranks on 2 CPUs: crowded_ranks {crowded}, said to take turns: {said}")
if "CPUs by rank" not in text:
    bad.append("no table 'CPUs by rank' in the text report")
for b in bad:
    print(f"FAIL: {np} ranks: {b}")
if not bad:
    print(f"ok: {np} ranks: CPUs {','.join(bound)}, within their CPUs' busy and wall time")
sys.exit(1 if bad else 0)
PY
done
exit $fail
