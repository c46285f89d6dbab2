/* Persistent collectives (MPI 4) created on fresh communicators, started many times with
 * point-to-point (1 MiB, rendezvous) between each start and its wait; the starts on two
 * communicators come in opposite orders on even and odd ranks. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "correct.h"

#if MPI_VERSION < 4
/* MPI 3 (Open MPI 4.1) has no persistent collectives: the test skips (tests/lib.sh,
 * nt_need_mpi4) and this program only says so. */
int main(void)
{
	fprintf(stderr, "SKIP: this MPI implements MPI %d.%d; persistent collectives are MPI 4\n",
		MPI_VERSION, MPI_SUBVERSION);
	return 77;
}
#else
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int rounds = argc > 1 ? atoi(argv[1]) : 10;

	/* Every rank creates them in the same order: the _init calls are the first collectives
	 * these communicators see. */
	MPI_Comm p, q;
	MPI_Comm_dup(MPI_COMM_WORLD, &p);
	MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &q); /* ranks reversed */
	int x = 0, sum = 0, root_value = 0, y = 0, max = 0;
	MPI_Request ar, pair[2], bc;
	MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, p, MPI_INFO_NULL, &ar);
	MPI_Barrier_init(p, MPI_INFO_NULL, &pair[0]);
	MPI_Bcast_init(&root_value, 1, MPI_INT, size - 1, p, MPI_INFO_NULL, &pair[1]);
	MPI_Allreduce_init(&y, &max, 1, MPI_INT, MPI_MAX, q, MPI_INFO_NULL, &bc);

	int *big = calloc(CT_BIG_INTS, sizeof *big);
	for (int i = 0; i < CT_BIG_INTS; i++)
		big[i] = rank == 0 ? i % 1000 : 0;
	long total = 0;
	for (int round = 0; round < rounds; round++) {
		x = rank + round;
		root_value = rank == size - 1 ? 100 * round : -1;
		y = rank * round;

		MPI_Start(&ar);
		long got = ct_exchange(MPI_COMM_WORLD, round);
		MPI_Wait(&ar, MPI_STATUS_IGNORE);

		MPI_Status st[2];
		MPI_Startall(2, pair);
		got += ct_exchange(q, round);
		MPI_Waitall(2, pair, st);

		/* Opposite start orders on the two communicators, one wait for both. */
		MPI_Request both[2];
		if (rank % 2 == 0) {
			MPI_Start(&ar);
			MPI_Start(&bc);
			both[0] = ar;
			both[1] = bc;
		} else {
			MPI_Start(&bc);
			MPI_Start(&ar);
			both[0] = bc;
			both[1] = ar;
		}
		got += ct_exchange(p, round);
		MPI_Waitall(2, both, st);
		total += got + 2 * sum + root_value + max;

		/* Skewed: the higher rank of a pair receives 1 MiB before its start. */
		int peer = ct_partner(MPI_COMM_WORLD);
		if (peer < 0 || rank < peer) {
			MPI_Start(&ar);
			if (peer >= 0)
				MPI_Send(big, CT_BIG_INTS, MPI_INT, peer, 5, MPI_COMM_WORLD);
		} else {
			MPI_Recv(big, CT_BIG_INTS, MPI_INT, peer, 5, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Start(&ar);
		}
		MPI_Wait(&ar, MPI_STATUS_IGNORE);
		total += sum + big[round];
	}
	ct_report("persistent total", total);
	free(big);
	MPI_Request_free(&ar);
	MPI_Request_free(&pair[0]);
	MPI_Request_free(&pair[1]);
	MPI_Request_free(&bc);
	MPI_Comm_free(&p);
	MPI_Comm_free(&q);
	MPI_Finalize();
	return 0;
}
#endif
