#!/usr/bin/env bash
# Bytes per call: count x datatype size of the block each call sends (the receive side for
# MPI_IN_PLACE and for scatter); a call site whose freed datatype's handle comes back as another
# type counts the new size.
set -u
LIB=${1:?usage: test-bytes.sh LIB PROGRAM NOISETOOL SOURCE}
PROG=${2:?}
NT=${3:?}
SRC=${4:?}
command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec"; exit 77; }
N=10
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { timeout 120 mpiexec -n 2 -bind-to core "$@"; }
run "$PROG" $N >"$tmp/plain" 2>&1 || { echo "FAIL: plain run"; exit 1; }
run -genv LD_PRELOAD "$LIB" -genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_SUMMARY 0 "$PROG" $N \
	>"$tmp/pre" 2>"$tmp/pre.err" || { echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
cmp -s "$tmp/plain" "$tmp/pre" || { echo "FAIL: results differ"; fail=1; }
"$NT" report "$(ls "$tmp"/*.ntlog | head -n 1)" --top 0 >"$tmp/report" || { echo "FAIL: report"; exit 1; }
cat "$tmp/report"
sed -i -n '/^Call sites by MPI time/,/^$/p' "$tmp/report" # the call-site table only
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
