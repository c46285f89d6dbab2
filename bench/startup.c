/* The start-cost benchmark's MPI program: MPI_Init, one 8-byte MPI_Allreduce, MPI_Finalize, so
 * that a job's wall time is MPI's own start and end plus whatever a preloaded tool adds to them.
 * Knows nothing of noisetool. */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	double x = 1, y = 0;
	MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	return y > 0 ? 0 : 1;
}
