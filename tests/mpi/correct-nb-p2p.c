/* Point-to-point between a nonblocking collective's start and its wait, the collective being the
 * first on a fresh communicator; with a 1 MiB message (rendezvous) the ranks depend on each
 * other, and in the skewed rounds one rank is inside MPI_Recv before it starts the collective. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "correct.h"

/* Both ranks start the collective, then exchange 1 MiB on MPI_COMM_WORLD, then wait. */
static long symmetric(int round)
{
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm f;
	MPI_Comm_dup(MPI_COMM_WORLD, &f);
	int x = rank + round, sum = 0;
	MPI_Request r;
	MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, f, &r);
	long got = ct_exchange(MPI_COMM_WORLD, round);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Comm_free(&f);
	return got + sum;
}

/* The lower rank of a pair starts the collective and sends 1 MiB; the higher rank receives it
 * first and starts the collective only then: a tool that made the start wait for the other
 * ranks would deadlock here. */
static long skewed(int round)
{
	int rank, peer = ct_partner(MPI_COMM_WORLD);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm g;
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &g);
	int *buf = malloc(CT_BIG_INTS * sizeof *buf);
	for (int i = 0; i < CT_BIG_INTS; i++)
		buf[i] = (rank + i + round) & 0xff;
	int x = rank + round, max = 0;
	MPI_Request r;
	if (peer < 0) {
		MPI_Iallreduce(&x, &max, 1, MPI_INT, MPI_MAX, g, &r);
	} else if (rank < peer) {
		MPI_Iallreduce(&x, &max, 1, MPI_INT, MPI_MAX, g, &r);
		MPI_Send(buf, CT_BIG_INTS, MPI_INT, peer, 1, MPI_COMM_WORLD);
		MPI_Recv(buf, CT_BIG_INTS, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(buf, CT_BIG_INTS, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Iallreduce(&x, &max, 1, MPI_INT, MPI_MAX, g, &r);
		MPI_Send(buf, CT_BIG_INTS, MPI_INT, peer, 2, MPI_COMM_WORLD);
	}
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	long got = 0;
	for (int i = 0; i < CT_BIG_INTS; i++)
		got += buf[i];
	free(buf);
	MPI_Comm_free(&g);
	return got + max;
}

/* Point-to-point on the very communicator whose nonblocking collective is pending. */
static long same_comm(int round)
{
	int rank, peer = ct_partner(MPI_COMM_WORLD);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm h;
	MPI_Comm_dup(MPI_COMM_WORLD, &h);
	int root_value = rank == 0 ? 500 + round : 0, back = -1;
	MPI_Request r;
	MPI_Ibcast(&root_value, 1, MPI_INT, 0, h, &r);
	if (peer >= 0)
		MPI_Sendrecv(&rank, 1, MPI_INT, peer, 3, &back, 1, MPI_INT, peer, 3, h,
			     MPI_STATUS_IGNORE);
	long got = ct_exchange(h, round);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Comm_free(&h);
	return got + back + root_value;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	long a = 0, b = 0, c = 0;
	for (int round = 0; round < rounds; round++) {
		a += symmetric(round);
		b += skewed(round);
		c += same_comm(round);
	}
	ct_report("nb-p2p symmetric", a);
	ct_report("nb-p2p skewed", b);
	ct_report("nb-p2p same communicator", c);
	MPI_Finalize();
	return 0;
}
