/* The LogGP calibration behind `noisetool simulate --calibrate`: a 2-rank MPI ping-pong that
 * measures o (send and receive overhead), L, G (slope over 8 B..1 MiB) and g (a burst of
 * back-to-back small sends) and prints the matching `--loggp L,o,g,G` line (doc/simulate.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#define REPS 2000  /* samples per small-message measurement */
#define BURST 256  /* back-to-back sends per g sample */
#define MAX_BYTES (1u << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The cost of one clock read, subtracted from every timed call. */
static double clock_cost_ns(void)
{
	double s[64];
	for (int i = 0; i < 64; i++) {
		uint64_t t0 = now_ns();
		for (int k = 0; k < 100; k++)
			(void)now_ns();
		s[i] = (double)(now_ns() - t0) / 101.0;
	}
	return median(s, 64);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "loggp-pingpong: needs exactly 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	int peer = 1 - rank;
	char *buf = calloc(MAX_BYTES, 1);
	double *s = calloc(REPS, sizeof *s);
	if (!buf || !s)
		MPI_Abort(MPI_COMM_WORLD, 1);
	double clk = clock_cost_ns();

	/* Warm-up, every size once. */
	for (int i = 0; i < 200; i++) {
		for (unsigned k = 8; k <= MAX_BYTES; k *= 8) {
			if (rank == 0) {
				MPI_Send(buf, (int)k, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
				MPI_Recv(buf, (int)k, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(buf, (int)k, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, (int)k, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			}
		}
	}

	/* o_send: the time MPI_Send of 8 bytes (eager) takes on the sender, inside a ping-pong. */
	for (int i = 0; i < REPS; i++) {
		if (rank == 0) {
			uint64_t t0 = now_ns();
			MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			s[i] = (double)(now_ns() - t0) - clk;
			MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
	}
	double o_send = rank == 0 ? median(s, REPS) : 0;

	/* o_recv: MPI_Recv of a message that has certainly arrived (the receiver waited 20 us). */
	for (int i = 0; i < REPS; i++) {
		if (rank == 1) {
			MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			spin_ns(20000);
			uint64_t t0 = now_ns();
			MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			s[i] = (double)(now_ns() - t0) - clk;
			MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
	}
	double o_recv = rank == 0 ? median(s, REPS) : 0;

	/* Half round trip per size: 8 B .. 1 MiB, powers of 2. */
	enum { NSIZES = 18 };
	double sizes[NSIZES], half[NSIZES];
	int nsz = 0;
	for (unsigned k = 8; k <= MAX_BYTES; k *= 2) {
		int reps = k <= 4096 ? REPS : 200;
		for (int i = 0; i < reps; i++) {
			if (rank == 0) {
				uint64_t t0 = now_ns();
				MPI_Send(buf, (int)k, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
				MPI_Recv(buf, (int)k, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				s[i] = (double)(now_ns() - t0) / 2;
			} else {
				MPI_Recv(buf, (int)k, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, (int)k, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			}
		}
		if (rank == 0 && nsz < NSIZES) {
			sizes[nsz] = k;
			half[nsz] = median(s, reps);
			nsz++;
		}
	}

	/* g: BURST back-to-back 8-byte sends, then one acknowledgement; the interval per message
	 * once the round trip of the acknowledgement is taken off. */
	int gre = 200;
	for (int i = 0; i < gre; i++) {
		if (rank == 0) {
			uint64_t t0 = now_ns();
			for (int b = 0; b < BURST; b++)
				MPI_Send(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			s[i] = (double)(now_ns() - t0);
		} else {
			for (int b = 0; b < BURST; b++)
				MPI_Recv(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
		}
	}

	double burst = rank == 0 ? median(s, gre) : 0;

	/* For comparison with the model (2o + L): an 8-byte MPI_Allreduce. */
	for (int i = 0; i < REPS; i++) {
		uint64_t t0 = now_ns();
		MPI_Allreduce(MPI_IN_PLACE, buf, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		s[i] = (double)(now_ns() - t0) - clk;
	}
	double allreduce = median(s, REPS);

	if (rank == 0) {
		double o = (o_send + o_recv) / 2;
		double L = half[0] - 2 * o;
		/* Least-squares slope of the half round trip against the size. */
		double mx = 0, my = 0, sxx = 0, sxy = 0;
		for (int i = 0; i < nsz; i++) {
			mx += sizes[i];
			my += half[i];
		}
		mx /= nsz;
		my /= nsz;
		for (int i = 0; i < nsz; i++) {
			sxx += (sizes[i] - mx) * (sizes[i] - mx);
			sxy += (sizes[i] - mx) * (half[i] - my);
		}
		double G = sxy / sxx;
		double g = (burst - 2 * half[0]) / BURST;
		if (L < 0)
			L = 0;
		if (g < 0)
			g = 0;
		printf("clock read %.1f ns; o_send %.1f ns, o_recv %.1f ns\n", clk, o_send, o_recv);
		for (int i = 0; i < nsz; i++)
			printf("half round trip %8.0f B: %10.1f ns\n", sizes[i], half[i]);
		printf("burst of %d sends: %.1f ns per message\n", BURST, burst / BURST);
		printf("8-byte MPI_Allreduce: %.1f ns (the model's 2o + L: %.1f ns)\n", allreduce,
		       2 * o + L);
		printf("--loggp %.0f,%.0f,%.0f,%.4f\n", L, o, g, G);
	}
	free(buf);
	free(s);
	MPI_Finalize();
	return 0;
}
