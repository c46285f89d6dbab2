#!/usr/bin/env bash
# Bytes per call: count x datatype size of the block each call sends (the receive side for
# MPI_IN_PLACE and for scatter); a call site whose freed datatype's handle comes back as another
# type counts the new size.
set -u
LIB=${1:?usage: test-bytes.sh LIB PROGRAM NOISETOOL SOURCE}
PROG=${2:?}
NT=${3:?}
SRC=${4:?}
N=10
. "$(dirname "$0")/site-report.sh"
# Every line marked "site X" in the source, with the bytes per call the report must give it.
check() { # SITE BYTES_PER_CALL CALLS
	local l got
	for l in $(grep -n "/\* site $1 \*/" "$SRC" | cut -d: -f1); do
		# A call spanning two lines is reported at its first.
		grep -q "MPI_[A-Za-z_]*(" <(sed -n "${l}p" "$SRC") || l=$((l - 1))
		got=$(awk -v l="bytes.c:$l" '$2 == l { print $3, $NF }' "$tmp/report")
		[ "$got" = "$3 $2" ] || { echo "FAIL: site $1 at bytes.c:$l: calls and bytes/call '$got', want '$3 $2'"; fail=1; }
	done
}
check A 24 $((2 * N))
check G 8 "$N"
check S 20 $((2 * N))
check T 34 $((4 * N)) # 2 x 24 bytes and 1 x 20 bytes, alternating
exit $fail
