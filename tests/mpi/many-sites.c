/* Many call sites: 64 distinct MPI_Allreduce call instructions (one per line of the macros),
 * each called N times. Knows nothing of noisetool; prints the result. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static double x = 1, y, sum;

#define SITE MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), sum += y;
#define SITES8 SITE SITE SITE SITE SITE SITE SITE SITE
#define SITES64 SITES8 SITES8 SITES8 SITES8 SITES8 SITES8 SITES8 SITES8

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = argc > 1 ? atol(argv[1]) : 10;
	for (long i = 0; i < n; i++) {
		SITES64
	}
	if (rank == 0)
		printf("result %.1f\n", sum);
	MPI_Finalize();
	return 0;
}
