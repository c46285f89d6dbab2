/* The adaptive-wait votes (wrappers/votes.c): pairs split from MPI_COMM_WORLD, a duplicate of
 * it (more than 32 ranks: its votes go along a tree), a split of that duplicate (its slot
 * agreed on the duplicate's members) and MPI_COMM_WORLD itself (slot 0), allreduces on each in
 * turn, and every 100 calls two more duplicates freed in different orders on odd and even
 * ranks. Every result is checked; rank 0 prints "ok N" (N calls), or the program exits 1.
 *
 *   votes CALLS */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

/* The sum over comm's members of their world ranks (an allreduce the MPI does). */
static int rank_sum(MPI_Comm comm, int rank)
{
	int sum = 0;
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
	return sum;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, n = argc > 1 ? atoi(argv[1]) : 300, bad = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm comms[4];
	MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &comms[0]);
	MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
	MPI_Comm_split(comms[1], rank % 3, -rank, &comms[2]);
	comms[3] = MPI_COMM_WORLD;
	int sums[4], sizes[4];
	for (int c = 0; c < 4; c++) {
		sums[c] = rank_sum(comms[c], rank);
		MPI_Comm_size(comms[c], &sizes[c]);
	}
	for (int i = 0; i < n; i++) {
		int c = i % 4, x = rank + i, y = -1;
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comms[c]);
		bad |= y != sums[c] + sizes[c] * i;
		if (i % 100 == 50) {
			MPI_Comm a, b;
			MPI_Comm_dup(comms[0], &a);
			MPI_Comm_dup(comms[1], &b);
			bad |= rank_sum(a, rank) != sums[0] || rank_sum(b, rank) != sums[1];
			if (rank % 2) {
				MPI_Comm_free(&a);
				MPI_Comm_free(&b);
			} else {
				MPI_Comm_free(&b);
				MPI_Comm_free(&a);
			}
		}
	}
	int any = 0;
	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf(any ? "wrong results\n" : "ok %d\n", n);
	for (int c = 2; c >= 0; c--)
		MPI_Comm_free(&comms[c]);
	MPI_Finalize();
	return any;
}
