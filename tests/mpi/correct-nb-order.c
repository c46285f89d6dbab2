/* Nonblocking collectives on fresh communicators, started in different orders on different
 * ranks: even ranks start theirs on A before B, odd ranks on B before A, then one MPI_Waitall.
 * The first collective each new communicator sees is a nonblocking one. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "correct.h"

/* Start this communicator's two operations (always in the same order on every rank). */
static void start_a(MPI_Comm a, const int *x, int *sum, MPI_Request *r)
{
	MPI_Ibarrier(a, &r[0]);
	MPI_Iallreduce(x, sum, 1, MPI_INT, MPI_SUM, a, &r[1]);
}

static void start_b(MPI_Comm b, const int *x, int *max, int *root_value, MPI_Request *r)
{
	MPI_Iallreduce(x, max, 1, MPI_INT, MPI_MAX, b, &r[0]);
	MPI_Ibcast(root_value, 1, MPI_INT, 0, b, &r[1]);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	long total = 0;
	MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
	for (int round = 0; round < rounds; round++) {
		/* Fresh communicators every four rounds; in between, the same ones again. */
		if (round % 4 == 0) {
			if (a != MPI_COMM_NULL) {
				MPI_Comm_free(&a);
				MPI_Comm_free(&b);
			}
			MPI_Comm_dup(MPI_COMM_WORLD, &a);
			if (round % 8 == 0)
				MPI_Comm_dup(MPI_COMM_WORLD, &b);
			else
				MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &b);
		}
		int x = rank + round, sum = 0, max = 0, root_value = rank == 0 ? 1000 + round : -1;
		MPI_Request r[4];
		MPI_Status st[4];
		if (rank % 2 == 0) {
			start_a(a, &x, &sum, &r[0]);
			start_b(b, &x, &max, &root_value, &r[2]);
		} else {
			start_b(b, &x, &max, &root_value, &r[2]);
			start_a(a, &x, &sum, &r[0]);
		}
		MPI_Waitall(4, r, st);
		total += sum + max + root_value;
	}
	if (a != MPI_COMM_NULL) {
		MPI_Comm_free(&a);
		MPI_Comm_free(&b);
	}
	ct_report("nb-order total", total);

	/* Two fresh communicators whose only collectives are nonblocking ones completed in the
	 * opposite order: even ranks wait for C's then D's, odd ranks D's then C's. */
	MPI_Comm c, d;
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_dup(MPI_COMM_WORLD, &d);
	int x = rank + 1, on_c = 0, on_d = 0;
	MPI_Request rc, rd;
	if (rank % 2 == 0) {
		MPI_Iallreduce(&x, &on_c, 1, MPI_INT, MPI_SUM, c, &rc);
		MPI_Wait(&rc, MPI_STATUS_IGNORE);
		MPI_Iallreduce(&x, &on_d, 1, MPI_INT, MPI_PROD, d, &rd);
		MPI_Wait(&rd, MPI_STATUS_IGNORE);
	} else {
		MPI_Iallreduce(&x, &on_d, 1, MPI_INT, MPI_PROD, d, &rd);
		MPI_Iallreduce(&x, &on_c, 1, MPI_INT, MPI_SUM, c, &rc);
		MPI_Wait(&rd, MPI_STATUS_IGNORE);
		MPI_Wait(&rc, MPI_STATUS_IGNORE);
	}
	ct_report("nb-order sum on c", on_c);
	ct_report("nb-order product on d", on_d);
	MPI_Comm_free(&c);
	MPI_Comm_free(&d);
	MPI_Finalize();
	return 0;
}
