#!/usr/bin/env bash
# 10^7 collectives: resident memory grows by at most 1 MiB during the loop (compared with the
# same run without the library); at its peak, MPI_Finalize included, a rank holds at most its
# arena (NOISETOOL_MEM) and NT_PAST_ARENA_KIB more than with the library loaded but off
# (doc/environment.md: the tool's own data and the code it runs, MPI-IO's among it); the
# aggregates stay exact, records are dropped only from a full arena, and a too-small arena
# drops records and says "partial".
set -u
LIB=${1:?usage: test-memory.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
N=${NT_TEST_CALLS:-10000000}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
# Two ranks with MPICH's busy waits on one CPU advance one collective per scheduler slice
# (5.4 ms per 8-byte allreduce measured here): 10^7 calls would take 15 hours.
nt_need_cpus 2 "two ranks on one CPU make ~200 collectives a second, and this test makes 3 x 10^7"
nt_tmpdir
# meson sets MALLOC_PERTURB_, which fills every malloc'd block: MPI-IO's 16 MiB collective
# buffer, never touched by the log's independent writes, then became resident. Memory is
# measured as a job runs without it.
unset MALLOC_PERTURB_
fail=0
run() { timeout 300 mpiexec -n 2 $(nt_bind 2) "$@"; }
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")")
growth() { awk '/rss-growth-kb/ { print $2 }' "$1"; }
peak() { awk '/peak-rss-kb/ && $4 > m { m = $4 } END { print m + 0 }' "$1"; }
PAST_ARENA_KIB=2048 # NT_PAST_ARENA_KIB in doc/environment.md
# peak_check NAME FILE MEM_KIB: the peak of a run with the library against the run with it off.
peak_check() {
	local p off
	if [ -n "${NT_PRELOAD_FIRST:-}" ]; then
		echo "SKIP $1: peak check: a sanitizer's shadow memory is in every peak"
		return 0
	fi
	p=$(peak "$2")
	off=$(peak "$tmp/off")
	echo "$1: peak resident $p KiB, $((p - off)) KiB over the library off (arena $3 KiB + $PAST_ARENA_KIB allowed)"
	[ "$p" -le $((off + $3 + PAST_ARENA_KIB)) ] ||
		{ echo "FAIL: $1: the peak is over the arena and $PAST_ARENA_KIB KiB"; fail=1; }
}

run "$PROG" "$N" >/dev/null 2>"$tmp/plain" || { echo "FAIL: plain run"; exit 1; }
run "${pre[@]}" -genv NOISETOOL_DISABLE 1 "$PROG" "$N" >/dev/null 2>"$tmp/off" ||
	{ echo "FAIL: run with the library off"; cat "$tmp/off"; exit 1; }
run "${pre[@]}" -genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_SUMMARY 0 "$PROG" "$N" \
	>/dev/null 2>"$tmp/lib" || { echo "FAIL: run with the library"; cat "$tmp/lib"; exit 1; }
log=$(ls "$tmp"/*.ntlog | head -n 1)
"$NT" report "$log" --json "$tmp/default.json" >"$tmp/report" || { echo "FAIL: report"; fail=1; }
grep -q "\"calls\": $((2 * N))," "$tmp/default.json" || { echo "FAIL: aggregates must be exact"; fail=1; }
# The arena's pages are touched as records fill them (152 bytes each, wrappers/records.h): the
# loop may grow by those and 1 MiB more.
records=$(python3 -c 'import json, sys; print(max(r["records"] for r in json.load(open(sys.argv[1]))["rank_times"]))' "$tmp/default.json")
g0=$(growth "$tmp/plain")
g1=$(growth "$tmp/lib")
rec_kib=$(((records * 152 + 4095) / 4096 * 4))
echo "$N allreduces: resident growth $g0 KiB without the library, $g1 KiB with it ($rec_kib KiB of it the $records records)"
[ "$g1" -le $((g0 + rec_kib + 1024)) ] ||
	{ echo "FAIL: grew more than its records and 1 MiB beyond the run without it"; fail=1; }
echo "peak without the library $(peak "$tmp/plain") KiB, with it off $(peak "$tmp/off") KiB"
peak_check "default (16M)" "$tmp/lib" $((16 << 10))

# 1 MiB, the smallest: room for ~5,000 records, fewer than 10^7 / 1024 samples.
mkdir "$tmp/small"
run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/small" -genv NOISETOOL_SUMMARY 0 \
	-genv NOISETOOL_MEM 1M "$PROG" "$N" >/dev/null 2>"$tmp/small.err" ||
	{ echo "FAIL: run with a small arena"; cat "$tmp/small.err"; exit 1; }
peak_check "NOISETOOL_MEM=1M (full)" "$tmp/small.err" 1024
"$NT" report "$(ls "$tmp"/small/*.ntlog | head -n 1)" --json "$tmp/small.json" >"$tmp/small.report" ||
	{ echo "FAIL: report of the small run"; fail=1; }
head -3 "$tmp/small.report"
grep -q PARTIAL "$tmp/small.report" || { echo "FAIL: report does not say partial"; fail=1; }
grep -q '"partial": true' "$tmp/small.json" || { echo "FAIL: JSON partial"; fail=1; }
grep -q "\"calls\": $((2 * N))," "$tmp/small.json" || { echo "FAIL: aggregates must stay exact"; fail=1; }

# Records are dropped only once the arena is full. How many instances are worth a record
# depends on how noisy the run was (every slow call is one), so the default arena may fill on
# a loaded machine too; then it must have kept what its size holds: the default arena holds
# 16.6 times the records of the smallest (wrappers/arena.c: 85,311 and 5,129 on x86-64).
python3 - "$tmp/default.json" "$tmp/small.json" <<'PY' || fail=1
import json, sys
big, small = (json.load(open(p)) for p in sys.argv[1:3])
full = {r["rank"]: r["records"] for r in small["rank_times"]}
bad = 0
for r in big["rank_times"]:
    kept, dropped = r["records"], r["dropped_records"]
    print(f"rank {r['rank']}: {kept} records kept, {dropped} dropped in the default arena; "
          f"{full[r['rank']]} kept in 1 MiB")
    if dropped and kept < 16 * full[r["rank"]]:
        print(f"FAIL: rank {r['rank']} dropped records with its arena not full")
        bad = 1
if big["partial"] != any(r["dropped_records"] for r in big["rank_times"]):
    print("FAIL: partial is not the same as records dropped")
    bad = 1
sys.exit(bad)
PY
exit $fail
