#!/usr/bin/env bash
# 5,120 call sites, each called N times, with three arenas: 1M (128 sites), the default 16M (4,096
# sites) and 64M (16,384). Every call is counted (at its own site, or at its function's merged
# site when the table had no room); the report says PARTIAL, naming the site table, exactly when
# calls were merged, and complete otherwise; results are unchanged; a rank's peak resident memory
# stays within its arena and the allowance past it (doc/environment.md) over the same job with
# the library off.
set -u
LIB=${1:?usage: test-many-sites.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
# meson sets MALLOC_PERTURB_, which fills every malloc'd block (MPICH's among them) and so
# makes it resident. Memory is measured as a job runs without it.
unset MALLOC_PERTURB_
N=4
SITES=5120
PAST_ARENA_KIB=1024 # NT_PAST_ARENA_KIB in doc/environment.md
fail=0
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")")
run "$PROG" $N >"$tmp/plain" 2>/dev/null || { echo "FAIL: plain run"; exit 1; }
run "${pre[@]}" -genv NOISETOOL_DISABLE 1 "$PROG" $N >/dev/null 2>"$tmp/off" ||
	{ echo "FAIL: run with the library off"; cat "$tmp/off"; exit 1; }
for mem in 1M 16M 64M; do
	mkdir "$tmp/$mem"
	run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/$mem" -genv NOISETOOL_SUMMARY 0 \
		-genv NOISETOOL_MEM $mem "$PROG" $N >"$tmp/pre" 2>"$tmp/$mem.err" ||
		{ echo "FAIL: NOISETOOL_MEM=$mem: the run"; cat "$tmp/$mem.err"; exit 1; }
	cmp -s "$tmp/plain" "$tmp/pre" || { echo "FAIL: NOISETOOL_MEM=$mem: results differ"; fail=1; }
	"$NT" report "$tmp/$mem"/*.ntlog --top 0 --json "$tmp/$mem.json" >"$tmp/$mem.txt" ||
		{ echo "FAIL: report"; exit 1; }
	grep -m1 " ranks\?, level " "$tmp/$mem.txt"
	read -r calls sites merged < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
a = [s for s in r["sites"] if s["function"] == "MPI_Allreduce"]
merged = [s for s in a if "site table was full" in s.get("module", "") + s.get("location", "")]
print(sum(s["calls"] for s in a), len(a) - len(merged), sum(s["calls"] for s in merged))' "$tmp/$mem.json")
	mem_kib=$(($(numfmt --from=iec "$mem") / 1024))
	p=$(nt_peak_kib "$tmp/$mem.err") off=$(nt_peak_kib "$tmp/off")
	echo "NOISETOOL_MEM=$mem: $calls MPI_Allreduce calls counted, $sites sites of their own," \
		"$merged calls merged; peak resident $p KiB, $((p - off)) KiB over the library off"
	[ "$calls" -eq $((2 * N * SITES)) ] ||
		{ echo "FAIL: NOISETOOL_MEM=$mem: $calls calls counted, not $((2 * N * SITES))"; fail=1; }
	if [ "$merged" -gt 0 ]; then
		grep -q "PARTIAL: [0-9]* calls found the site table full" "$tmp/$mem.txt" ||
			{ echo "FAIL: NOISETOOL_MEM=$mem: merged calls, but not reported as partial naming the site table"; fail=1; }
	else
		grep -q "complete" "$tmp/$mem.txt" ||
			{ echo "FAIL: NOISETOOL_MEM=$mem: nothing merged, but not reported complete"; fail=1; }
	fi
	if [ -n "${NT_PRELOAD_FIRST:-}" ]; then
		echo "SKIP NOISETOOL_MEM=$mem: peak check: a sanitizer's shadow memory is in every peak"
	elif [ "$p" -gt $((off + mem_kib + PAST_ARENA_KIB)) ]; then
		echo "FAIL: NOISETOOL_MEM=$mem: peak over the arena and $PAST_ARENA_KIB KiB"
		fail=1
	fi
done
grep -q PARTIAL "$tmp/1M.txt" || { echo "FAIL: 5,120 sites in a 128-site table is not partial"; fail=1; }
grep -q complete "$tmp/64M.txt" || { echo "FAIL: 5,120 sites in a 16,384-site table is partial"; fail=1; }
exit $fail
