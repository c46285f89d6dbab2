/* Many call sites: 5,120 distinct MPI_Allreduce call instructions (one per expansion of SITE),
 * each called N times, then MPI_Finalize; prints the result and, on stderr, the rank's peak
 * resident memory. Knows nothing of noisetool. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "peak-rss.h"

#define SITES 5120

static double x = 1, y, sum;

#define SITE MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), sum += y;
#define SITES8 SITE SITE SITE SITE SITE SITE SITE SITE
#define SITES64 SITES8 SITES8 SITES8 SITES8 SITES8 SITES8 SITES8 SITES8
#define SITES512 SITES64 SITES64 SITES64 SITES64 SITES64 SITES64 SITES64 SITES64
#define SITES5120 SITES512 SITES512 SITES512 SITES512 SITES512 \
		  SITES512 SITES512 SITES512 SITES512 SITES512

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = argc > 1 ? atol(argv[1]) : 10;
	for (long i = 0; i < n; i++) {
		SITES5120
	}
	if (rank == 0)
		printf("result %.1f over %d sites\n", sum, SITES);
	MPI_Finalize();
	fprintf(stderr, "rank %d peak-rss-kb %ld\n", rank, peak_rss_kb());
	return 0;
}
