#!/usr/bin/env bash
# Each rank's CPUs in the log and the reports (issue 34, "oversubscription and competitors in
# view"): 2 ranks one per CPU, then 4 ranks two per CPU (nt_bind places them, as
# `-bind-to user:...`). Judged by what the job was given and by what must hold whatever else
# runs: each rank's CPU list is the CPU it was bound to; the ranks within a rank's CPUs are 1,
# then 2 (and the 4 ranks are said to take turns, with the wait mode's advice); a rank's CPU
# time, and that of the ranks beside it, fit in its CPU's busy and steal time, and those in the
# CPU's wall time (within /proc/stat's 10 ms ticks). The other tasks on a rank's CPUs (issue 35,
# "competitors named"): with two ranks per CPU each names the other rank of its CPU as this
# job's rank; a third run, 2 ranks with a hog named culprit-hog on rank 1's CPU, names it among
# rank 1's, with at least a fifth of rank 1's run delay over the span the tasks were read in
# (alone beside the rank it takes all of it; beside a load's hog too, about half). That span
# begins inside the job, at the first reading (log version 9). Each rank also counts the
# interrupts and softirqs on its CPUs.
#
#   test-cpus.sh LIB LOOP NOISETOOL     LOOP: allreduce-loop (tests/mpi)
set -u
LIB=${1:?usage: test-cpus.sh LIB LOOP NOISETOOL}
LOOP=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "ranks one per CPU, then two per CPU"
nt_tmpdir
fail=0

for run in np2 np4 hog; do
	np=${run#np}
	if [ "$run" = hog ]; then
		np=2
		nt_named_hog "$(nt_rank_cpu 2 1)" culprit-hog
		sleep 0.2
	fi
	mkdir -p "$tmp/$run"
	# What the job does matters not, but it lasts 2 s: beside the hog a few of its slices, and
	# long enough that reading the other tasks again at MPI_Finalize fits the read budget.
	nt_launch 120 "$run" -n $np $(nt_bind $np) -genv LD_PRELOAD "$(nt_preload "$LIB")" \
		-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$tmp/$run" "$LOOP" 0 --seconds 2
	[ "$(cat "$tmp/$run.rc")" = 0 ] || { echo "FAIL: $run: exit $(cat "$tmp/$run.rc")"; cat "$tmp/$run.err"; fail=1; continue; }
	log=$(ls "$tmp/$run"/*.ntlog 2>/dev/null | head -n 1)
	[ -n "$log" ] || { echo "FAIL: $run: no log"; fail=1; continue; }
	"$NT" report "$log" --no-symbols --json "$tmp/$run.json" --perfetto "$tmp/$run.trace" \
		>"$tmp/$run.txt" 2>"$tmp/$run.err" ||
		{ echo "FAIL: $run: noisetool report:"; cat "$tmp/$run.err"; fail=1; continue; }
	bound=$(for ((r = 0; r < np; r++)); do nt_rank_cpu $np $r; done | paste -sd,)
	[ "$run" = hog ] && nt_hog_stop
	python3 - "$tmp/$run.json" "$tmp/$run.txt" "$np" "$bound" "$run" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
np, bound, run = int(sys.argv[3]), sys.argv[4].split(","), sys.argv[5]
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
# The other tasks on its CPUs: the job's rank bound beside it (4 ranks), the named hog (rank 1
# of the hog run); each with the rank's pid, and the span they were read over.
unread = []
for k in ranks:
    c, r = k["cpus"], k["rank"]
    o = c.get("others")
    if c.get("others_skipped") and "pid" in c:
        # Not read at both ends: right only when that would have taken the rank's reads past
        # 1 % of its wall time (its probe reads and the first reading, counted twice, a part
        # of scan_ns); then its names cannot be checked here.
        reads_ns = k["probe_reads"] * k["probe_read_ns"] + k["scan_ns"]
        if reads_ns < 0.005 * k["wall_ns"]:
            bad.append(f"rank {r}: other tasks not read, its reads {reads_ns:.0f} ns in "
                       f"{k['wall_ns']} ns of wall time")
        unread.append(f"rank {r} ({reads_ns / 1e6:.2f} ms of reads in "
                      f"{k['wall_ns'] / 1e9:.2f} s)")
        continue
    if o is None or "pid" not in c:
        bad.append(f"rank {r}: no pid or other tasks: {c}")
        continue
    # The interrupts on its CPUs: a CPU that ran the rank counted its ticks (nohz_full stops
    # the tick of a CPU with one task: then none need be counted).
    irq = c.get("interrupts")
    if irq is None or "softirqs" not in c:
        bad.append(f"rank {r}: no interrupts or softirqs: {c}")
    elif irq["count"] < sum(q["count"] for q in irq["top"]):
        bad.append(f"rank {r}: its lines count more than all: {irq}")
    if np == 4:
        mate = next(m["rank"] for m in ranks if m["rank"] != r and m["cpus"]["list"] == c["list"])
        if not any(t.get("job_rank") == mate for t in o["tasks"]):
            bad.append(f"rank {r}: the job's rank {mate} on its CPU is not named: {o}")
    # The tasks' span: from their first reading, made at a grid read inside the job (log
    # version 9), to MPI_Finalize; the rank's run delay in it, at most its whole job's.
    if not 0 < o["from_ns"] < k["wall_ns"] or \
            not 0 <= o.get("run_delay_ns", -1) <= c["run_delay_ns"]:
        bad.append(f"rank {r}: the other tasks' span from {o['from_ns']} ns, run delay "
                   f"{o.get('run_delay_ns')} ns in it, in {k['wall_ns']} ns of wall time and "
                   f"{c['run_delay_ns']} ns of run delay")
        continue
    if run == "hog" and r == 1:
        hog = [t for t in o["tasks"] if t["comm"] == "culprit-hog"]
        waited = o["run_delay_ns"]
        if not hog:
            bad.append(f"rank 1: culprit-hog is not named: {o}")
        elif hog[0]["run_ns"] < 0.2 * waited:
            bad.append(f"rank 1: culprit-hog ran {hog[0]['run_ns']} ns on its CPU, it waited "
                       f"{waited} ns in that span")
        else:
            print(f"rank 1: culprit-hog {hog[0]['run_ns'] / 1e6:.1f} ms, "
                  f"{100 * hog[0]['share']:.0f} % of the other tasks' time there; "
                  f"rank 1 waited {waited / 1e6:.1f} ms for its CPU from {o['from_ns'] / 1e9:.2f} s "
                  f"({100 * hog[0]['run_ns'] / max(waited, 1):.0f} % of it the hog's), "
                  f"{c['run_delay_ns'] / 1e6:.1f} ms in the whole job")
if run == "hog" and "culprit-hog (pid" not in text and not unread:
    bad.append("the text report does not name culprit-hog")
# The trace: a late arrival that preemption delayed says who took the rank's CPUs, when any
# other task was seen there (one that ran and moved away is missed: doc/ntlog-format.md).
trace = json.load(open(sys.argv[1][:-len(".json")] + ".trace"))
seen = {k["rank"] for k in ranks if k["cpus"].get("others", {}).get("tasks")}
for e in trace["traceEvents"]:
    a = e.get("args", {})
    if a.get("late_arrival") and a.get("preemption_ns", 0) > 0 and \
            a.get("rank") in seen and "preempted_by" not in a:
        bad.append(f"a late arrival of rank {a.get('rank')} delayed by preemption has no "
                   f"preempted_by in the trace")
        break
crowded = rep.get("crowded_ranks")
said = "take turns on their CPUs" in text
if np == 4 and (crowded != 4 or not said or "--wait adaptive" not in text):
    bad.append(f"4 ranks on 2 CPUs: crowded_ranks {crowded}, said so: {said}")
if np == 2 and (crowded != 0 or said):
    bad.append(f"2 ranks on 2 CPUs: crowded_ranks {crowded}, said to take turns: {said}")
if "CPUs by rank" not in text:
    bad.append("no table 'CPUs by rank' in the text report")
for b in bad:
    print(f"FAIL: {run}: {b}")
if not bad:
    print(f"ok: {run}: CPUs {','.join(bound)}, within their CPUs' busy and wall time")
if unread and not bad:
    print(f"SKIP: {run}: the other tasks were not read again within the read budget on this "
          f"machine: {', '.join(unread)}")
    sys.exit(77)
sys.exit(1 if bad else 0)
PY
	rc=$?
	[ $rc = 77 ] && skipped=1
	[ $rc != 0 ] && [ $rc != 77 ] && fail=1
done
[ $fail = 0 ] && [ "${skipped:-0}" = 1 ] && exit 77
exit $fail
