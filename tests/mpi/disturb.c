/* Known disturbances on one rank, measured by the program itself: the ground truth of the
 * attribution matrix (bench/bench-attrib-matrix.sh, tests/mpi/test-attrib-matrix.sh). Plain MPI,
 * knows nothing of noisetool: ITERS times WORK_US of busy compute then an 8-byte MPI_Allreduce;
 * on DISTURBED_RANK, every EVERY iterations, a disturbance of KIND in the compute phase:
 *   sleep   nanosleep of AMOUNT microseconds (blocked)
 *   faults  mmap AMOUNT fresh anonymous pages, touch a byte in each 4 KiB, munmap (page faults)
 *   extra   AMOUNT microseconds more of the same compute (extra work)
 *   none    nothing (the disturbance comes from outside: an injector, a CPU hog)
 *   idle    no compute at all on DISTURBED_RANK: it waits inside every allreduce for the
 *           others, so that a CPU hog on its CPU lands inside the collectives, where it holds
 *           the others up when they arrive (EVERY and AMOUNT unused)
 * Rank 0 prints the result ("result S"); every rank prints to stderr
 * "disturb rank R kind K events N measured_ns T", T the wall time of its disturbances.
 * The compute is a fixed count of dependent multiply-adds (rank 0's calibration, the fastest of
 * 5 tries, for every rank), not a spin until a time: a spin on the clock absorbs whatever stops
 * it before its end (bench attrib-matrix: 200 us detours every 5 ms delayed the job by 15 ms of
 * the 42 ms spun, with 200 us spins).
 *
 *   disturb ITERS WORK_US KIND DISTURBED_RANK EVERY AMOUNT */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <mpi.h>

#define PAGE_BYTES 4096

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static volatile double sink;

/* n dependent multiply-adds: a fixed amount of work, however long it takes. */
static void work(long n)
{
	double x = 1;
	for (long i = 0; i < n; i++)
		x = x * 1.0000001 + 1e-9;
	sink = x;
}

/* How many multiply-adds of work() take a microsecond: the fastest of 5 tries. */
static double work_per_us(void)
{
	const long n = 1000000;
	int64_t best = INT64_MAX;
	for (int k = 0; k < 5; k++) {
		int64_t t0 = now_ns();
		work(n);
		int64_t t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	return best > 0 ? n * 1e3 / (double)best : 1;
}

/* AMOUNT fresh pages, each faulted in by a write, then unmapped. Huge pages are refused so that
 * every 4 KiB page is a fault of its own. Returns 0, or -1 when the mapping failed. */
static int fault_pages(long pages)
{
	size_t bytes = (size_t)pages * PAGE_BYTES;
	volatile char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	if (p == MAP_FAILED)
		return -1;
#ifdef MADV_NOHUGEPAGE
	madvise((void *)p, bytes, MADV_NOHUGEPAGE);
#endif
	for (size_t off = 0; off < bytes; off += PAGE_BYTES)
		p[off] = 1;
	munmap((void *)p, bytes);
	return 0;
}

/* One disturbance of KIND and AMOUNT, per_us multiply-adds a microsecond of extra work.
 * Returns 0, or -1 on failure. */
static int disturb(const char *kind, long amount, double per_us)
{
	if (strcmp(kind, "sleep") == 0) {
		struct timespec ts = { amount / 1000000, amount % 1000000 * 1000 };
		while (nanosleep(&ts, &ts) != 0)
			;
	} else if (strcmp(kind, "faults") == 0) {
		return fault_pages(amount);
	} else if (strcmp(kind, "extra") == 0) {
		work((long)(amount * per_us));
	}
	return 0;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	const char *kind = argc == 7 ? argv[3] : "";
	if (argc != 7 || (strcmp(kind, "sleep") && strcmp(kind, "faults") && strcmp(kind, "extra") &&
			  strcmp(kind, "none") && strcmp(kind, "idle")) || atol(argv[5]) < 1 ||
	    atol(argv[6]) < 0) {
		if (rank == 0)
			fprintf(stderr, "usage: disturb ITERS WORK_US sleep|faults|extra|none|idle "
					"DISTURBED_RANK EVERY AMOUNT\n");
		MPI_Finalize();
		return 2;
	}
	long iters = atol(argv[1]), every = atol(argv[5]), amount = atol(argv[6]);
	/* Every rank calibrates, so that none arrives late at the broadcast of rank 0's figure. */
	double work_us = atof(argv[2]), per_us = work_per_us();
	MPI_Bcast(&per_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	long phase = (long)(work_us * per_us);
	int target = atoi(argv[4]);
	int mine = rank == target && strcmp(kind, "none") != 0 && strcmp(kind, "idle") != 0;
	if (rank == target && strcmp(kind, "idle") == 0)
		phase = 0;
	long events = 0;
	int64_t measured_ns = 0;
	double x = rank + 1, y = 0, sum = 0;
	for (long i = 0; i < iters; i++) {
		work(phase);
		if (mine && (i + 1) % every == 0) {
			int64_t t0 = now_ns();
			if (disturb(kind, amount, per_us) != 0) {
				fprintf(stderr, "disturb: rank %d: %s %ld failed\n", rank, kind, amount);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			measured_ns += now_ns() - t0;
			events++;
		}
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		sum += y;
	}
	if (rank == 0)
		printf("result %.1f\n", sum);
	fprintf(stderr, "disturb rank %d kind %s events %ld measured_ns %lld\n", rank, kind, events,
		(long long)measured_ns);
	MPI_Finalize();
	return 0;
}
