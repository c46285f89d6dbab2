/* How many communicators a program can hold at once: MPI_Comm_dup of MPI_COMM_WORLD (under
 * MPI_ERRORS_RETURN) until a dup fails or LIMIT are held, one allreduce on each new one, then
 * all freed. Rank 0 prints how many it made ("made N"); with LIMIT reached the program exits 0,
 * else 1. A tool must not lower N.
 *
 *   comm-limit LIMIT */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int limit = argc > 1 ? atoi(argv[1]) : 1500;
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm *comms = calloc((size_t)limit, sizeof *comms);
	int n = 0;
	while (n < limit) {
		if (MPI_Comm_dup(MPI_COMM_WORLD, &comms[n]) != MPI_SUCCESS)
			break;
		MPI_Comm_set_errhandler(comms[n], MPI_ERRORS_RETURN);
		int x = 1, y = 0;
		if (MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comms[n]) != MPI_SUCCESS) {
			MPI_Comm_free(&comms[n]);
			break;
		}
		n++;
	}
	if (rank == 0)
		printf("made %d\n", n);
	for (int i = 0; i < n; i++)
		MPI_Comm_free(&comms[i]);
	free(comms);
	MPI_Finalize();
	return n == limit ? 0 : 1;
}
