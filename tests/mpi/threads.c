/* MPI_THREAD_MULTIPLE: two threads per rank, each with its own communicator, call collectives
 * at the same time from two different call sites, and then from one call site that both share
 * (a library called from several threads). Knows nothing of noisetool. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static long n = 2000;
static MPI_Comm comms[2];
static double results[2];

/* Two functions, so that the compiler cannot merge the two calls into one call instruction. */
static __attribute__((noinline)) double loop_a(double x)
{
	double y = 0;
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comms[0]); /* site A */
	return y;
}

static __attribute__((noinline)) double loop_b(double x)
{
	double y = 0;
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, comms[1]); /* site B */
	return y;
}

/* Called by both threads, each on its own communicator: one call site, two threads at once. */
static __attribute__((noinline)) double loop_shared(double x, MPI_Comm comm)
{
	double y = 0;
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm); /* site S */
	return y;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	results[id] = id == 0 ? loop_a(id + 1) : loop_b(id + 1);
	results[id] += loop_shared(id + 1, comms[id]);
	return NULL;
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
		n = atol(argv[1]);
	MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
	MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		printf("result %.1f %.1f\n", results[0], results[1]);
	MPI_Comm_free(&comms[0]);
	MPI_Comm_free(&comms[1]);
	MPI_Finalize();
	return 0;
}
