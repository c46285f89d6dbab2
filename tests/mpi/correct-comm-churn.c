/* 2,000 communicators created and freed one after the other (dup, split, create, idup,
 * dup_with_info in turn), a collective on each, so handles and context ids are reused; then
 * 1,000 alive at once (MPICH has 2,048 context ids), a collective on each, freed in reverse.
 * Every third is released by MPI_Comm_disconnect instead of MPI_Comm_free: a tool that keeps
 * a copy of each communicator must let go of it either way (2,000 copies kept would exhaust
 * MPICH's context ids). */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "correct.h"
#include "peak-rss.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	MPI_Group world_group;
	MPI_Comm_group(MPI_COMM_WORLD, &world_group);
	long total = 0;
	for (int i = 0; i < n; i++) {
		MPI_Comm c;
		MPI_Request r;
		switch (i % 5) {
		case 0:
			MPI_Comm_dup(MPI_COMM_WORLD, &c);
			break;
		case 1:
			MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &c);
			break;
		case 2:
			MPI_Comm_create(MPI_COMM_WORLD, world_group, &c);
			break;
		case 3:
			MPI_Comm_idup(MPI_COMM_WORLD, &c, &r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
			break;
		default:
			MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &c);
			break;
		}
		int x = rank + i, sum = 0;
		if (i % 2 == 0) {
			MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c);
		} else { /* the first collective on this one is nonblocking */
			MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c, &r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
		total += sum;
		if (i % 3 == 2)
			MPI_Comm_disconnect(&c);
		else
			MPI_Comm_free(&c);
	}
	MPI_Group_free(&world_group);
	ct_report("comm-churn communicators", n);
	ct_report("comm-churn total", total);

	int held = n / 2;
	MPI_Comm *comms = malloc(held * sizeof *comms);
	for (int i = 0; i < held; i++)
		MPI_Comm_dup(i ? comms[i - 1] : MPI_COMM_WORLD, &comms[i]);
	total = 0;
	for (int i = held - 1; i >= 0; i--) {
		int x = rank * i, max = 0;
		MPI_Allreduce(&x, &max, 1, MPI_INT, MPI_MAX, comms[i]);
		total += max;
	}
	for (int i = held - 1; i >= 0; i--)
		if (i % 3 == 2)
			MPI_Comm_disconnect(&comms[i]);
		else
			MPI_Comm_free(&comms[i]);
	free(comms);
	ct_report("comm-churn held at once", held);
	ct_report("comm-churn held total", total);
	MPI_Finalize();
	fprintf(stderr, "rank %d peak-rss-kb %ld\n", rank, peak_rss_kb()); /* test-comm-churn.sh */
	return 0;
}
