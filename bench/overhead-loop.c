/* The overhead benchmark's MPI program: batches of 8-byte MPI_Allreduce; rank 0 prints the
 * median per-call time over batches (one clock read per batch of 100 calls, so timing the loop
 * does not dilute the wrapper's cost). Knows nothing of noisetool.
 *
 * overhead-loop [BATCHES [ref]]: with "ref", each batch follows a reference batch of
 * PMPI_Allreduce, which no wrapper sees, and rank 0 also prints the median reference time and
 * the median over batches of (batch / its reference batch): the cost of whatever MPI_Allreduce
 * resolves to relative to MPI's own, taken 20 us apart. This VM moves between speed states for
 * seconds to minutes (an allreduce of 190 ns becomes 280 or 500 ns), so times of separate runs
 * differ by more than the 1-2 % to be measured; the ratio within a run does not move with them
 * (no preload: 0.999-1.001 in every state seen). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	int ref = argc > 2 && strcmp(argv[2], "ref") == 0;
	double *t = malloc((size_t)batches * sizeof *t);
	double *r = malloc((size_t)batches * sizeof *r);
	double *q = malloc((size_t)batches * sizeof *q);
	double x = 1, y = 0;
	for (int i = 0; i < 1000; i++) /* warm-up */
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int b = 0; b < batches; b++) {
		double t0 = now_ns();
		if (ref) {
			for (int i = 0; i < BATCH; i++)
				PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			double t1 = now_ns();
			r[b] = (t1 - t0) / BATCH;
			t0 = t1;
		}
		for (int i = 0; i < BATCH; i++)
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		t[b] = (now_ns() - t0) / BATCH;
		if (ref)
			q[b] = t[b] / r[b];
	}
	if (rank == 0) {
		printf("median_per_call_ns %.2f\n", median(t, (size_t)batches));
		if (ref) {
			printf("median_reference_ns %.2f\n", median(r, (size_t)batches));
			printf("median_ratio_to_reference %.4f\n", median(q, (size_t)batches));
		}
	}
	free(t);
	free(r);
	free(q);
	MPI_Finalize();
	return 0;
}
