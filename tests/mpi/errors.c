/* Erroneous MPI calls under MPI_ERRORS_RETURN: prints each return code's error class, which must
 * be the same with and without noisetool. Knows nothing of noisetool. */
#include <stdio.h>

#include <mpi.h>

static void show(const char *what, int rc)
{
	int cls = rc;
	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	printf("%-28s rc %s class %d\n", what, rc == MPI_SUCCESS ? "ok " : "err", cls);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double x = 1, y = 0;
	int rc[6];
	rc[0] = MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	rc[1] = MPI_Bcast(&x, 1, MPI_DOUBLE, size + 5, MPI_COMM_WORLD);       /* bad root */
	rc[2] = MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_OP_NULL, MPI_COMM_WORLD); /* null op */
	rc[3] = MPI_Reduce(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, MPI_COMM_WORLD);
	rc[4] = MPI_Barrier(MPI_COMM_WORLD);
	rc[5] = MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		show("allreduce", rc[0]);
		show("bcast bad root", rc[1]);
		show("allreduce null op", rc[2]);
		show("reduce null datatype", rc[3]);
		show("barrier", rc[4]);
		show("allreduce again", rc[5]);
		printf("sum %.1f\n", y);
	}
	MPI_Finalize();
	return 0;
}
