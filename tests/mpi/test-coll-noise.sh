#!/usr/bin/env bash
# examples/coll-noise (Beckman et al. section 4): at an equal noise ratio, unsynchronized noise
# slows barrier and allreduce more than synchronized noise does (short frequent detours, where
# a run holds the most of them).
set -u
PROG=${1:?usage: test-coll-noise.sh COLL_NOISE}
command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "SKIP: needs 2 CPUs"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout 300 mpiexec -n 2 -bind-to core "$PROG" --seconds 0.5 --detours 20,100 >"$out" 2>&1 ||
	{ echo "FAIL: coll-noise"; cat "$out"; exit 1; }
cat "$out"
fail=0
for coll in barrier allreduce; do
	# columns: collective detour us interval ms quiet sync unsync sync-x unsync-x
	awk -v c=$coll '$1 == c && $2 == 20 { exit !($10 > $9) }' "$out" ||
		{ echo "FAIL: $coll: unsynchronized noise did not slow it more than synchronized"; fail=1; }
done
exit $fail
