#!/usr/bin/env bash
# The examples' command lines: --help, bad options (status 2, one message), and allreduce-loop's
# histogram and outliers, whose instance numbers are those of the noisetool report.
set -u
ALLREDUCE=${1:?usage: test-examples.sh ALLREDUCE_LOOP COLL_NOISE NOISETOOL}
COLL=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0
for prog in "$ALLREDUCE" "$COLL"; do
	name=$(basename "$prog" | sed -E "s/-(mpich|ompi)$//") # built once per MPI: NAME-ompi
	mpiexec -n 1 "$prog" --help >"$tmp/help" 2>&1 && grep -q "^Usage: $name" "$tmp/help" ||
		{ echo "FAIL: $name --help"; cat "$tmp/help"; fail=1; }
	mpiexec -n 1 "$prog" --bogus >"$tmp/bad" 2>&1
	[ $? = 2 ] && grep -q "unknown option" "$tmp/bad" ||
		{ echo "FAIL: $name --bogus: want status 2 and a message"; cat "$tmp/bad"; fail=1; }
done
mpiexec -n 1 "$COLL" --seconds -1 >"$tmp/bad" 2>&1
[ $? = 2 ] || { echo "FAIL: coll-noise --seconds -1 accepted"; fail=1; }

timeout 100 "$NT" run --out "$tmp" --late 3 -- mpiexec -n 2 $(nt_bind 2) "$ALLREDUCE" --calls 2000 \
	--outliers 3 >"$tmp/out" 2>&1 || { echo "FAIL: allreduce-loop under noisetool run"; cat "$tmp/out"; exit 1; }
cat "$tmp/out"
grep -q "^allreduce-loop: 2000 x 8-byte MPI_Allreduce" "$tmp/out" || { echo "FAIL: no summary line"; fail=1; }
bins=$(awk '/log2 bins/ { on = 1; next } on && / us +[0-9]+ #/ { s += $(NF - 1) } /slowest calls/ { on = 0 } END { print s + 0 }' "$tmp/out")
[ "$bins" = 2000 ] || { echo "FAIL: the histogram holds $bins calls, not 2000"; fail=1; }
[ "$(grep -c '^  call ' "$tmp/out")" = 3 ] || { echo "FAIL: want 3 outliers listed"; fail=1; }
grep -q "MPI_Allreduce .*allreduce-loop.c:" "$tmp/out" || { echo "FAIL: report lacks the allreduce site"; fail=1; }
exit $fail
