/* An MPI program linked with the wrapper library instead of preloading it (pkg-config
 * noisetool-mpich or noisetool-ompi): N 8-byte allreduces at one call site, then one barrier.
 * It checks its own results; the test checks the job's log names both sites and counts them
 * exactly.
 *
 *   linked-mpi [N]     (default 300) */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int n = argc > 1 ? atoi(argv[1]) : 300, rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long bad = 0;
	for (int i = 0; i < n; i++) {
		long x = rank + i, sum = 0;
		MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD); /* site: allreduce */
		bad += sum != (long)size * i + (long)size * (size - 1) / 2;
	}
	MPI_Barrier(MPI_COMM_WORLD); /* site: barrier */
	if (rank == 0)
		printf("linked-mpi: %d allreduces on %d ranks, %ld wrong\n", n, size, bad);
	MPI_Finalize();
	return bad != 0;
}
