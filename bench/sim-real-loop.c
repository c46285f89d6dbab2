/* The loop that bench/bench-sim-real.sh measures and `noisetool simulate --iterations N
 * --compute-us W` models: N times a fixed amount of work (W us on a quiet CPU), then an 8-byte
 * MPI_Allreduce or an MPI_Barrier. The work is a count of dependent multiply-adds, not a
 * spin on the clock, so a detour during it delays it as the simulator assumes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

static const char usage[] =
	"Usage: sim-real-loop --iterations N --compute-us W [--collective allreduce|barrier]\n"
	"                     [--loops-per-us K]\n"
	"\n"
	"  --iterations N      work + collective, N times (1 to 10^7)\n"
	"  --compute-us W      the work per iteration, in us of a quiet CPU (0 to 10^6)\n"
	"  --collective C      allreduce (8 bytes, the default) or barrier\n"
	"  --loops-per-us K    the work's speed; default: rank 0 measures it (the fastest of\n"
	"                      400 trials, so that a trial hit by a detour does not count)\n"
	"\n"
	"Rank 0 prints one line of key=value: loops_per_us, mean_us (the loop's time per\n"
	"iteration: the last rank's end minus the common start, / N), median_us and min_us\n"
	"(rank 0's per-iteration times: between the ends of consecutive collectives).\n";

static volatile uint64_t sink;

/* Dependent multiply-adds (an LCG step each): the compiler cannot shorten the chain. */
static uint64_t work(uint64_t loops, uint64_t x)
{
	for (uint64_t i = 0; i < loops; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	return x;
}

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Loops per us: the fastest of 400 trials of 100,000 loops each. */
static double calibrate(void)
{
	const uint64_t loops = 100000;
	double best_us = 1e300;
	for (int i = 0; i < 400; i++) {
		double t0 = now_us();
		sink = work(loops, sink);
		double dt = now_us() - t0;
		if (dt < best_us)
			best_us = dt;
	}
	return (double)loops / best_us;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int rank;

static void bad(const char *what)
{
	if (rank == 0)
		fprintf(stderr, "sim-real-loop: %s\n%s", what, usage);
	MPI_Finalize();
	exit(2);
}

static double arg_double(const char *v, double min, double max, const char *what)
{
	char *end;
	double x = v ? strtod(v, &end) : 0;
	if (!v || *end || !(x >= min && x <= max))
		bad(what);
	return x;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = 0;
	double compute_us = -1, loops_per_us = 0;
	int barrier = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			if (rank == 0)
				fputs(usage, stdout);
			MPI_Finalize();
			return 0;
		} else if (!strcmp(argv[i], "--iterations")) {
			n = (long)arg_double(v, 1, 1e7, "--iterations: expected 1 to 10^7");
		} else if (!strcmp(argv[i], "--compute-us")) {
			compute_us = arg_double(v, 0, 1e6, "--compute-us: expected 0 to 10^6");
		} else if (!strcmp(argv[i], "--loops-per-us")) {
			loops_per_us = arg_double(v, 1e-3, 1e6,
						  "--loops-per-us: expected 0.001 to 10^6");
		} else if (!strcmp(argv[i], "--collective")) {
			if (!v || (strcmp(v, "allreduce") && strcmp(v, "barrier")))
				bad("--collective: expected allreduce or barrier");
			barrier = !strcmp(v, "barrier");
		} else {
			bad("unknown option or missing value");
		}
		i++;
	}
	if (n == 0 || compute_us < 0)
		bad("--iterations and --compute-us are required");
	if (loops_per_us == 0 && rank == 0)
		loops_per_us = calibrate();
	MPI_Bcast(&loops_per_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	const uint64_t loops = (uint64_t)(compute_us * loops_per_us + 0.5);
	double *t = malloc((size_t)n * sizeof *t);
	if (!t)
		bad("out of memory");
	double x = rank + 1, y = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	double start = now_us(), prev = start;
	for (long i = 0; i < n; i++) {
		sink = work(loops, sink);
		if (barrier)
			MPI_Barrier(MPI_COMM_WORLD);
		else
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double now = now_us();
		t[i] = now - prev;
		prev = now;
	}
	/* The clocks of the ranks of one node are one CLOCK_MONOTONIC: the loop's time is the
	 * latest end minus the common start (both ranks left the barrier within a us). */
	double end = prev, last_end = 0, first_start = 0;
	MPI_Reduce(&end, &last_end, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&start, &first_start, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		qsort(t, (size_t)n, sizeof *t, cmp_double);
		printf("sim-real-loop collective=%s iterations=%ld compute_us=%g loops_per_us=%.4f "
		       "mean_us=%.4f median_us=%.4f min_us=%.4f\n",
		       barrier ? "barrier" : "allreduce", n, compute_us, loops_per_us,
		       (last_end - first_start) / (double)n, t[n / 2], t[0]);
	}
	free(t);
	MPI_Finalize();
	return 0;
}
