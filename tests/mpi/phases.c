/* Compute phases and collectives: N times, ~US microseconds of computing, then an 8-byte
 * MPI_Allreduce. Knows nothing of noisetool; prints where each rank runs and the result. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "compute.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	double us = argc > 2 ? atof(argv[2]) : 100;
	printf("rank %d cpu %d\n", rank, sched_getcpu());
	double x = rank + 1, y = 0, sum = 0;
	for (int i = 0; i < n; i++) {
		compute_us(us);
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		sum += y;
	}
	if (rank == 0)
		printf("result %.1f\n", sum);
	MPI_Finalize();
	return 0;
}
