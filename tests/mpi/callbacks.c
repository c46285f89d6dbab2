/* A program that gives MPI a callback which calls MPI, run inside a test call: a generalized
 * request whose query function calls MPI_Testany (on a null request: it finds nothing at
 * once). First POLLS probes that find nothing (MPI_Iprobe, one site) with no callback yet; then
 * REQUESTS generalized requests, each completed and then tested once with MPI_Test (one site),
 * which runs its query function; then POLLS probes more at the first site. Knows nothing of
 * noisetool; prints its own counts: probes, tests, and the calls its query function made.
 *
 *   callbacks [POLLS=5000 [REQUESTS=300]]
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static long nested; /* the MPI calls the query function made */

static int query(void *extra, MPI_Status *status)
{
	(void)extra;
	MPI_Request none = MPI_REQUEST_NULL;
	int index, flag;
	MPI_Testany(1, &none, &index, &flag, MPI_STATUS_IGNORE); /* a call from inside MPI_Test */
	nested++;
	MPI_Status_set_elements(status, MPI_BYTE, 0);
	MPI_Status_set_cancelled(status, 0);
	status->MPI_SOURCE = MPI_UNDEFINED;
	status->MPI_TAG = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

static int release(void *extra)
{
	(void)extra;
	return MPI_SUCCESS;
}

static int cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

static long probe(long n)
{
	long found = 0;
	for (long i = 0; i < n; i++) {
		int flag = 0;
		MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		found += flag; /* nothing is ever sent with tag 99 */
	}
	return found;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long polls = argc > 1 ? atol(argv[1]) : 5000, requests = argc > 2 ? atol(argv[2]) : 300;
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long found = probe(polls), tests = 0;
	for (long i = 0; i < requests; i++) {
		MPI_Request r;
		MPI_Grequest_start(query, release, cancel, NULL, &r);
		MPI_Grequest_complete(r);
		int flag = 0;
		while (!flag) {
			MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
			tests++;
		}
	}
	found += probe(polls);
	printf("rank %d probes %ld found %ld tests %ld nested %ld\n", rank, 2 * polls, found, tests,
	       nested);
	MPI_Finalize();
	return 0;
}
