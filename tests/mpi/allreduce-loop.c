/* A plain MPI program that knows nothing of noisetool: N 8-byte allreduces, a barrier, a bcast.
 * Prints the final sum so that runs with and without the library can be compared. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = argc > 1 ? atol(argv[1]) : 10000;
	double x = rank + 1, sum = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long i = 0; i < n; i++) {
		MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		x = sum / size;
	}
	double per_call_ns = (MPI_Wtime() - t0) / (double)(n > 0 ? n : 1) * 1e9;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Bcast(&sum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("result %.6f\nper-call %.1f ns\n", sum, per_call_ns);
	MPI_Finalize();
	return 0;
}
