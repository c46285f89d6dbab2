/* Nonblocking collectives: an MPI_Iallreduce completed by MPI_Wait after ~50 us of compute, an
 * MPI_Ibarrier completed by an MPI_Test loop, and MPI_Waitall over two of them. Knows nothing of
 * noisetool; prints the results. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "compute.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 200;
	double x = rank + 1, y = 0, z = 0, sum = 0;
	for (int i = 0; i < n; i++) {
		MPI_Request r;
		MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r); /* site I */
		compute_us(50);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		sum += y;

		MPI_Request b;
		int done = 0;
		MPI_Ibarrier(MPI_COMM_WORLD, &b); /* site B */
		while (!done)
			MPI_Test(&b, &done, MPI_STATUS_IGNORE);

		MPI_Request two[2];
		MPI_Iallreduce(&x, &z, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &two[0]); /* site M */
		MPI_Ibarrier(MPI_COMM_WORLD, &two[1]);
		MPI_Status st[2];
		MPI_Waitall(2, two, st);
		sum += z;
	}
	if (rank == 0)
		printf("result %.1f\n", sum);
	MPI_Finalize();
	return 0;
}
