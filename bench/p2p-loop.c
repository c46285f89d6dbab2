/* The point-to-point latency benchmark's MPI program, NetPIPE-style: a 2-rank blocking
 * MPI_Send/MPI_Recv ping-pong of 1 to 64 bytes; rank 0 prints, per size, the median one-way
 * latency (half a round trip) over batches of round trips. Knows nothing of noisetool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "batch-median.h"

enum { WARMUP = 1000, MAX_BYTES = 64 };

/* n round trips of `bytes` bytes between ranks 0 and 1, blocking, as NetPIPE's MPI module
 * does (rank 0 sends first). */
static void pingpong(int rank, char *buf, int bytes, int n)
{
	for (int i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
}

/* p2p-loop [BATCHES [ROUND_TRIPS_PER_BATCH]]: one clock read per batch, so that timing the
 * loop does not dilute the wrappers' cost. */
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "p2p-loop: needs exactly 2 ranks, has %d\n", size);
		MPI_Finalize();
		return 2;
	}
	int batches = argc > 1 ? atoi(argv[1]) : 1000;
	int per_batch = argc > 2 ? atoi(argv[2]) : 100;
	if (batches < 1)
		batches = 1;
	if (per_batch < 1)
		per_batch = 1;
	double *t_ns = malloc((size_t)batches * sizeof *t_ns);
	char buf[MAX_BYTES];
	memset(buf, 0x5a, sizeof buf);
	for (int bytes = 1; bytes <= MAX_BYTES; bytes *= 2) {
		pingpong(rank, buf, bytes, WARMUP);
		MPI_Barrier(MPI_COMM_WORLD);
		for (int b = 0; b < batches; b++) {
			double t0_ns = now_ns();
			pingpong(rank, buf, bytes, per_batch);
			t_ns[b] = (now_ns() - t0_ns) / (2.0 * per_batch);
		}
		if (rank == 0) {
			printf("size_bytes %d median_one_way_ns %.2f\n", bytes,
			       median(t_ns, (size_t)batches));
			fflush(stdout);
		}
	}
	free(t_ns);
	MPI_Finalize();
	return 0;
}
