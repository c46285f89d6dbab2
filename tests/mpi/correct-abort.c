/* MPI_Abort with error code 3 from the last rank while the others wait in a nonblocking barrier
 * on a fresh communicator: the launcher's exit status must not depend on a tool. Prints nothing:
 * hydra may drop what a rank printed just before an abort, MPICH's own abort message too. */
#include <stdio.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm c;
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	int x = rank + 1, sum = 0;
	MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c);
	if (rank == size - 1)
		MPI_Abort(MPI_COMM_WORLD, 3);
	MPI_Request r;
	MPI_Ibarrier(c, &r); /* never completes: the last rank does not join */
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	printf("abort: rank %d got past the barrier\n", rank);
	MPI_Finalize();
	return 0;
}
