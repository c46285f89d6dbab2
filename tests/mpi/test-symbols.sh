#!/usr/bin/env bash
# The wrapper library exports exactly the generated list of entry points (no more, no less), and
# that list covers every collective entry point the MPI's own mpi.h declares (blocking,
# nonblocking, persistent, large-count, neighbourhood), found in the header independently of
# functions.list.
set -u
usage="usage: test-symbols.sh LIB SYMBOL_LIST MPI_H_PREPROCESSED"
LIB=${1:?$usage}
LIST=${2:?$usage}
HEADER=${3:?$usage}
command -v nm >/dev/null || { echo "FAIL: no nm (apt-get install binutils)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$LIB" | awk '$2 == "T" { print $3 }' | sort >"$tmp/exported"
if ! diff -u "$LIST" "$tmp/exported"; then
	echo "FAIL: exported symbols differ from the generated list (- list, + library)"
	exit 1
fi
n=$(grep -c '^MPI_' "$tmp/exported")
others=$(grep -v '^MPI_' "$tmp/exported" | grep -vc '^mpi_[a-z0-9_]*_$')
fortran=$(grep -c '^mpi_[a-z0-9_]*_$' "$tmp/exported")
echo "$n MPI_ symbols exported, $fortran Fortran entry points (mpi_..._), $others others"
[ "$others" -eq 0 ] || { echo "FAIL: other symbols exported:"; grep -v '^MPI_' "$tmp/exported" | grep -v '^mpi_[a-z0-9_]*_$'; exit 1; }

# Every collective the header declares: the standard's collective names, with their I (start),
# _init (persistent) and _c (large count) forms.
stems='Allgather|Allgatherv|Allreduce|Alltoall|Alltoallv|Alltoallw|Barrier|Bcast|Exscan|Gather'
stems+='|Gatherv|Reduce|Reduce_scatter|Reduce_scatter_block|Scan|Scatter|Scatterv'
stems+='|Neighbor_allgather|Neighbor_allgatherv|Neighbor_alltoall|Neighbor_alltoallv'
stems+='|Neighbor_alltoallw'
grep -oE "\bint[[:space:]]+MPI_I?($stems|$(echo "$stems" | tr 'A-Z' 'a-z'))(_init)?(_c)?[[:space:]]*\(" \
	"$HEADER" | sed -E 's/^int[[:space:]]+//; s/[[:space:]]*\($//' | sort -u >"$tmp/declared"
# Nonblocking forms are spelled MPI_Iallreduce: a lower-case stem after the I only.
grep -E '^MPI_(I[a-z]|[A-Z])' "$tmp/declared" >"$tmp/collectives"
k=$(wc -l <"$tmp/collectives")
missing=$(comm -23 "$tmp/collectives" "$tmp/exported")
echo "collective entry points declared by mpi.h: $k; exported: $((k - $(printf '%s' "$missing" | grep -c .)))"
[ "$k" -ge 40 ] || { echo "FAIL: found only $k collectives in $HEADER: is it mpi.h?"; exit 1; }
[ -z "$missing" ] || { echo "FAIL: collectives not exported:"; echo "$missing"; exit 1; }
for f in MPI_Allreduce MPI_Iallreduce MPI_Barrier MPI_Ineighbor_alltoallw MPI_Init \
	MPI_Init_thread MPI_Finalize MPI_Pcontrol MPI_Waitall; do
	grep -qx "$f" "$tmp/exported" || { echo "FAIL: $f not exported"; exit 1; }
done
