/* Bytes per call: an allreduce of 3 doubles (site A), a gather of 2 ints with MPI_IN_PLACE at
 * the root (site G), a scatter of 5 ints (site S), and one bcast call site (site T) used with
 * a derived datatype of 3 doubles (count 2), which is then freed, and with a new one of 5 ints
 * (count 1), which MPICH may give the freed handle. Knows nothing of noisetool. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

/* One call instruction for both datatypes: not inlined, and not a tail call. */
__attribute__((noinline)) static void bcast(void *buf, int count, MPI_Datatype type)
{
	if (MPI_Bcast(buf, count, type, 0, MPI_COMM_WORLD) != MPI_SUCCESS) /* site T */
		abort();
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int n = argc > 1 ? atoi(argv[1]) : 10;
	double x[3] = { rank, 1, 2 }, y[3], d[6] = { 0 };
	int *all = calloc((size_t)size * 5, sizeof *all), mine[5] = { 0 }, check = 0;
	for (int i = 0; i < n; i++) {
		MPI_Allreduce(x, y, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site A */
		int two[2] = { rank, i };
		if (rank == 0)
			MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, all, 2, MPI_INT, 0,
				   MPI_COMM_WORLD); /* site G */
		else
			MPI_Gather(two, 2, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD); /* site G */
		MPI_Scatter(all, 5, MPI_INT, mine, 5, MPI_INT, 0, MPI_COMM_WORLD); /* site S */
		check += mine[0] + (int)y[0];
	}
	for (int i = 0; i < n; i++) {
		MPI_Datatype three;
		MPI_Type_contiguous(3, MPI_DOUBLE, &three);
		MPI_Type_commit(&three);
		bcast(d, 2, three);
		MPI_Type_free(&three);
		MPI_Datatype five;
		MPI_Type_contiguous(5, MPI_INT, &five);
		MPI_Type_commit(&five);
		bcast(mine, 1, five);
		MPI_Type_free(&five);
	}
	if (rank == 0)
		printf("result %d\n", check);
	free(all);
	MPI_Finalize();
	return 0;
}
