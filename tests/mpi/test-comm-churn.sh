#!/usr/bin/env bash
# 2,000 communicators created and freed, then 1,000 held at once (correct-comm-churn), with the
# smallest arena (1M: a communicator table of fewer slots than the 1,000 held) and the default
# (16M: room for all). Every collective is counted whatever table was full; the report says
# PARTIAL exactly when the log counts a loss, naming each kind it counts; at 16M nothing is
# lost; results are unchanged; a rank's peak resident memory stays within its arena and the
# allowance past it (doc/environment.md) over the same job with the library off.
set -u
LIB=${1:?usage: test-comm-churn.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
unset MALLOC_PERTURB_ # memory is measured as a job runs without it (test-memory.sh)
N=2000                 # communicators in the churn; N / 2 are then held at once
PAST_ARENA_KIB=1024    # NT_PAST_ARENA_KIB in doc/environment.md
fail=0
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")")
run "$PROG" $N >"$tmp/plain" 2>/dev/null || { echo "FAIL: plain run"; exit 1; }
run "${pre[@]}" -genv NOISETOOL_DISABLE 1 "$PROG" $N >/dev/null 2>"$tmp/off" ||
	{ echo "FAIL: run with the library off"; cat "$tmp/off"; exit 1; }
for mem in 1M 16M; do
	mkdir "$tmp/$mem"
	run "${pre[@]}" -genv NOISETOOL_OUT "$tmp/$mem" -genv NOISETOOL_SUMMARY 0 \
		-genv NOISETOOL_MEM $mem "$PROG" $N >"$tmp/pre" 2>"$tmp/$mem.err" ||
		{ echo "FAIL: NOISETOOL_MEM=$mem: the run"; cat "$tmp/$mem.err"; exit 1; }
	cmp -s "$tmp/plain" "$tmp/pre" || { echo "FAIL: NOISETOOL_MEM=$mem: results differ"; fail=1; }
	"$NT" report "$tmp/$mem"/*.ntlog --top 0 --json "$tmp/$mem.json" >"$tmp/$mem.txt" ||
		{ echo "FAIL: NOISETOOL_MEM=$mem: report"; exit 1; }
	grep -m1 " ranks\?, level " "$tmp/$mem.txt"
	# Each rank: N / 2 blocking and N / 2 nonblocking allreduces in the churn, N / 2 blocking
	# ones on the communicators held at once.
	python3 - "$tmp/$mem.json" "$tmp/$mem.txt" $N $mem <<'PY' || fail=1
import json, sys
report, text, n, mem = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), int(sys.argv[3]), sys.argv[4]
calls = lambda f: sum(s["calls"] for s in report["sites"] if s["function"] == f)
bad = 0
for f, want in (("MPI_Allreduce", 2 * n), ("MPI_Iallreduce", n)):
    print(f"NOISETOOL_MEM={mem}: {calls(f)} {f} calls counted, {want} made")
    if calls(f) != want:
        print(f"FAIL: NOISETOOL_MEM={mem}: {f} calls not all counted")
        bad = 1
# The words nt_loss_describe (libnoisetool/data-loss.c) uses for each kind.
words = {"dropped_calls": "found the site table full", "dropped_records": "dropped",
         "untimed_instances": "not timed", "unregistered_persistent": "not registered",
         "unknown_comm_records": "had no id"}
lost = {k: v for k, v in report["losses"].items() if v}
print(f"NOISETOOL_MEM={mem}: losses {lost or 'none'}")
if report["partial"] != bool(lost) or ("PARTIAL" in text) != bool(lost):
    print(f"FAIL: NOISETOOL_MEM={mem}: partial (JSON {report['partial']}, text "
          f"{'PARTIAL' in text}) is not the same as a loss counted")
    bad = 1
for k in lost:
    if words[k] not in text:
        print(f"FAIL: NOISETOOL_MEM={mem}: {k} counted but the report does not name it")
        bad = 1
if mem == "16M" and lost:
    print("FAIL: the default arena has room for every communicator, site and record here")
    bad = 1
sys.exit(bad)
PY
	mem_kib=$(($(numfmt --from=iec "$mem") / 1024))
	p=$(nt_peak_kib "$tmp/$mem.err") off=$(nt_peak_kib "$tmp/off")
	if [ -n "${NT_PRELOAD_FIRST:-}" ]; then
		echo "SKIP NOISETOOL_MEM=$mem: peak check: a sanitizer's shadow memory is in every peak"
	else
		echo "NOISETOOL_MEM=$mem: peak resident $p KiB, $((p - off)) KiB over the library off"
		[ "$p" -le $((off + mem_kib + PAST_ARENA_KIB)) ] ||
			{ echo "FAIL: NOISETOOL_MEM=$mem: peak over the arena and $PAST_ARENA_KIB KiB"; fail=1; }
	fi
done
exit $fail
