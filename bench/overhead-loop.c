/* The overhead benchmark's MPI program: batches of 8-byte MPI_Allreduce; rank 0 prints the
 * median per-call time over batches (one clock read per batch of 100 calls, so timing the loop
 * does not dilute the wrapper's cost). Knows nothing of noisetool. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

#include "batch-median.h"

enum { BATCH = 100 };

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int batches = argc > 1 ? atoi(argv[1]) : 2000;
	if (batches < 1)
		batches = 1;
	double *t = malloc((size_t)batches * sizeof *t);
	double x = 1, y = 0;
	for (int i = 0; i < 1000; i++) /* warm-up */
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int b = 0; b < batches; b++) {
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		t[b] = (now_ns() - t0) / BATCH;
	}
	if (rank == 0) {
		printf("median_per_call_ns %.2f\n", median(t, (size_t)batches));
	}
	free(t);
	MPI_Finalize();
	return 0;
}
