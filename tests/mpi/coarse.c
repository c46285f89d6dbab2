/* A coarse-grained program: three call sites made twice each, with long compute phases between
 * them (US microseconds; rank 1 computes twice as long), as production codes with long compute
 * steps do. Knows nothing of noisetool; prints the results. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "compute.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double us = argc > 1 ? atof(argv[1]) : 20000;
	double work = rank == 1 ? 2 * us : us;
	double x = rank + 1, y = 0, sum = 0;
	for (int i = 0; i < 2; i++) {
		compute_us(work);
		MPI_Barrier(MPI_COMM_WORLD); /* site A */
		compute_us(work);
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site B */
		sum += y;
		compute_us(work);
		MPI_Bcast(&y, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* site C */
		sum += y;
	}
	if (rank == 0)
		printf("result %.1f\n", sum);
	MPI_Finalize();
	return 0;
}
