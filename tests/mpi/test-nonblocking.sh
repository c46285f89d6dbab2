#!/usr/bin/env bash
# Nonblocking collectives are timed from start to completion (in MPI_Wait, an MPI_Test loop or
# MPI_Waitall), each start is counted at its own call site, results are unchanged; a wait call
# with more collectives than its snapshot holds, far down its array, completes every one.
set -u
LIB=${1:?usage: test-nonblocking.sh LIB PROGRAM NOISETOOL SOURCE}
PROG=${2:?}
NT=${3:?}
SRC=${4:?}
N=200
. "$(dirname "$0")/site-report.sh"
line_of() { grep -n "/\* site $1 \*/" "$SRC" | cut -d: -f1; }
for site in I B M; do
	grep -Eq "MPI_I(allreduce|barrier) +nonblocking.c:$(line_of $site) +$((2 * N)) " "$tmp/report" ||
		{ echo "FAIL: site $site (nonblocking.c:$(line_of $site)) with $((2 * N)) starts"; fail=1; }
done
# Site L: 70 collectives after 200 point-to-point requests in one MPI_Waitall, every 20th of N.
calls=$((2 * 70 * ((N + 19) / 20)))
grep -Eq "MPI_Iallreduce +nonblocking.c:$(line_of L) +$calls " "$tmp/report" ||
	{ echo "FAIL: site L (nonblocking.c:$(line_of L)) with $calls completed instances"; fail=1; }
# Site I completes after ~50 us of compute: its mean start-to-completion time must show it.
mean_us=$(awk -v l="nonblocking.c:$(line_of I)" '$2 == l { printf "%d", $4 * 1000 / $3 }' "$tmp/report")
echo "MPI_Iallreduce at site I: mean start-to-completion ${mean_us} us"
[ "${mean_us:-0}" -ge 40 ] || { echo "FAIL: not timed to completion (${mean_us} us < 40)"; fail=1; }
exit $fail
