#!/usr/bin/env bash
# 10^7 collectives: resident memory grows during the loop by its records' pages and at most
# 1 MiB more (compared with the same run without the library); at its peak, MPI_Finalize
# included, a rank holds at most NT_PAST_ARENA_KIB (1 MiB) past its arena's resident pages more
# than with the library loaded but off (doc/environment.md: the tool's own data and the code
# it runs), with the default arena and with the smallest, full one; the aggregates stay exact,
# records are dropped only from a full arena, and a too-small arena drops records and says
# "partial".
set -u
LIB=${1:?usage: test-memory.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
N=${NT_TEST_CALLS:-10000000}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
# Two ranks with MPICH's busy waits on one CPU advance one collective per scheduler slice
# (5.4 ms per 8-byte allreduce measured here): 10^7 calls would take 15 hours.
nt_need_cpus 2 "two ranks on one CPU make ~200 collectives a second, and this test makes 10 x 10^7"
nt_tmpdir
# meson sets MALLOC_PERTURB_, which fills every malloc'd block (MPICH's among them) and so
# makes it resident. Memory is measured as a job runs without it.
unset MALLOC_PERTURB_
fail=0
run() { timeout 300 mpiexec -n 2 $(nt_bind 2) "$@"; }
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")")
growth() { awk '/rss-growth-kb/ { print $2 }' "$1"; }
PAST_ARENA_KIB=1024 # NT_PAST_ARENA_KIB in doc/environment.md

start=$(date +%s)
run "$PROG" "$N" >/dev/null 2>"$tmp/plain" || { echo "FAIL: plain run"; exit 1; }
# Nine more runs of the same job follow, within the test's 600 s: on a machine too busy for
# that (CI beside other builds: 10 x 10^7 allreduces ran past 600 s) the test cannot judge.
took=$(($(date +%s) - start))
[ "$took" -le 45 ] ||
	nt_skip "the machine is busy: $N allreduces without the library took $took s (at most 45 s, so that the test's ten runs fit its 600 s)"
# Three alternating rounds of: the library loaded but off, the default arena, the smallest
# arena. A peak (VmHWM) differs by up to ~0.5 MiB between two runs of one job (MPICH's shared
# memory, file pages mapped around a fault, the kernel's per-CPU RSS counters), so each bound
# is judged on the median over the rounds of a run's peak less its round's run with the
# library off.
for i in 1 2 3; do
	run "${pre[@]}" -genv NOISETOOL_DISABLE 1 "$PROG" "$N" >/dev/null 2>"$tmp/off$i" ||
		{ echo "FAIL: run with the library off"; cat "$tmp/off$i"; exit 1; }
	mkdir "$tmp/default$i" "$tmp/small$i"
	run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/default$i" -genv NOISETOOL_SUMMARY 0 "$PROG" "$N" \
		>/dev/null 2>"$tmp/lib$i" || { echo "FAIL: run with the library"; cat "$tmp/lib$i"; exit 1; }
	# 1 MiB, the smallest: room for ~5,000 records, fewer than 10^7 / 1024 samples.
	run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/small$i" -genv NOISETOOL_SUMMARY 0 \
		-genv NOISETOOL_MEM 1M "$PROG" "$N" >/dev/null 2>"$tmp/small$i.err" ||
		{ echo "FAIL: run with a small arena"; cat "$tmp/small$i.err"; exit 1; }
done
# records_kib JSON: the pages the most records a rank kept take (NT_RECORD_BYTES, 160 bytes
# each, wrappers/records.h; 152 was left here when a record grew to 160 with log version 5, and
# counted 570 KiB of 72,873 records as past the arena).
records_kib() {
	python3 -c 'import json, sys
n = max(r["records"] for r in json.load(open(sys.argv[1]))["rank_times"])
print((n * 160 + 4095) // 4096 * 4)' "$1"
}
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }

for i in 1 2 3; do
	"$NT" report "$tmp"/default$i/*.ntlog --json "$tmp/default$i.json" >"$tmp/report$i" ||
		{ echo "FAIL: report"; exit 1; }
	grep -q "\"calls\": $((2 * N))," "$tmp/default$i.json" ||
		{ echo "FAIL: aggregates must be exact"; fail=1; }
	"$NT" report "$tmp"/small$i/*.ntlog --json "$tmp/small$i.json" >"$tmp/small$i.report" ||
		{ echo "FAIL: report of the small run"; exit 1; }
	grep -q PARTIAL "$tmp/small$i.report" || { echo "FAIL: report does not say partial"; fail=1; }
	grep -q '"partial": true' "$tmp/small$i.json" || { echo "FAIL: JSON partial"; fail=1; }
	grep -q "\"calls\": $((2 * N))," "$tmp/small$i.json" ||
		{ echo "FAIL: aggregates must stay exact"; fail=1; }
done
grep -m1 " ranks\?, level " "$tmp/small1.report"

# The loop: the arena's pages are touched as records fill them; it may grow by those and
# 1 MiB more than without the library.
rec_kib=$(records_kib "$tmp/default1.json")
g0=$(growth "$tmp/plain")
g1=$(growth "$tmp/lib1")
echo "$N allreduces: resident growth $g0 KiB without the library, $g1 KiB with it ($rec_kib KiB of it the records)"
[ "$g1" -le $((g0 + rec_kib + 1024)) ] ||
	{ echo "FAIL: grew more than its records and 1 MiB beyond the run without it"; fail=1; }
echo "peak without the library $(nt_peak_kib "$tmp/plain") KiB, with it off $(nt_peak_kib "$tmp/off1") $(nt_peak_kib "$tmp/off2") $(nt_peak_kib "$tmp/off3") KiB"

# The peaks, MPI_Finalize included: with the default arena, past the pages its records took
# (the other tables' few pages count as past it); with the smallest, past the whole arena
# (full: ~5,100 records).
if [ -n "${NT_PRELOAD_FIRST:-}" ]; then
	echo "SKIP peak checks: a sanitizer's shadow memory is in every peak"
else
	past_default=() past_small=()
	for i in 1 2 3; do
		off=$(nt_peak_kib "$tmp/off$i")
		past_default+=($(($(nt_peak_kib "$tmp/lib$i") - off - $(records_kib "$tmp/default$i.json"))))
		past_small+=($(($(nt_peak_kib "$tmp/small$i.err") - off - 1024)))
	done
	for run in default small; do
		eval "past=(\"\${past_$run[@]}\")"
		m=$(median "${past[@]}")
		echo "$run arena: peak past the arena ${past[*]} KiB over the library off: median $m KiB (at most $PAST_ARENA_KIB)"
		[ "$m" -le "$PAST_ARENA_KIB" ] ||
			{ echo "FAIL: $run arena: the peak is over the arena and $PAST_ARENA_KIB KiB"; fail=1; }
	done
fi

# Records are dropped only once the arena is full. How many instances are worth a record
# depends on how noisy the run was (every slow call is one), so the default arena may fill on
# a loaded machine too; then it must have kept what its size holds: the default arena holds
# 14 times the records of the smallest or more (wrappers/arena.c, x86-64, 160-byte records
# since log version 5: 77,3xx and 4,780 with MPICH, 16.2x; 73,065 and 4,886 with Open MPI,
# 14.95x, whose 1 MiB arena has fewer merged sites and so more room for records). A ratio of 16
# failed a correct Open MPI run whose default arena filled (81,310 kept of 152-byte records),
# and 15 another (73,065 kept, the whole arena, 2026-12-07).
python3 - "$tmp/default1.json" "$tmp/small1.json" <<'PY' || fail=1
import json, sys
big, small = (json.load(open(p)) for p in sys.argv[1:3])
full = {r["rank"]: r["records"] for r in small["rank_times"]}
bad = 0
for r in big["rank_times"]:
    kept, dropped = r["records"], r["dropped_records"]
    print(f"rank {r['rank']}: {kept} records kept, {dropped} dropped in the default arena; "
          f"{full[r['rank']]} kept in 1 MiB")
    if dropped and kept < 14 * full[r["rank"]]:
        print(f"FAIL: rank {r['rank']} dropped records with its arena not full")
        bad = 1
if big["partial"] != any(r["dropped_records"] for r in big["rank_times"]):
    print("FAIL: partial is not the same as records dropped")
    bad = 1
sys.exit(bad)
PY
exit $fail
