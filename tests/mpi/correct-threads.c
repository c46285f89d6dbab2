/* MPI_THREAD_MULTIPLE: four threads per rank call MPI_Allreduce from one call site, each on its
 * own communicator (one of them resets the tool's aggregates with MPI_Pcontrol(2) meanwhile);
 * then each thread creates a fresh communicator of its own and runs different
 * collectives on it. Exits 77 when the library does not provide MPI_THREAD_MULTIPLE. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "correct.h"

enum { THREADS = 4 };

static int rank, iterations = 100;
static MPI_Comm comms[THREADS];
static long results[THREADS], fresh_results[THREADS];

/* The one call site every thread goes through. */
static __attribute__((noinline)) long one_site(MPI_Comm comm, int x)
{
	long mine = x, sum = 0;
	MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm);
	return sum;
}

static void *same_site(void *arg)
{
	int t = (int)(long)arg;
	long total = 0;
	for (int i = 0; i < iterations; i++) {
		total += one_site(comms[t], rank + t + i);
		if (t == 0 && i == iterations / 2)
			MPI_Pcontrol(2); /* mpiP's "reset": while the other threads call the site */
	}
	results[t] = total;
	return NULL;
}

/* Each thread: a fresh communicator made from its own, then that thread's own collectives. */
static void *own_comm(void *arg)
{
	int t = (int)(long)arg;
	MPI_Comm c;
	if (t % 2 == 0)
		MPI_Comm_dup(comms[t], &c);
	else
		MPI_Comm_split(comms[t], 0, -rank, &c);
	long total = 0;
	for (int i = 0; i < iterations / 4; i++) {
		long v = rank + i, out = 0;
		MPI_Request r;
		switch (t) {
		case 0:
			v = rank == 0 ? i : -1;
			MPI_Bcast(&v, 1, MPI_LONG, 0, c);
			out = v;
			break;
		case 1: /* the first collective on this one is nonblocking */
			MPI_Iallreduce(&v, &out, 1, MPI_LONG, MPI_MAX, c, &r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
			break;
		case 2:
			MPI_Barrier(c);
			MPI_Allreduce(&v, &out, 1, MPI_LONG, MPI_MIN, c);
			break;
		default:
			MPI_Ibarrier(c, &r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
			MPI_Scan(&v, &out, 1, MPI_LONG, MPI_SUM, c);
			break;
		}
		total += out;
	}
	fresh_results[t] = total;
	MPI_Comm_free(&c);
	return NULL;
}

static void run_threads(void *(*fn)(void *))
{
	pthread_t th[THREADS];
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, fn, (void *)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided < MPI_THREAD_MULTIPLE) {
		fprintf(stderr, "no MPI_THREAD_MULTIPLE\n");
		MPI_Finalize();
		return 77;
	}
	if (argc > 1)
		iterations = atoi(argv[1]);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int t = 0; t < THREADS; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
	run_threads(same_site);
	run_threads(own_comm);
	char what[64];
	for (int t = 0; t < THREADS; t++) {
		snprintf(what, sizeof what, "threads one site, thread %d", t);
		ct_report(what, results[t]);
	}
	for (int t = 0; t < THREADS; t++) {
		snprintf(what, sizeof what, "threads own communicator, thread %d", t);
		ct_report(what, fresh_results[t]);
	}
	for (int t = 0; t < THREADS; t++)
		MPI_Comm_free(&comms[t]);
	MPI_Finalize();
	return 0;
}
