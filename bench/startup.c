/* The start-cost benchmark's MPI program: MPI_Init, one 8-byte MPI_Allreduce, MPI_Finalize, so
 * that a job's wall time is MPI's own start and end plus whatever a preloaded tool adds to them.
 * Each rank prints the time from just before MPI_Init to just after MPI_Finalize
 * ("in_mpi_ns N"): the part of the job's wall time a tool can add to, without the launcher's
 * process start and exit. Knows nothing of noisetool. */
#include <stdio.h>
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
	long long t0 = now_ns();
	MPI_Init(&argc, &argv);
	double x = 1, y = 0;
	MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	printf("in_mpi_ns %lld\n", now_ns() - t0);
	return y > 0 ? 0 : 1;
}
