#!/usr/bin/env bash
# examples/dsm-pages as a benchmark (issue 19; doc/polling.md, "For runtimes with their own
# progress loop"): a home serving 4 KiB pages to a client over UDP, one request outstanding,
# both waiting busy, blocking (in poll) or adaptive (the poller's no-fd decision: decide, nap,
# event), without and with a CPU hog beside the home; ROUNDS rounds of SECONDS per policy, the
# order rotating. Prints mean, p50 and p99 request latency, requests/s, the hog's CPU share and
# other tasks' share of the two CPUs; then adaptive's mean over the best fixed policy's, round by
# round over the quiet rounds (other tasks took <= 0.05 of a CPU in each run: a machine with
# other work on it changes speed between runs), and the verdict: within 1.1x in both settings,
# or OVER BUDGET (exit 1; also without a quiet round). Further arguments go to dsm-pages matrix
# (--work-us 100: the home computes per request; --hog-beside client).
set -u
PROG=${1:?usage: bench-dsm.sh DSM_PAGES [ROUNDS] [SECONDS] [MATRIX OPTIONS...]}
ROUNDS=${2:-5}
SECS=${3:-1.5}
shift $(($# < 3 ? $# : 3))
. "$(dirname "$0")/../tests/lib.sh"
nt_need_cpus 2 "the home and the client each on a CPU of its own"
nt_tmpdir
echo "bench-dsm: $(nt_ncpus) CPUs in the affinity mask; load average $(cut -d' ' -f1-3 /proc/loadavg) before"
"$PROG" matrix --repeat "$ROUNDS" --seconds "$SECS" --warmup-s 0.5 --csv "$tmp/runs.csv" "$@" |
	tee "$tmp/out"
status=${PIPESTATUS[0]}
echo "bench-dsm: load average $(cut -d' ' -f1-3 /proc/loadavg) after"
[ "$status" = 0 ] || { echo "bench-dsm: dsm-pages failed (status $status)"; exit 1; }
grep -q '^verdict: adaptive within 1.1x of the best fixed policy in all' "$tmp/out"
