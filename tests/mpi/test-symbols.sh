#!/usr/bin/env bash
# The wrapper library exports exactly the generated list of MPI_ entry points (no more, no
# less), and that list covers MPICH's collectives (at least 120 symbols).
set -u
LIB=${1:?usage: test-symbols.sh LIB SYMBOL_LIST}
LIST=${2:?}
command -v nm >/dev/null || { echo "SKIP: no nm"; exit 77; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
nm -D --defined-only "$LIB" | awk '$2 == "T" { print $3 }' | sort >"$tmp"
if ! diff -u "$LIST" "$tmp"; then
	echo "FAIL: exported symbols differ from the generated list (- list, + library)"
	exit 1
fi
n=$(grep -c '^MPI_' "$tmp")
others=$(grep -vc '^MPI_' "$tmp")
echo "$n MPI_ symbols exported, $others others"
[ "$n" -ge 120 ] || { echo "FAIL: fewer than 120 MPI_ symbols"; exit 1; }
[ "$others" -eq 0 ] || { echo "FAIL: non-MPI symbols exported"; exit 1; }
for f in MPI_Allreduce MPI_Iallreduce MPI_Allreduce_init MPI_Allreduce_c MPI_Barrier \
	MPI_Ineighbor_alltoallw MPI_Init MPI_Init_thread MPI_Finalize MPI_Pcontrol MPI_Waitall; do
	grep -qx "$f" "$tmp" || { echo "FAIL: $f not exported"; exit 1; }
done
