/* A coarse-grained program: three call sites made twice each, with long compute phases between
 * them (US microseconds; rank 1 computes twice as long), as production codes with long compute
 * steps do. Knows nothing of noisetool; prints the results, and when each rank arrived at each
 * collective ("arrive SEQ RANK NS", CLOCK_MONOTONIC: one clock for the ranks of one host), the
 * ground truth of which rank was last: on a loaded machine rank 0 may be held up longer than
 * rank 1's extra work. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "compute.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double us = argc > 1 ? atof(argv[1]) : 20000;
	double work = rank == 1 ? 2 * us : us;
	double x = rank + 1, y = 0, sum = 0, arrive[6];
	for (int i = 0; i < 2; i++) {
		compute_us(work);
		arrive[3 * i] = now_ns();
		MPI_Barrier(MPI_COMM_WORLD); /* site A */
		compute_us(work);
		arrive[3 * i + 1] = now_ns();
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site B */
		sum += y;
		compute_us(work);
		arrive[3 * i + 2] = now_ns();
		MPI_Bcast(&y, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* site C */
		sum += y;
	}
	if (rank == 0)
		printf("result %.1f\n", sum);
	for (int k = 0; k < 6; k++)
		printf("arrive %d %d %.0f\n", k, rank, arrive[k]);
	MPI_Finalize();
	return 0;
}
