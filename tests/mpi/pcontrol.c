/* MPI_Pcontrol on some ranks only, and the reset's records. Each rank sleeps 2 ms before every
 * call of the recorded loops, so that every rank keeps a record of each of their instances (the
 * recording policy's absolute floor: a span of 1 ms or more), whatever the machine does.
 *
 *   pcontrol pause N M    rank 1 pauses (MPI_Pcontrol(0)) for N allreduces that rank 0
 *                         records, resumes (MPI_Pcontrol(1)), then M recorded barriers: on
 *                         MPI_COMM_WORLD the allreduces are instances 0..N-1 and the barriers
 *                         N..N+M-1 on every rank, paused or not
 *   pcontrol reset K L    K recorded barriers, MPI_Pcontrol(2) on every rank, then L recorded
 *                         allreduces (instances K..K+L-1): the barrier's site has no call since
 *                         the reset and nothing of it may reach another site
 *
 * Knows nothing of noisetool; test-pcontrol.sh checks the report and the timeline. Rank 0
 * prints the results, which must not depend on a tool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static long allreduces(int n, int rank)
{
	long sum = 0;
	for (int i = 0; i < n; i++) {
		int x = rank + i, y = 0;
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		sum += y;
	}
	return sum;
}

static void recorded_barriers(int n)
{
	for (int i = 0; i < n; i++) {
		sleep_ms(2);
		MPI_Barrier(MPI_COMM_WORLD);
	}
}

static long recorded_allreduces(int n, int rank)
{
	long sum = 0;
	for (int i = 0; i < n; i++) {
		int x = rank + i, y = 0;
		sleep_ms(2);
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		sum += y;
	}
	return sum;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 4 || size < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: pcontrol pause|reset N M, on 2 ranks or more\n");
		MPI_Finalize();
		return 2;
	}
	int a = atoi(argv[2]), b = atoi(argv[3]);
	long sum = 0;
	if (!strcmp(argv[1], "pause")) {
		if (rank == 1)
			MPI_Pcontrol(0);
		sum += allreduces(a, rank);
		if (rank == 1)
			MPI_Pcontrol(1);
		recorded_barriers(b);
	} else {
		recorded_barriers(a);
		MPI_Pcontrol(2);
		sum += recorded_allreduces(b, rank);
	}
	if (rank == 0)
		printf("%s: sum %ld\n", argv[1], sum);
	MPI_Finalize();
	return 0;
}
