/* A program that waits by polling (as BAGEL does): per step, each rank posts a receive from its
 * left neighbour and sends to its right one; rank 0 computes ~200 us first, so that the others
 * wait for it in a loop of calls that find nothing (MPI_Test, MPI_Testany, MPI_Testsome,
 * and MPI_Iprobe before a receive, in turn); then an MPI_Allreduce of what arrived. Knows nothing of noisetool; prints its
 * result and each rank's count of tests that found nothing.
 *
 *   polling [STEPS]
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "compute.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long steps = argc > 1 ? atol(argv[1]) : 200;
	/* tests that found nothing: MPI_Test, MPI_Testany, MPI_Testsome, MPI_Iprobe */
	long empty[4] = { 0 };
	double sum = 0;
	for (long i = 0; i < steps; i++) {
		double in = 0, out = rank + (double)i, got;
		int left = (rank + size - 1) % size, kind = (int)(i % 4);
		MPI_Request r[2];
		if (kind != 3)
			MPI_Irecv(&in, 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &r[0]);
		if (rank == 0)
			compute_us(200);
		MPI_Isend(&out, 1, MPI_DOUBLE, (rank + 1) % size, 0, MPI_COMM_WORLD, &r[1]);
		int flag = 0, index, count = 0, indices[1];
		MPI_Status st[1]; /* GCC 12 warns of MPI_STATUSES_IGNORE here */
		if (kind == 0) {
			while (MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag)
				empty[0]++;
		} else if (kind == 1) {
			while (MPI_Testany(1, &r[0], &index, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
			       !flag)
				empty[1]++;
		} else if (kind == 2) {
			while (MPI_Testsome(1, &r[0], &count, indices, st) == MPI_SUCCESS && count == 0)
				empty[2]++;
		} else {
			while (MPI_Iprobe(left, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE) ==
				       MPI_SUCCESS &&
			       !flag)
				empty[3]++;
			MPI_Recv(&in, 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		MPI_Allreduce(&in, &got, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		sum += got;
	}
	printf("result %.1f\n", sum);
	fprintf(stderr, "rank %d empty MPI_Test %ld MPI_Testany %ld MPI_Testsome %ld MPI_Iprobe %ld\n",
		rank, empty[0], empty[1], empty[2], empty[3]);
	MPI_Finalize();
	return 0;
}
