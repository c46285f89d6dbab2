#!/usr/bin/env bash
# examples/dsm-pages: every policy (busy, blocking, adaptive over the poller's no-fd decision),
# without and beside a CPU hog, completes exactly the requests asked, every page read back is
# the version last written, malformed datagrams are dropped and counted exactly and the home
# keeps serving; bad arguments exit 2 with one message. No latency is judged (bench dsm-pages
# does).
set -u
PROG=${1:?usage: test-dsm-pages.sh DSM_PAGES}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
fail=0
N=400
K=7

"$PROG" --help >"$tmp/help" 2>&1 && grep -q '^Usage: dsm-pages matrix' "$tmp/help" ||
	{ echo "FAIL: --help"; cat "$tmp/help"; fail=1; }
for bad in "matrix --bogus" "matrix --policies timed" "matrix --settings some" "matrix --requests 0" "serve"; do
	# shellcheck disable=SC2086
	"$PROG" $bad >"$tmp/bad" 2>&1
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$tmp/bad")" -le 2 ] ||
		{ echo "FAIL: dsm-pages $bad: want status 2 and one message, got $rc"; cat "$tmp/bad"; fail=1; }
done

timeout 120 "$PROG" matrix --requests $N --repeat 1 --malformed $K --csv "$tmp/runs.csv" >"$tmp/out" 2>&1 ||
	{ echo "FAIL: dsm-pages matrix"; cat "$tmp/out"; exit 1; }
cat "$tmp/out"
# setting,policy,round,mean_us,p50_us,p99_us,requests_per_s,hog_share,others_share,requests,
# served,wrong,lost,dropped,...
rows=$(awk -F, 'NR > 1' "$tmp/runs.csv" | wc -l)
[ "$rows" = 6 ] || { echo "FAIL: want 6 runs (2 settings x 3 policies), the CSV has $rows"; fail=1; }
awk -F, -v n=$N -v d=$((N / K)) 'NR > 1 {
	if ($10 != n || $11 != n || $12 != 0 || $13 != 0 || $14 != d) {
		printf "FAIL: %s / %s: %s requests, %s served, %s wrong, %s lost, %s dropped; want %d, %d, 0, 0, %d\n",
			$1, $2, $10, $11, $12, $13, $14, n, n, d
		bad = 1
	}
} END { exit bad }' "$tmp/runs.csv" || fail=1
for p in busy blocking adaptive; do
	for s in "no hog" "hog"; do
		grep -q "^$s *$p " "$tmp/out" || { echo "FAIL: no table row for $s / $p"; fail=1; }
	done
done
grep -q '^verdict: ' "$tmp/out" || { echo "FAIL: no verdict line"; fail=1; }
exit $fail
