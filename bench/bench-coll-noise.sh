#!/usr/bin/env bash
# Beckman et al. (2006) section 4 on this machine: examples/coll-noise's magnification table
# (barrier, allreduce, alltoall; 20, 100 and 500 us detours at a 2 % noise ratio), then, for
# each row, whether unsynchronized noise slowed the collective more than synchronized noise.
set -u
PROG=${1:?usage: bench-coll-noise.sh COLL_NOISE [SECONDS]}
SECONDS_PER=${2:-1}
. "$(dirname "$0")/../tests/lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU, as in the paper"
nt_tmpdir
timeout 1500 mpiexec -n 2 $(nt_bind 2) "$PROG" --seconds "$SECONDS_PER" >"$tmp/out" 2>&1 ||
	{ echo "bench-coll-noise: coll-noise failed"; cat "$tmp/out"; exit 1; }
cat "$tmp/out"
echo
echo "unsynchronized against synchronized noise of the same ratio (magnifications)"
printf "%-10s %8s %8s %8s  %s\n" collective detour sync unsync "unsync slows more"
awk '$3 == "us" && $5 == "ms" && NF == 10 {
	printf "%-10s %5s us %8.2f %8.2f  %s\n", $1, $2, $9, $10, ($10 > $9 ? "yes" : "no") }' "$tmp/out"
