#!/usr/bin/env bash
# A hog named culprit-hog spins on the measured CPU: `noisetool detour` names it among the tasks
# that ran there meanwhile (JSON and text), with at least a fifth of the time the detour loop
# waited for that CPU (its run delay, read from its own schedstat: the ground truth; alone beside
# the loop it takes all of it, beside k more hogs about 1/(k+1)), and counts
# interrupts there (the tick runs on a CPU two tasks share).
set -u
NT=${1:?usage: test-detour-culprit.sh NOISETOOL PYTHON3}
PY=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"

[ -r /proc/thread-self/schedstat ] || nt_skip "no /proc/thread-self/schedstat: no run delay to compare with"
cpu=$(nt_cpus | head -n 1)
# The name a task gets is its executable's file name: sh under another name.
ln -s "$(command -v sh)" "$tmp/culprit-hog"
taskset -c "$cpu" timeout 120 "$tmp/culprit-hog" -c 'while :; do :; done' &
hog=$!
nt_on_exit "kill $hog 2>/dev/null; wait $hog 2>/dev/null"
sleep 0.2

timeout -k 2 60 "$NT" detour --seconds 1 --cpu "$cpu" --json "$tmp/d.json" >"$tmp/out" 2>"$tmp/err" &&
	ok || { fail "noisetool detour: exit $?"; cat "$tmp/err"; }
verdict=$("$PY" - "$tmp/d.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))["cpus"][0]
m = c.get("meanwhile")
if m is None:
    print("fail: no meanwhile object")
    sys.exit()
delay = c["run_delay_ns"]
if delay is None or delay < 100e6:
    print("skip: the detour loop waited %s ns for its CPU: the hog did not share it" % delay)
    sys.exit()
named = [t for t in m["tasks"] if t["comm"] == "culprit-hog"]
top = named[0] if named else None
if top is None:
    print("fail: culprit-hog is not among the tasks named: %s" % m["tasks"])
elif top["run_ns"] < 0.2 * delay or top["run_ns"] > m["elapsed_ns"]:
    print("fail: culprit-hog ran %d ns there; the loop waited %d ns, the reading spans %d ns"
          % (top["run_ns"], delay, m["elapsed_ns"]))
elif m["interrupts"]["count"] == 0:
    print("fail: no interrupts counted on a CPU two tasks share")
else:
    print("ok: culprit-hog %.1f ms, run delay %.1f ms" % (top["run_ns"] / 1e6, delay / 1e6))
EOF
)
case "$verdict" in
ok:*) ok; echo "$verdict" ;;
skip:*) nt_skip "${verdict#skip: }" ;;
*) fail "${verdict#fail: }"; cat "$tmp/out" ;;
esac
grep -q "What else ran on each CPU meanwhile" "$tmp/out" && grep -q "culprit-hog (pid [0-9]*) " "$tmp/out" &&
	ok || { fail "the table does not name culprit-hog"; cat "$tmp/out"; }
summary
