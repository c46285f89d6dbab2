#!/usr/bin/env bash
# A hog named culprit-hog spins on the measured CPU: `noisetool detour` names it among the tasks
# that ran there meanwhile (JSON and text), with at least a fifth of the time the detour loop
# waited for that CPU (its run delay, read from its own schedstat: the ground truth; alone beside
# the loop it takes all of it, beside k more hogs about 1/(k+1)), and counts
# interrupts there (the tick runs on a CPU two tasks share).
#
# With "fifo": a periodic SCHED_FIFO task named fifo-ticker (2 ms period, 200 us spins) on the
# measured CPU instead; detour finds a component at its 500 Hz whose detours are mostly
# preempted, names the ticker as its task, and counts at least that component's time as
# "another task". Skipped where this user may not use SCHED_FIFO, or where another task shared
# the CPU too (the loop then sees the ticks only while it runs).
#
# With "fifo-loopback": the ticker and, at once, loopback UDP traffic at random times (2,000
# datagrams a second, udp-loopback.py on another CPU) whose receive softirqs lo's steering
# (rps_cpus, set for the test and restored) sends to the measured CPU. Besides the ticker's
# checks: the detours in which NET_RX ran, read after each detour, number at least 90 % of the
# NET_RX softirqs the kernel counted on that CPU meanwhile (the ground truth), the text names
# NET_RX among the softirqs' part, and the ticker's time is "another task" (at least 90 % of its
# CPU time there). Skipped as root only can steer lo, or with one CPU, or when under 90 % were
# seen and more than a tenth of the detours were not read (past the reads' 2 % budget: a busy
# CPU; in a CI run beside a build, 77 % seen).
#
#   test-detour-culprit.sh NOISETOOL PYTHON3 [fifo|fifo-loopback]
set -u
NT=${1:?usage: test-detour-culprit.sh NOISETOOL PYTHON3 [fifo|fifo-loopback]}
PY=${2:?}
MODE=${3:-hog}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"

if [ "$MODE" = fifo ] || [ "$MODE" = fifo-loopback ]; then
	cpu=$(nt_cpus | head -n 1)
	if [ "$MODE" = fifo-loopback ]; then
		other=$(nt_cpus | sed -n 2p)
		[ -n "$other" ] || nt_skip "one CPU: the traffic needs another CPU than the measured one"
		rps=/sys/class/net/lo/queues/rx-0/rps_cpus
		[ -w "$rps" ] && [ "$(id -u)" = 0 ] || nt_skip "lo's receive steering ($rps) is root's"
		old_rps=$(cat "$rps")
		# Comma-separated 32-bit words, most significant first.
		mask=$("$PY" -c 'import sys
n, w = 1 << int(sys.argv[1]), []
while True:
    w.append("%08x" % (n & 0xffffffff)); n >>= 32
    if not n: break
print(",".join(reversed(w)))' "$cpu")
		echo "$mask" >"$rps" || nt_skip "could not steer lo's softirqs to CPU $cpu"
		nt_on_exit "echo $old_rps >$rps"
		"$PY" "$(dirname "$0")/udp-loopback.py" "$other" 6 2000 >"$tmp/udp.out" &
		udp=$!
		nt_on_exit "kill $udp 2>/dev/null; wait $udp 2>/dev/null"
	fi
	"$PY" "$(dirname "$0")/fifo-ticker.py" "$cpu" 6 2000 200 >"$tmp/ticker.out" &
	ticker=$!
	nt_on_exit "kill $ticker 2>/dev/null; wait $ticker 2>/dev/null"
	for _ in $(seq 50); do
		grep -q ready "$tmp/ticker.out" && break
		kill -0 $ticker 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q ready "$tmp/ticker.out"; then
		wait $ticker
		[ $? -eq 77 ] && nt_skip "this user may not use SCHED_FIFO"
		fail "the ticker did not start"
		summary
		exit
	fi
	timeout -k 2 60 "$NT" detour --seconds 2 --cpu "$cpu" --json "$tmp/d.json" --json-detours \
		>"$tmp/out" 2>"$tmp/err" && ok || { fail "noisetool detour: exit $?"; cat "$tmp/err"; }
	verdict=$("$PY" - "$tmp/d.json" "$MODE" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))["cpus"][0]
loopback = sys.argv[2] == "fifo-loopback"
comps = [p for p in c["periodic"] if abs(p["freq_hz"] - 500) < 15]
t = c["detour_time"]
delay = c["run_delay_ns"]
if delay is None or delay > 0.25 * c["elapsed_ns"]:
    # The ticker takes 10 % of the CPU; a loop that waited more shared it with others too, and
    # then it sees only the ticks that come while it runs (aliased to other rates).
    print("skip: the CPU was shared: the loop waited %s of %d ns for it (the ticker alone "
          "takes 10 %%)" % (delay, c["elapsed_ns"]))
elif not comps:
    print("fail: no component at 500 Hz: %s" % [p["freq_hz"] for p in c["periodic"]])
elif comps[0]["preempted_ns"] * 2 < comps[0]["total_ns"]:
    print("fail: the 500 Hz component's detours are not mostly preempted: %s" % comps[0])
elif t["another_task_ns"] < comps[0]["preempted_ns"]:
    print("fail: another task's time %d ns is less than the component's %d ns" %
          (t["another_task_ns"], comps[0]["preempted_ns"]))
elif not loopback:
    print("ok: 500 Hz component %.1f ms, %.0f %% of the detour time another task's" %
          (comps[0]["total_ns"] / 1e6, 100.0 * t["another_task_ns"] / t["total_ns"]))
else:
    m = c["meanwhile"]
    ticker = [x for x in m["tasks"] if x["comm"] == "fifo-ticker"]
    counted = [x["count"] for x in m["softirqs"]["top"] if x["name"] == "NET_RX"]
    kinds = c["softirq_reads"]["kinds"]
    bit = 1 << kinds.index("NET_RX")
    flags = c["detours"]["softirqs"]
    seen = sum(1 for f in flags if f is not None and f & bit)
    unread = sum(1 for f in flags if f is None)
    if not ticker:
        print("fail: fifo-ticker not among the tasks: %s" % m["tasks"])
    elif t["another_task_ns"] < 0.9 * ticker[0]["run_ns"]:
        print("fail: another task's %d ns is under 90 %% of the ticker's CPU time %d ns" %
              (t["another_task_ns"], ticker[0]["run_ns"]))
    elif not counted or counted[0] < 1000:
        print("fail: %s NET_RX softirqs counted on the CPU: the steering did not work" % counted)
    elif seen < 0.9 * counted[0] and unread > 0.1 * len(flags):
        # A detour not read has no softirq bits: past the reads' 2 % budget (a busy CPU makes
        # more detours), what ran in it cannot be told, rightly or wrongly.
        print("skip: NET_RX ran in %d detours of %d counted, but %d of the %d detours were not "
              "read (the reads' budget; the CPU was busy)" % (seen, counted[0], unread,
                                                              len(flags)))
    elif seen < 0.9 * counted[0]:
        print("fail: NET_RX ran in %d detours, of %d NET_RX softirqs counted there (%.1f %%; "
              "%d of %d detours not read)" % (seen, counted[0], 100.0 * seen / counted[0],
                                              unread, len(flags)))
    else:
        print("ok: the ticker's %.1f ms as another task's %.1f ms; NET_RX in %d detours of %d "
              "counted (%.1f %%); softirqs %.1f ms of %.1f ms detour time" %
              (ticker[0]["run_ns"] / 1e6, t["another_task_ns"] / 1e6, seen, counted[0],
               100.0 * seen / counted[0], t["softirqs_ns"] / 1e6, t["total_ns"] / 1e6))
EOF
)
	case "$verdict" in
	ok:*) ok; echo "$verdict" ;;
	skip:*) nt_skip "${verdict#skip: }" ;;
	*) fail "${verdict#fail: }"; cat "$tmp/out" ;;
	esac
	grep -q "another task: fifo-ticker (pid" "$tmp/out" && ok ||
		{ fail "the periodic components do not name fifo-ticker"; cat "$tmp/out"; }
	if [ "$MODE" = fifo-loopback ]; then
		grep -Eq '^ +[0-9]+ +[0-9.]+ m?s .*[0-9] % \(NET_RX' "$tmp/out" && ok ||
			{ fail "the softirqs' part does not name NET_RX"; cat "$tmp/out"; }
	fi
	summary
	exit
fi

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
