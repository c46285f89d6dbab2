/* 1,000 requests completed together: point-to-point Isend/Irecv pairs (one of 1 MiB), a few
 * MPI_REQUEST_NULL, and nonblocking collectives on fresh communicators (started in a different
 * order on even and odd ranks) at index 500 and from 995 on, completed by MPI_Waitall, by an
 * MPI_Waitsome loop and by an MPI_Testany loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "correct.h"

enum { N = 1000, FIRST_COLL = 995, MID_COLL = 500 };

struct batch {
	MPI_Request req[N];
	int out[N], in[N];
	int *big_out, *big_in;
	MPI_Comm a, b;
	int sum, max, root_value, mid_sum;
	int x; /* the send buffer of the allreduces: it must live until they complete */
};

/* Fill the request array. The peer is the partner rank (or this rank itself when it has none,
 * nonblocking messages to oneself being fine). */
static void post(struct batch *bt, int round)
{
	int rank, peer = ct_partner(MPI_COMM_WORLD);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (peer < 0)
		peer = rank;
	MPI_Comm_dup(MPI_COMM_WORLD, &bt->a);
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &bt->b);
	for (int i = 0; i < N; i++) {
		bt->out[i] = rank * 100000 + round * 1000 + i;
		bt->in[i] = -1;
		bt->req[i] = MPI_REQUEST_NULL;
	}
	for (int i = 0; i < CT_BIG_INTS; i++)
		bt->big_out[i] = (rank + i) & 0xff;
	MPI_Irecv(bt->big_in, CT_BIG_INTS, MPI_INT, peer, N, MPI_COMM_WORLD, &bt->req[0]);
	MPI_Isend(bt->big_out, CT_BIG_INTS, MPI_INT, peer, N, MPI_COMM_WORLD, &bt->req[1]);
	for (int i = 2; i < FIRST_COLL; i += 2) {
		if (i == MID_COLL || i % 97 == 0) /* left as MPI_REQUEST_NULL (or a collective) */
			continue;
		MPI_Irecv(&bt->in[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &bt->req[i]);
		MPI_Isend(&bt->out[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &bt->req[i + 1]);
	}
	int *x = &bt->x;
	*x = rank + round;
	bt->root_value = rank == 0 ? 4000 + round : -1;
	/* Even ranks start B's before A's, odd ranks A's before B's. */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == rank % 2) {
			MPI_Iallreduce(x, &bt->mid_sum, 1, MPI_INT, MPI_SUM, bt->b,
				       &bt->req[MID_COLL]);
			MPI_Ibcast(&bt->root_value, 1, MPI_INT, 0, bt->b, &bt->req[FIRST_COLL + 2]);
		} else {
			MPI_Ibarrier(bt->a, &bt->req[FIRST_COLL]);
			MPI_Iallreduce(x, &bt->sum, 1, MPI_INT, MPI_SUM, bt->a,
				       &bt->req[FIRST_COLL + 1]);
		}
	}
	MPI_Iallreduce(x, &bt->max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &bt->req[FIRST_COLL + 3]);
	MPI_Ibarrier(MPI_COMM_WORLD, &bt->req[FIRST_COLL + 4]);
}

/* What arrived, as one number; frees the batch's communicators. */
static long collect(struct batch *bt)
{
	long sum = bt->sum + bt->max + bt->root_value + bt->mid_sum;
	for (int i = 0; i < N; i++)
		sum += bt->in[i];
	for (int i = 0; i < CT_BIG_INTS; i++)
		sum += bt->big_in[i];
	MPI_Comm_free(&bt->a);
	MPI_Comm_free(&bt->b);
	return sum;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	static struct batch bt;
	static MPI_Status st[N];
	int idx[N];
	bt.big_out = malloc(CT_BIG_INTS * sizeof(int));
	bt.big_in = malloc(CT_BIG_INTS * sizeof(int));
	long waitall = 0, waitsome = 0, testany = 0, statuses = 0;
	for (int round = 0; round < rounds; round++) {
		post(&bt, round);
		MPI_Waitall(N, bt.req, st);
		for (int i = 2; i < FIRST_COLL; i += 2) /* receives: their tags */
			if (bt.in[i] != -1)
				statuses += st[i].MPI_TAG;
		waitall += collect(&bt);

		post(&bt, round);
		for (;;) {
			int done;
			MPI_Waitsome(N, bt.req, &done, idx, st);
			if (done == MPI_UNDEFINED)
				break; /* nothing active left */
		}
		waitsome += collect(&bt);

		post(&bt, round);
		for (;;) {
			int i, flag;
			MPI_Testany(N, bt.req, &i, &flag, MPI_STATUS_IGNORE);
			if (flag && i == MPI_UNDEFINED)
				break; /* nothing active left */
		}
		testany += collect(&bt);
	}
	ct_report("waitall", waitall);
	ct_report("waitall receive tags", statuses);
	ct_report("waitsome", waitsome);
	ct_report("testany", testany);
	free(bt.big_out);
	free(bt.big_in);
	MPI_Finalize();
	return 0;
}
