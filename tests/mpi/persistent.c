/* Persistent collectives (MPI 4): an MPI_Allreduce_init started N times with MPI_Start and
 * completed by MPI_Wait after ~50 us of compute; an MPI_Barrier_init and a second
 * MPI_Allreduce_init started together by MPI_Startall and completed by MPI_Waitall; the first
 * one once more with an MPI_Test loop. Knows nothing of noisetool; prints the results. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "compute.h"

#if MPI_VERSION < 4
/* MPI 3 (Open MPI 4.1) has no persistent collectives: the test skips (tests/lib.sh,
 * nt_need_mpi4) and this program only says so. */
int main(void)
{
	fprintf(stderr, "SKIP: this MPI implements MPI %d.%d; persistent collectives are MPI 4\n",
		MPI_VERSION, MPI_SUBVERSION);
	return 77;
}
#else
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 100;
	double x[4] = { rank + 1, 1, 2, 3 }, y[4] = { 0 }, sum = 0;
	int one = rank + 1, most = 0;
	MPI_Request p, pair[2];
	MPI_Allreduce_init(x, y, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
			   &p); /* site P */
	MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &pair[0]); /* site B */
	MPI_Allreduce_init(&one, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL,
			   &pair[1]); /* site M */
	for (int i = 0; i < n; i++) {
		MPI_Start(&p);
		compute_us(50);
		MPI_Wait(&p, MPI_STATUS_IGNORE);
		sum += y[0] + y[3];

		MPI_Status st[2];
		MPI_Startall(2, pair);
		MPI_Waitall(2, pair, st);
		sum += most;
	}
	int done = 0;
	MPI_Start(&p);
	while (!done)
		MPI_Test(&p, &done, MPI_STATUS_IGNORE);
	sum += y[0];
	MPI_Request_free(&p);
	MPI_Request_free(&pair[0]);
	MPI_Request_free(&pair[1]);
	if (rank == 0)
		printf("result %.1f\n", sum);
	MPI_Finalize();
	return 0;
}
#endif
