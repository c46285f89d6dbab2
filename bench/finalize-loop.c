/* The growth benchmark's MPI program (bench/bench-growth.sh): CALLS 8-byte MPI_Allreduce calls
 * back to back, a barrier, then MPI_Finalize timed on every rank, so that a preloaded tool's end
 * (its log write among it) is seen against MPI's own. Each rank prints, after MPI_Finalize,
 * "rank R finalize_ns N loop_ns N". Knows nothing of noisetool.
 *
 *   finalize-loop CALLS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long calls = argc == 2 ? atoll(argv[1]) : -1;
	if (calls < 0) {
		fprintf(stderr, "usage: finalize-loop CALLS\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double x = 1, y = 0;
	long long t0 = now_ns();
	for (long long i = 0; i < calls; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD); /* every rank starts MPI_Finalize at about the same time */
	long long t1 = now_ns();
	MPI_Finalize();
	long long t2 = now_ns();
	printf("rank %d finalize_ns %lld loop_ns %lld\n", rank, t2 - t1, t1 - t0);
	return calls == 0 || y > 0 ? 0 : 1;
}
