/* Shared by the correct-*.c programs (correct MPI that a careless tool would break): rank 0
 * prints one value per rank in rank order, and a point-to-point exchange with a 1 MiB message,
 * which MPICH sends by rendezvous, so that the two ranks really wait for each other. */
#ifndef TESTS_MPI_CORRECT_H
#define TESTS_MPI_CORRECT_H

#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

enum { CT_BIG_INTS = (1 << 20) / sizeof(int) }; /* 1 MiB: far above any eager limit */

/* Collective on MPI_COMM_WORLD: rank 0 prints "WHAT: v0 v1 ..." with every rank's V. */
static inline void ct_report(const char *what, long v)
{
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long *all = rank == 0 ? malloc(size * sizeof *all) : NULL;
	MPI_Gather(&v, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("%s:", what);
		for (int i = 0; i < size; i++)
			printf(" %ld", all[i]);
		printf("\n");
		fflush(stdout);
		free(all);
	}
}

/* The partner of RANK in COMM for pairwise exchanges (0-1, 2-3, ...), or -1 for the last rank
 * of an odd-sized communicator. */
static inline int ct_partner(MPI_Comm comm)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int peer = rank ^ 1;
	return peer < size ? peer : -1;
}

/* Blocking exchange with the partner on COMM: the lower rank sends 1 MiB then receives it back
 * doubled, the higher receives, doubles and sends back. Returns a checksum of what came back to
 * this rank (the same on every run), 0 without a partner. */
static inline long ct_exchange(MPI_Comm comm, int seed)
{
	int rank, peer = ct_partner(comm);
	MPI_Comm_rank(comm, &rank);
	if (peer < 0)
		return 0;
	int *buf = malloc(CT_BIG_INTS * sizeof *buf);
	long sum = 0;
	if (rank < peer) {
		for (int i = 0; i < CT_BIG_INTS; i++)
			buf[i] = (i + seed) & 0xff;
		MPI_Send(buf, CT_BIG_INTS, MPI_INT, peer, 7, comm);
		MPI_Recv(buf, CT_BIG_INTS, MPI_INT, peer, 8, comm, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(buf, CT_BIG_INTS, MPI_INT, peer, 7, comm, MPI_STATUS_IGNORE);
		for (int i = 0; i < CT_BIG_INTS; i++)
			buf[i] *= 2;
		MPI_Send(buf, CT_BIG_INTS, MPI_INT, peer, 8, comm);
	}
	for (int i = 0; i < CT_BIG_INTS; i++)
		sum += buf[i];
	free(buf);
	return sum;
}

#endif /* TESTS_MPI_CORRECT_H */
