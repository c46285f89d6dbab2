#!/usr/bin/env bash
# 32 ranks on 2 CPUs with adaptive waits (issue 36, "scale checks"): the job ends, its log holds
# every rank and the report is complete (32 ranks, every allreduce counted, the clock sync's
# stated error finite), and at its peak, MPI_Finalize included, each rank holds at most
# NT_PAST_ARENA_KIB (1 MiB) past its records' pages more than the same job's ranks with the
# library loaded but off (the median of theirs; doc/environment.md).
#
#   test-many-ranks.sh LIB LOOP NOISETOOL     LOOP: allreduce-loop (tests/mpi)
set -u
LIB=${1:?usage: test-many-ranks.sh LIB LOOP NOISETOOL}
LOOP=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
unset MALLOC_PERTURB_ # it makes every malloc'd block resident: memory is measured without it
NP=32 CALLS=50
fail=0
mkdir "$tmp/logs"
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")")
timeout 300 mpiexec -n $NP "${pre[@]}" -genv NOISETOOL_DISABLE 1 "$LOOP" $CALLS \
	>/dev/null 2>"$tmp/off" || { echo "FAIL: $NP ranks with the library off"; tail "$tmp/off"; exit 1; }
timeout 300 mpiexec -n $NP "${pre[@]}" -genv NOISETOOL_WAIT adaptive -genv NOISETOOL_SUMMARY 0 \
	-genv NOISETOOL_OUT "$tmp/logs" "$LOOP" $CALLS >/dev/null 2>"$tmp/on" ||
	{ echo "FAIL: $NP ranks with adaptive waits"; tail "$tmp/on"; exit 1; }
log=$(ls "$tmp"/logs/*.ntlog 2>/dev/null | head -n 1)
[ -n "$log" ] || { echo "FAIL: no log"; exit 1; }
"$NT" report "$log" --no-symbols --json "$tmp/r.json" >"$tmp/r.txt" 2>"$tmp/r.err" ||
	{ echo "FAIL: noisetool report"; cat "$tmp/r.err"; exit 1; }
head -n 4 "$tmp/r.txt" | tail -n 1
python3 - "$tmp/r.json" "$tmp/off" "$tmp/on" $NP $CALLS <<'PY' || fail=1
import json, re, statistics, sys
r = json.load(open(sys.argv[1]))
np, calls = int(sys.argv[4]), int(sys.argv[5])
bad = []
counted = sum(s["calls"] for s in r["sites"] if s["function"] == "MPI_Allreduce")
if r["ranks"] != np or r["partial"] or counted != np * calls:
    bad.append(f"ranks {r['ranks']}, partial {r['partial']}, {counted} allreduce calls "
               f"(want {np}, complete, {np * calls})")
if r.get("wait_mode") != "adaptive":
    bad.append(f"wait mode {r.get('wait_mode')}")
peak = lambda f: {int(m.group(1)): int(m.group(2)) for m in
                  re.finditer(r"rank (\d+) peak-rss-kb (\d+)", open(f).read())}
off, on = peak(sys.argv[2]), peak(sys.argv[3])
if len(off) != np or len(on) != np:
    bad.append(f"peaks of {len(off)} and {len(on)} ranks, want {np}")
else:
    base = statistics.median(off.values())
    recs = {k["rank"]: (k["records"] * 160 + 4095) // 4096 * 4 for k in r["rank_times"]}
    worst = max(on, key=lambda k: on[k] - base - recs.get(k, 0))
    past = on[worst] - base - recs.get(worst, 0)
    print(f"{np} ranks: peak {base:.0f} KiB with the library off (median), at most "
          f"{past:.0f} KiB more past the records' pages with it (rank {worst})")
    if past > 1024:
        bad.append(f"rank {worst} held {past:.0f} KiB past its records, more than 1 MiB")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
exit $fail
