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

/* NAME(rank, buf, bytes, n): n round trips of `bytes` bytes between ranks 0 and 1, blocking, as
 * NetPIPE's MPI module does (rank 0 sends first), through SEND and RECV. A macro, so that both
 * loops call MPI directly. */
#define PINGPONG(NAME, SEND, RECV)                                                              \
	static void NAME(int rank, char *buf, int bytes, int n)                                 \
	{                                                                                       \
		for (int i = 0; i < n; i++) {                                                   \
			if (rank == 0) {                                                        \
				SEND(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);               \
				RECV(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD,                \
				     MPI_STATUS_IGNORE);                                        \
			} else {                                                                \
				RECV(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD,                \
				     MPI_STATUS_IGNORE);                                        \
				SEND(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);               \
			}                                                                       \
		}                                                                               \
	}
PINGPONG(pingpong, MPI_Send, MPI_Recv)
/* The same through PMPI, which no wrapper sees: the reference. */
PINGPONG(pingpong_ref, PMPI_Send, PMPI_Recv)

/* p2p-loop [BATCHES [ROUND_TRIPS_PER_BATCH [ref]]]: one clock read per batch, so that timing
 * the loop does not dilute the wrappers' cost. With "ref", each batch follows a reference batch
 * through PMPI, and rank 0 also prints the median reference latency and the median over batches
 * of (batch / its reference): the VM's speed states, seconds to minutes each, cancel in it
 * (overhead-loop.c). */
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
	int ref = argc > 3 && strcmp(argv[3], "ref") == 0;
	double *t_ns = malloc((size_t)batches * sizeof *t_ns);
	double *r_ns = malloc((size_t)batches * sizeof *r_ns);
	double *q = malloc((size_t)batches * sizeof *q);
	char buf[MAX_BYTES];
	memset(buf, 0x5a, sizeof buf);
	for (int bytes = 1; bytes <= MAX_BYTES; bytes *= 2) {
		pingpong(rank, buf, bytes, WARMUP);
		MPI_Barrier(MPI_COMM_WORLD);
		for (int b = 0; b < batches; b++) {
			double t0_ns = now_ns();
			if (ref) {
				pingpong_ref(rank, buf, bytes, per_batch);
				double t1_ns = now_ns();
				r_ns[b] = (t1_ns - t0_ns) / (2.0 * per_batch);
				t0_ns = t1_ns;
			}
			pingpong(rank, buf, bytes, per_batch);
			t_ns[b] = (now_ns() - t0_ns) / (2.0 * per_batch);
			if (ref)
				q[b] = t_ns[b] / r_ns[b];
		}
		if (rank == 0) {
			printf("size_bytes %d median_one_way_ns %.2f", bytes,
			       median(t_ns, (size_t)batches));
			if (ref)
				printf(" median_reference_ns %.2f median_ratio_to_reference %.4f",
				       median(r_ns, (size_t)batches), median(q, (size_t)batches));
			printf("\n");
			fflush(stdout);
		}
	}
	free(t_ns);
	free(r_ns);
	free(q);
	MPI_Finalize();
	return 0;
}
