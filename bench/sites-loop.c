/* The sites benchmark's MPI program: batches of 8-byte MPI_Allreduce from N distinct call sites
 * (sites-switch.h) taken in turn (round robin) or in a random order; rank 0 prints the median
 * per-call time over batches (one clock read per batch of 100 calls). The same binary for every
 * N, so the program's own code is the same. Each batch follows a reference batch of
 * PMPI_Allreduce, which no wrapper sees: its median tells the machine's state (this VM's
 * allreduce is 2-3x slower now and then) apart from what a wrapper costs. Knows nothing of
 * noisetool.
 * With N > 1, each batch is also followed by a batch of 100 calls from one site (site 0): the
 * median over batches of (N-site batch / one-site batch) compares N sites with one within the
 * run, 10-50 us apart, whatever the VM's state (median_ratio_to_one_site; 1 for N = 1).
 * Usage: sites-loop N [rr|random] [BATCHES] [WARMUP: calls per site before the batches, 2] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "batch-median.h"
#include "sites-switch.h"

enum { BATCH = 100, ORDER = 1 << 15 /* sites in the order array: 64 KiB */ };

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 1;
	int random = argc > 2 && strcmp(argv[2], "random") == 0;
	int batches = argc > 3 ? atoi(argv[3]) : 2000;
	long warmup = argc > 4 ? atol(argv[4]) : 2;
	if (n < 1 || n > bench_sites_max || batches < 1 || warmup < 1) {
		if (rank == 0)
			fprintf(stderr, "sites-loop: N must be 1..%d, BATCHES and WARMUP >= 1\n",
				bench_sites_max);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	/* Both orders read the site from one array, so they run the same loop. The random order
	 * is the same on both ranks (one seed): each instance meets the same site's call on the
	 * other rank, as in a program whose ranks run the same code. */
	uint16_t *order = malloc(ORDER * sizeof *order);
	double *t = malloc((size_t)batches * sizeof *t);
	double *ref = malloc((size_t)batches * sizeof *ref);
	double *q = malloc((size_t)batches * sizeof *q);
	double *q1 = malloc((size_t)batches * sizeof *q1);
	if (!order || !t || !ref || !q || !q1)
		MPI_Abort(MPI_COMM_WORLD, 2);
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (int k = 0; k < ORDER; k++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17; /* xorshift64 */
		order[k] = (uint16_t)(random ? (int)(s % (uint64_t)n) : k % n);
	}
	double x = 1, y = 0;
	/* Warm-up: every site WARMUP times (its first sight is the tool's slow path), then 1000
	 * calls. */
	for (long k = 0; k < warmup * n + 1000; k++)
		bench_site((int)(k % n), &x, &y, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	unsigned k = 0;
	for (int b = 0; b < batches; b++) {
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		ref[b] = (now_ns() - t0) / BATCH;
		t0 = now_ns();
		for (int i = 0; i < BATCH; i++, k++)
			bench_site(order[k % ORDER], &x, &y, MPI_COMM_WORLD);
		t[b] = (now_ns() - t0) / BATCH;
		q[b] = t[b] / ref[b];
		q1[b] = 1;
		if (n > 1) {
			t0 = now_ns();
			for (int i = 0; i < BATCH; i++)
				bench_site(0, &x, &y, MPI_COMM_WORLD);
			q1[b] = t[b] / ((now_ns() - t0) / BATCH);
		}
	}
	if (rank == 0)
		printf("median_per_call_ns %.2f\nmedian_reference_ns %.2f\n"
		       "median_ratio_to_reference %.4f\nmedian_ratio_to_one_site %.4f\n",
		       median(t, (size_t)batches), median(ref, (size_t)batches),
		       median(q, (size_t)batches), median(q1, (size_t)batches));
	free(q1);
	free(q);
	free(ref);
	free(t);
	free(order);
	MPI_Finalize();
	return 0;
}
