/* More requests at once than the tool's request tables hold: N MPI_Ibarrier started before one
 * MPI_Waitall, then (MPI 4) N MPI_Barrier_init, each started and waited for once, then freed.
 * Knows nothing of noisetool; prints a result that does not depend on it. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 6000;
	MPI_Request *q = malloc((size_t)n * sizeof *q);
	MPI_Status *st = malloc((size_t)n * sizeof *st);
	if (!q || !st)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < n; i++)
		MPI_Ibarrier(MPI_COMM_WORLD, &q[i]); /* site I */
	MPI_Waitall(n, q, st);
#if MPI_VERSION >= 4
	for (int i = 0; i < n; i++)
		MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q[i]); /* site P */
	for (int i = 0; i < n; i++) {
		MPI_Start(&q[i]);
		MPI_Wait(&q[i], MPI_STATUS_IGNORE);
	}
	for (int i = 0; i < n; i++)
		MPI_Request_free(&q[i]);
#endif
	int all = 0, one = 1;
	MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%d ranks, %d barriers of each kind\n", all, n);
	free(q);
	free(st);
	MPI_Finalize();
	return 0;
}
