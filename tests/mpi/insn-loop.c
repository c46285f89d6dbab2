/* The instruction test's MPI program (test-insn.sh): one rank, CALLS calls of KIND in a loop,
 * after as many to warm every cache up; under callgrind, the counts are zeroed before the loop
 * and dumped after it (valgrind's client requests: nothing outside valgrind), so that the dump
 * holds the loop alone. Each kind pairs the wrapped call it measures with unwrapped ones
 * (PMPI_, or calls no wrapper sees) that feed it:
 *   allreduce  MPI_Allreduce, 8 bytes, on MPI_COMM_WORLD
 *   send       MPI_Send of 8 bytes to itself, into an MPI_Irecv posted before, PMPI_Wait
 *   recv       PMPI_Isend of 8 bytes to itself, MPI_Recv, PMPI_Wait
 *   wait       MPI_Irecv, PMPI_Send to itself, MPI_Wait
 *   test       MPI_Test of a receive that never completes (an unsuccessful test)
 *   iprobe     MPI_Iprobe for a message never sent (an unsuccessful probe)
 * Knows nothing of noisetool.
 *
 *   insn-loop KIND CALLS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#if __has_include(<valgrind/callgrind.h>) /* Debian's valgrind; without it the test skips */
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(what)
#endif

static double in = 1, out;

/* CALLS calls of kind. */
static __attribute__((noinline)) int insn_loop(const char *kind, long calls)
{
	MPI_Request r, q;
	int flag = 0;
	if (!strcmp(kind, "allreduce")) {
		for (long i = 0; i < calls; i++)
			MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	} else if (!strcmp(kind, "send")) {
		for (long i = 0; i < calls; i++) {
			MPI_Irecv(&out, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &r);
			MPI_Send(&in, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
			PMPI_Wait(&r, MPI_STATUS_IGNORE);
		}
	} else if (!strcmp(kind, "recv")) {
		for (long i = 0; i < calls; i++) {
			PMPI_Isend(&in, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &q);
			MPI_Recv(&out, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			PMPI_Wait(&q, MPI_STATUS_IGNORE);
		}
	} else if (!strcmp(kind, "wait")) {
		for (long i = 0; i < calls; i++) {
			MPI_Irecv(&out, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &r);
			PMPI_Send(&in, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
	} else if (!strcmp(kind, "test")) {
		MPI_Irecv(&out, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &r); /* tag 2: never sent */
		for (long i = 0; i < calls && !flag; i++)
			MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
		if (!flag) {
			PMPI_Cancel(&r);
			PMPI_Wait(&r, MPI_STATUS_IGNORE);
		}
	} else if (!strcmp(kind, "iprobe")) {
		for (long i = 0; i < calls && !flag; i++)
			MPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); /* tag 2: never sent */
	} else {
		return -1;
	}
	return flag;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: insn-loop allreduce|send|recv|wait|test|iprobe CALLS\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	int size;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long calls = atol(argv[2]);
	/* The first calls find their sites and fill the caches: not counted. */
	int rc = size == 1 ? insn_loop(argv[1], calls) : -2;
	if (rc == 0) {
		CALLGRIND_ZERO_STATS;
		rc = insn_loop(argv[1], calls);
		CALLGRIND_DUMP_STATS_AT("loop");
	}
	MPI_Finalize();
	if (rc < 0)
		fprintf(stderr, "insn-loop: %s\n", rc == -2 ? "one rank only" : "unknown kind");
	else if (rc > 0)
		fprintf(stderr, "insn-loop: the test completed\n");
	return rc == 0 ? 0 : 1;
}
