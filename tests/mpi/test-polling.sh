#!/usr/bin/env bash
# A program that waits by polling (issue 37; polling.c: ranks wait for rank 0 in loops of test
# calls and probes that find nothing):
# 1. Every test call is counted at its site, a poll as any other: per function, the report's
#    calls are the program's own count of tests that found nothing plus one that completed per
#    step and rank (ground truth: the program counts them).
# 2. Its polling loops wait as the wait loop does: with NOISETOOL_WAIT=sleep the waiting ranks
#    nap between polls (the tool's own count of naps, NOISETOOL_SUMMARY=1); with busy they
#    never hand the CPU over; with adaptive and 4 ranks on 2 CPUs (made here, never assumed)
#    the job hands it over at least once. A poll is no event of the adaptive choice (no cycle
#    between two completions): each rank's events (the wait line's "N events") are at most its
#    calls that were not polls, 5 a step (a receive posted or made, a send, the test that
#    completed, a wait, an allreduce) and a few at start and end, however many polls it made.
# 3. Results are those of the program without the library, in every mode.
#
#   test-polling.sh LIB POLLING NOISETOOL
set -u
LIB=${1:?usage: test-polling.sh LIB POLLING NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_need_python
nt_tmpdir
fail=0
STEPS=120

# job NAME RANKS BIND WAIT: the program into $tmp/NAME (WAIT none: without the library)
job() {
	local name=$1 n=$2 bind=$3 wait=$4 env=()
	mkdir -p "$tmp/$name"
	[ "$wait" = none ] || env=(-genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_WAIT "$wait"
		-genv NOISETOOL_SUMMARY 1 -genv NOISETOOL_OUT "$tmp/$name")
	nt_launch 120 "$name" -n "$n" $bind "${env[@]}" "$PROG" $STEPS
	[ "$(cat "$tmp/$name.rc")" = 0 ] ||
		{ echo "FAIL: $name: exit $(cat "$tmp/$name.rc")"; cat "$tmp/$name.err"; fail=1; }
}
# handed NAME: the job's naps and yields, and of them those after a poll, over its ranks' wait
# telemetry ("...; N naps, Y yields (L long), P after polls")
handed() {
	awk '$2 == "rank" && $4 == "waits" {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^naps/) n += $(i - 1)
			if ($i == "yields") y += $(i - 1)
			if ($i == "after" && $(i + 1) ~ /^polls/) p += $(i - 1)
		}
	} END { print n + 0, y + 0, p + 0 }' "$tmp/$1.err"
}

job none 2 "$(nt_bind 2)" none
job mpi 2 "$(nt_bind 2)" mpi
job sleep 2 "$(nt_bind 2)" sleep
job busy 2 "$(nt_bind 2)" busy
mapfile -t cpus < <(nt_cpus | head -n 2)
c0=${cpus[0]} c1=${cpus[1]:-${cpus[0]}}
job adaptive 4 "-bind-to user:$c0,$c1,$c0,$c1" adaptive
job none4 4 "-bind-to user:$c0,$c1,$c0,$c1" none

# 3. Results.
for w in mpi sleep busy; do
	cmp -s <(grep '^result' "$tmp/none.out") <(grep '^result' "$tmp/$w.out") &&
		grep -q '^result' "$tmp/$w.out" && echo "ok: $w: results" ||
		{ echo "FAIL: $w: results differ"; cat "$tmp/none.out" "$tmp/$w.out"; fail=1; }
done
cmp -s <(grep '^result' "$tmp/none4.out") <(grep '^result' "$tmp/adaptive.out") &&
	echo "ok: adaptive: results" || { echo "FAIL: adaptive: results differ"; fail=1; }

# 2. Waits between polls.
read -r naps yields polls <<<"$(handed sleep)"
[ "$polls" -ge 1 ] && echo "ok: sleep: $naps naps, $polls after polls" ||
	{ echo "FAIL: sleep: the polling ranks never napped between polls"; cat "$tmp/sleep.err"; fail=1; }
read -r naps yields polls <<<"$(handed busy)"
[ "$naps" = 0 ] && [ "$yields" = 0 ] && echo "ok: busy: no nap, no yield" ||
	{ echo "FAIL: busy: $naps naps, $yields yields"; fail=1; }
read -r naps yields polls <<<"$(handed adaptive)"
[ "$polls" -ge 1 ] &&
	echo "ok: adaptive, 4 ranks on 2 CPUs: $naps naps, $yields yields, $polls after polls" ||
	{ echo "FAIL: adaptive: 4 ranks shared 2 CPUs and no poll handed the CPU over"; cat "$tmp/adaptive.err"; fail=1; }

# Events: at most the calls that were not polls, on every rank (with polls counted as events, a
# waiting rank's were its polls and more).
for w in sleep adaptive; do
	awk -v most=$((5 * STEPS + 10)) -v job=$w '
	$2 == "rank" && $4 == "waits" { n++; if ($NF != "events" || $(NF - 1) > most) bad = bad " rank " $3 " " $(NF - 1) }
	$1 == "rank" && $3 == "empty" { polls += $5 + $7 + $9 + $11 }
	END {
		if (n == 0 || bad != "") {
			printf "FAIL: %s: events over %d, the calls that were not polls:%s (%d wait lines)\n", job, most, bad, n
			exit 1
		}
		printf "ok: %s: every rank at most %d events, the job %d polls\n", job, most, polls
	}' "$tmp/$w.err" || { cat "$tmp/$w.err"; fail=1; }
done

# 1. Every test call counted (the MPI's own waits and sleep: two books of the same calls).
for w in mpi sleep; do
	log=$(ls "$tmp/$w"/*.ntlog 2>/dev/null | head -n 1)
	[ -n "$log" ] || { echo "FAIL: $w: no log"; fail=1; continue; }
	"$NT" report "$log" --top 0 --json "$tmp/$w.json" >/dev/null 2>"$tmp/$w.report.err" ||
		{ echo "FAIL: $w: report"; cat "$tmp/$w.report.err"; fail=1; continue; }
	python3 - "$tmp/$w.json" "$tmp/$w.err" $STEPS 2 <<'EOF' && echo "ok: $w: every test call counted" || fail=1
import json, re, sys
doc, err, steps, ranks = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
empty = {"MPI_Test": 0, "MPI_Testany": 0, "MPI_Testsome": 0, "MPI_Iprobe": 0}
for line in open(err):
    m = re.match(r"rank \d+ empty MPI_Test (\d+) MPI_Testany (\d+) MPI_Testsome (\d+) "
                 r"MPI_Iprobe (\d+)", line)
    if m:
        for k, v in zip(empty, m.groups()):
            empty[k] += int(v)
calls = {}
for s in doc["sites"]:
    if s["function"] in empty:
        calls[s["function"]] = calls.get(s["function"], 0) + s["calls"]
for i, f in enumerate(empty):  # step i % 4 == i: one call that found it per such step and rank
    want = empty[f] + ranks * len(range(i, steps, 4))
    if calls.get(f, 0) != want:
        sys.exit(f"FAIL: {f}: the report counts {calls.get(f, 0)} calls, the program made {want}")
EOF
done
exit $fail
