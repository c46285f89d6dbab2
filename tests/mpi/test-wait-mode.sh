#!/usr/bin/env bash
# The wait mode a job ran with is in its log and every report (issue 37): a job with
# NOISETOOL_WAIT=busy, one without it (the MPI's own waits) and one that ends in MPI_Abort with
# busy waits (read from its live files) say so in the text report ("level os, waits busy"), the
# JSON (wait_mode), the trace (otherData.wait_mode) and the comparison of the two logs (text and
# JSON). Busy waits, not adaptive: the mode is what is checked, and busy needs no shared CPU.
#
#   test-wait-mode.sh LIB LOOP KILLED NOISETOOL     LOOP: allreduce-loop (tests/mpi: N calls); KILLED: killed
set -u
LIB=${1:?usage: test-wait-mode.sh LIB LOOP KILLED NOISETOOL}
LOOP=${2:?}
KILLED=${3:?}
NT=${4:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0

# job NAME WAIT PROGRAM ARGS...: 2 ranks into $tmp/NAME (WAIT "": NOISETOOL_WAIT unset)
job() {
	local name=$1 wait=$2
	shift 2
	mkdir -p "$tmp/$name"
	nt_launch 120 "$name" -n 2 $(nt_bind 2) -genv LD_PRELOAD "$(nt_preload "$LIB")" \
		-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$tmp/$name" \
		${wait:+-genv NOISETOOL_WAIT "$wait"} "$@"
}
job busy busy "$LOOP" 200
job mpi "" "$LOOP" 200
job abort busy "$KILLED" "$tmp/abort" 60 50
for run in busy mpi; do
	[ "$(cat "$tmp/$run.rc")" = 0 ] || { echo "FAIL: $run: exit $(cat "$tmp/$run.rc")"; cat "$tmp/$run.err"; fail=1; }
done
[ "$(cat "$tmp/abort.rc")" != 0 ] || { echo "FAIL: abort: the job did not fail"; fail=1; }
busy=$(ls "$tmp"/busy/*.ntlog 2>/dev/null | head -n 1)
mpi=$(ls "$tmp"/mpi/*.ntlog 2>/dev/null | head -n 1)
live=$(ls -d "$tmp"/abort/*.live 2>/dev/null | head -n 1)
[ -n "$busy" ] && [ -n "$mpi" ] && [ -n "$live" ] ||
	{ echo "FAIL: want two logs and a live directory: ${busy:-none} ${mpi:-none} ${live:-none}"; exit 1; }

# want WHAT FILE PATTERN: FILE holds PATTERN (grep -E)
want() {
	grep -Eq "$3" "$2" && echo "ok: $1" || { echo "FAIL: $1: no '$3' in $2"; head -n 5 "$2"; fail=1; }
}
for x in busy:"$busy" mpi:"$mpi" busy:"$live"; do
	mode=${x%%:*} log=${x#*:} n=$(basename "$log")
	"$NT" report "$log" --json "$tmp/$n.json" --perfetto "$tmp/$n.trace" >"$tmp/$n.txt" 2>"$tmp/$n.err"
	want "$n: text" "$tmp/$n.txt" "^2 ranks, level os, waits $mode, "
	want "$n: JSON" "$tmp/$n.json" "\"wait_mode\": *\"$mode\""
	want "$n: trace" "$tmp/$n.trace" "\"wait_mode\": *\"$mode\""
done
"$NT" report "$mpi" "$busy" --json "$tmp/compare.json" >"$tmp/compare.txt" 2>"$tmp/compare.err"
want "comparison: text, A" "$tmp/compare.txt" "^A: .*waits mpi, "
want "comparison: text, B" "$tmp/compare.txt" "^B: .*waits busy, "
python3 - "$tmp/compare.json" <<'EOF' && echo "ok: comparison: JSON" || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
if (d["a"]["wait_mode"], d["b"]["wait_mode"]) != ("mpi", "busy"):
    sys.exit(f"FAIL: comparison: JSON wait modes {d['a']['wait_mode']}, {d['b']['wait_mode']}")
EOF
exit $fail
