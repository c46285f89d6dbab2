/* Nonblocking collectives: an MPI_Iallreduce completed by MPI_Wait after ~50 us of compute, an
 * MPI_Ibarrier completed by an MPI_Test loop, MPI_Waitall over two of them, and (every 20th
 * iteration) MPI_Waitall over 200 point-to-point requests followed by 70 MPI_Iallreduce: more
 * collectives than a wait call's stack snapshot holds, all past its 64th request. Knows nothing
 * of noisetool; prints the results. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "compute.h"

enum { LONG_P2P = 200, LONG_COLL = 70, LONG_EVERY = 20 };

/* One long wait: LONG_P2P point-to-point requests with the partner rank, then LONG_COLL
 * collectives at the end of the array. */
static double long_waitall(int partner, double x)
{
	static MPI_Request q[LONG_P2P + LONG_COLL];
	static MPI_Status st[LONG_P2P + LONG_COLL]; /* GCC 12 warns of MPI_STATUSES_IGNORE here */
	static int out[LONG_P2P / 2], in[LONG_P2P / 2];
	static double y[LONG_COLL];
	for (int i = 0; i < LONG_P2P / 2; i++) {
		out[i] = i;
		MPI_Isend(&out[i], 1, MPI_INT, partner, i, MPI_COMM_WORLD, &q[2 * i]);
		MPI_Irecv(&in[i], 1, MPI_INT, partner, i, MPI_COMM_WORLD, &q[2 * i + 1]);
	}
	MPI_Request *coll = q + LONG_P2P;
	for (int c = 0; c < LONG_COLL; c++)
		MPI_Iallreduce(&x, &y[c], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &coll[c]); /* site L */
	MPI_Waitall(LONG_P2P + LONG_COLL, q, st);
	double sum = 0;
	for (int c = 0; c < LONG_COLL; c++)
		sum += y[c];
	for (int i = 0; i < LONG_P2P / 2; i++)
		sum += in[i];
	return sum;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int partner = (rank ^ 1) < size ? rank ^ 1 : rank;
	int n = argc > 1 ? atoi(argv[1]) : 200;
	double x = rank + 1, y = 0, z = 0, sum = 0;
	for (int i = 0; i < n; i++) {
		MPI_Request r;
		MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r); /* site I */
		compute_us(50);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		sum += y;

		MPI_Request b;
		int done = 0;
		MPI_Ibarrier(MPI_COMM_WORLD, &b); /* site B */
		while (!done)
			MPI_Test(&b, &done, MPI_STATUS_IGNORE);

		MPI_Request two[2];
		MPI_Iallreduce(&x, &z, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &two[0]); /* site M */
		MPI_Ibarrier(MPI_COMM_WORLD, &two[1]);
		MPI_Status st[2];
		MPI_Waitall(2, two, st);
		sum += z;

		if (i % LONG_EVERY == 0)
			sum += long_waitall(partner, x);
	}
	if (rank == 0)
		printf("result %.1f\n", sum);
	MPI_Finalize();
	return 0;
}
