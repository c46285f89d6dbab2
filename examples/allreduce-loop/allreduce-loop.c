/* Jones et al. (LLNL, 2003), section 3: an 8-byte MPI_Allreduce (one MPI_DOUBLE) in a loop,
 * 4096 times. Each call is timed on every rank; rank 0 bins the slowest rank's time of each
 * call into a log2 histogram (most calls in a bell, a few long outliers) and lists the
 * outliers with their collective instance number, which `noisetool run` / `noisetool report
 * --late N` uses to say who made each of them late and why. Knows nothing of noisetool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "../launch.h"

static const char usage[] =
	"Usage: allreduce-loop [--calls N] [--compute-us US] [--outliers K]\n"
	"\n"
	"  --calls N        allreduces of 8 bytes (default 4096, as Jones et al.)\n"
	"  --compute-us US  busy work between calls, in us (default 0: back to back)\n"
	"  --outliers K     the K slowest calls listed (default 10)\n"
	"\n"
	"Run under mpiexec, one rank per core; through noisetool run to see why outliers were slow:\n"
	"  noisetool run -- " EX_MPIEXEC " -n 2 " EX_BIND " ./allreduce-loop\n";

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void compute_us(double us)
{
	double end = now_us() + us;
	while (now_us() < end)
		;
}

static int rank;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void bad(const char *what)
{
	if (rank == 0)
		fprintf(stderr, "allreduce-loop: %s\n%s", what, usage);
	MPI_Finalize();
	exit(2);
}

static long arg_long(const char *v, long min, long max, const char *what)
{
	char *end;
	long x = v ? strtol(v, &end, 10) : 0;
	if (!v || *end || x < min || x > max)
		bad(what);
	return x;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long calls = 4096, outliers = 10;
	double compute = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			if (rank == 0)
				fputs(usage, stdout);
			MPI_Finalize();
			return 0;
		} else if (!strcmp(argv[i], "--calls")) {
			calls = arg_long(v, 1, 100000000, "--calls: expected 1 to 10^8");
		} else if (!strcmp(argv[i], "--outliers")) {
			outliers = arg_long(v, 0, 1000, "--outliers: expected 0 to 1000");
		} else if (!strcmp(argv[i], "--compute-us")) {
			compute = (double)arg_long(v, 0, 1000000, "--compute-us: expected 0 to 10^6");
		} else {
			bad("unknown option or missing value");
		}
		i++;
	}
	double *t = malloc((size_t)calls * sizeof *t), *worst = malloc((size_t)calls * sizeof *t);
	if (!t || !worst)
		bad("out of memory");
	double x = rank + 1, y = 0;
	MPI_Barrier(MPI_COMM_WORLD); /* instance 0 on MPI_COMM_WORLD; call i is instance i + 1 */
	for (long i = 0; i < calls; i++) {
		if (compute > 0)
			compute_us(compute);
		double t0 = now_us();
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		t[i] = now_us() - t0;
	}
	MPI_Reduce(t, worst, (int)calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		/* log2 bins of the slowest rank's time per call, from 0.25 us */
		long bins[40] = { 0 };
		double sum = 0, lo = 1e300;
		for (long i = 0; i < calls; i++) {
			int b = 0;
			for (double edge = 0.5; worst[i] >= edge && b < 39; edge *= 2)
				b++;
			bins[b]++;
			sum += worst[i];
			if (worst[i] < lo)
				lo = worst[i];
		}
		double *sorted = malloc((size_t)calls * sizeof *sorted);
		if (!sorted)
			bad("out of memory");
		memcpy(sorted, worst, (size_t)calls * sizeof *sorted);
		qsort(sorted, (size_t)calls, sizeof *sorted, cmp_double);
		printf("allreduce-loop: %ld x 8-byte MPI_Allreduce, mean %.2f us, median %.2f us, "
		       "p99 %.2f us, fastest %.2f us\n",
		       calls, sum / (double)calls, sorted[calls / 2],
		       sorted[(long)((double)(calls - 1) * 0.99)], lo);
		free(sorted);
		printf("time of the slowest rank per call (log2 bins):\n");
		for (int b = 0; b < 40; b++) {
			if (!bins[b])
				continue;
			int bar = bins[b] * 50 / calls + (bins[b] > 0);
			printf("  %9.2f - %9.2f us %6ld %.*s\n", b ? 0.25 * (1 << b) : 0.0,
			       0.25 * (1 << (b + 1)), bins[b], bar,
			       "##################################################");
		}
		if (outliers > 0)
			printf("the %ld slowest calls (world:N is the collective instance in the "
			       "noisetool report):\n", outliers);
		for (long k = 0; k < outliers && k < calls; k++) {
			long w = 0;
			for (long i = 1; i < calls; i++)
				if (worst[i] > worst[w])
					w = i;
			printf("  call %5ld  world:%-6ld %10.2f us\n", w, w + 1, worst[w]);
			worst[w] = -1;
		}
	}
	free(t);
	free(worst);
	MPI_Finalize();
	return 0;
}
