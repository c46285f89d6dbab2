#!/usr/bin/env bash
# Persistent collectives are counted at their MPI_X_init site, one call per MPI_Start or
# MPI_Startall, each timed from the start to its completion (MPI_Wait, MPI_Waitall, an
# MPI_Test loop); results are unchanged.
set -u
LIB=${1:?usage: test-persistent.sh LIB PROGRAM NOISETOOL SOURCE}
PROG=${2:?}
NT=${3:?}
SRC=${4:?}
N=100
. "$(dirname "$0")/../lib.sh"
nt_need_mpi4 "MPI_Allreduce_init (persistent collectives)"
. "$(dirname "$0")/site-report.sh"
line_of() { grep -n "/\* site $1 \*/" "$SRC" | cut -d: -f1; }
# The calls here span two lines; the report names the first.
field() { awk -v l="persistent.c:$1" -v f="$2" '$2 == l { print $f }' "$tmp/report"; }
check() { # SITE FUNCTION CALLS BYTES_PER_CALL
	local l=$(($(line_of "$1") - ${5:-0}))
	local calls bytes
	calls=$(field $l 3)
	bytes=$(awk -v l="persistent.c:$l" '$2 == l { print $NF }' "$tmp/report")
	[ "$calls" = "$3" ] && [ "$bytes" = "$4" ] ||
		{ echo "FAIL: site $1 ($2 at persistent.c:$l): calls '$calls' bytes/call '$bytes', want $3 and $4"; fail=1; }
}
check P MPI_Allreduce_init $((2 * (N + 1))) 32 1
check B MPI_Barrier_init $((2 * N)) 0
check M MPI_Allreduce_init $((2 * N)) 4 1
# Site P completes after ~50 us of compute: its mean start-to-completion time must show it.
l=$(($(line_of P) - 1))
mean_us=$(awk -v l="persistent.c:$l" '$2 == l { printf "%d", $4 * 1000 / $3 }' "$tmp/report")
echo "MPI_Allreduce_init at site P: mean start-to-completion ${mean_us} us"
[ "${mean_us:-0}" -ge 40 ] || { echo "FAIL: not timed to completion (${mean_us} us < 40)"; fail=1; }
exit $fail
