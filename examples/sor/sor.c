/* Red-black SOR (Thitikamol & Keleher's SOR on CVM, Tables 2-3, as an MPI program): an N x N
 * grid split by rows over the ranks; each iteration updates the red points, exchanges halo
 * rows, updates the black points, exchanges again, and reduces the residual with
 * MPI_Allreduce. --load starts a competing CPU load on one rank's CPU (inheriting its binding),
 * as the seed loaded the last node. Prints the elapsed time (the slowest rank's) and the
 * residual. Knows nothing of noisetool: run it through `noisetool run [--wait adaptive]`. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <mpi.h>

#include "../launch.h"

#include "../common/duty-load.h"

static const char usage[] =
	"Usage: sor [--n N] [--iters I] [--omega W] [--load none|15|50|100] [--load-rank last|R]\n"
	"           [--load-share F]\n"
	"\n"
	"  --n N          grid points per side (default 1024)\n"
	"  --iters I      iterations (default 300)\n"
	"  --omega W      relaxation factor (default 1.5)\n"
	"  --load L       competing load on the CPU of --load-rank: none (default), or a duty\n"
	"                 cycle of 15, 50 or 100 %% of each 10 ms\n"
	"  --load-rank R  the loaded rank: last (default) or a rank number\n"
	"  --load-share F the loaded rank's rows as a fraction of another rank's (default 1):\n"
	"                 the seed's \"10,10,10,2\" mapping is 0.2. Below 1 the loaded rank\n"
	"                 waits for the others, and how it waits decides its share of the CPU\n"
	"\n"
	"Run with one rank per core: " EX_MPIEXEC " -n 2 " EX_BIND " ./sor --load 100\n";

static int rank, size;

static void bad(const char *what)
{
	if (rank == 0)
		fprintf(stderr, "sor: %s\n%s", what, usage);
	MPI_Finalize();
	exit(2);
}

/* A load bound like its parent (mpiexec -bind-to core binds the rank to its core); it dies
 * with the rank. */
static pid_t start_load(int duty)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	duty_load_forever(duty);
}

/* One color's sweep over the local rows 1..rows (rows 0 and rows+1 are halos); returns the sum
 * of squared changes. first_row: the global index of local row 1. */
static double sweep(double *g, int rows, int n, int first_row, int color, double omega)
{
	double change = 0;
	for (int i = 1; i <= rows; i++) {
		int gi = first_row + i - 1;
		if (gi == 0 || gi == n - 1)
			continue; /* the boundary stays */
		double *r = g + (size_t)i * (size_t)n;
		for (int j = 1 + ((gi + 1 + color) & 1); j < n - 1; j += 2) {
			double v = 0.25 * (r[j - 1] + r[j + 1] + r[j - n] + r[j + n]);
			double d = omega * (v - r[j]);
			r[j] += d;
			change += d * d;
		}
	}
	return change;
}

/* The first global row of rank r: n times the weight of the ranks before it over the total. */
static int row_start(int r, long n, double total, int load_rank, double load_share)
{
	double before = r - (r > load_rank) + (r > load_rank ? load_share : 0);
	return (int)((double)n * before / total + 0.5);
}

static void halo(double *g, int rows, int n)
{
	int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	MPI_Sendrecv(g + (size_t)n, n, MPI_DOUBLE, up, 1, g + (size_t)(rows + 1) * (size_t)n, n,
		     MPI_DOUBLE, down, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Sendrecv(g + (size_t)rows * (size_t)n, n, MPI_DOUBLE, down, 2, g, n, MPI_DOUBLE, up, 2,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = 1024, iters = 300;
	double omega = 1.5, load_share = 1;
	int load = 0, load_rank = size - 1;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			if (rank == 0)
				fputs(usage, stdout);
			MPI_Finalize();
			return 0;
		} else if (!strcmp(o, "--n") && v) {
			n = strtol(v, &end, 10);
			if (*end || n < 8 || n > 1 << 16)
				bad("--n: expected 8 to 65536");
		} else if (!strcmp(o, "--iters") && v) {
			iters = strtol(v, &end, 10);
			if (*end || iters < 1 || iters > 100000000)
				bad("--iters: expected 1 to 10^8");
		} else if (!strcmp(o, "--omega") && v) {
			omega = strtod(v, &end);
			if (*end || !(omega > 0 && omega < 2))
				bad("--omega: expected a number in (0, 2)");
		} else if (!strcmp(o, "--load") && v) {
			if (!strcmp(v, "none"))
				load = 0;
			else if (!strcmp(v, "15") || !strcmp(v, "50") || !strcmp(v, "100"))
				load = atoi(v);
			else
				bad("--load: expected none, 15, 50 or 100");
		} else if (!strcmp(o, "--load-rank") && v) {
			load_rank = !strcmp(v, "last") ? size - 1 : (int)strtol(v, &end, 10);
			if ((end && *end) || load_rank < 0 || load_rank >= size)
				bad("--load-rank: expected last or a rank of this job");
		} else if (!strcmp(o, "--load-share") && v) {
			load_share = strtod(v, &end);
			if (*end || !(load_share > 0 && load_share <= 1))
				bad("--load-share: expected a fraction in (0, 1]");
		} else {
			bad("unknown option or missing value");
		}
		i++;
	}
	/* Rows by weight: 1 for every rank, load_share for the loaded one. Rank r starts at the
	 * rounded share of the ranks before it, so the rows add up to n. */
	double total = size - 1 + load_share;
	int first = row_start(rank, n, total, load_rank, load_share);
	int rows = row_start(rank + 1, n, total, load_rank, load_share) - first;
	if (rows < 2)
		bad("--n: too small for this many ranks and this --load-share");
	double *g = calloc((size_t)(rows + 2) * (size_t)n, sizeof *g);
	if (!g)
		bad("out of memory");
	/* Boundary: the top edge at 1, the rest at 0. */
	if (rank == 0)
		for (long j = 0; j < n; j++)
			g[(size_t)n + (size_t)j] = 1;
	pid_t hog = load && rank == load_rank ? start_load(load) : 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime(), residual = 0;
	for (long it = 0; it < iters; it++) {
		double c = sweep(g, rows, (int)n, first, 0, omega);
		halo(g, rows, (int)n);
		c += sweep(g, rows, (int)n, first, 1, omega);
		halo(g, rows, (int)n);
		MPI_Allreduce(&c, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	double elapsed = MPI_Wtime() - t0, slowest;
	MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (hog > 0) {
		kill(hog, SIGKILL);
		waitpid(hog, NULL, 0);
	}
	if (rank == 0)
		printf("sor: %ld x %ld, %d ranks, %ld iterations, load %d %% on rank %d (share %.2f): elapsed %.3f s, "
		       "residual %.6e\n",
		       n, n, size, iters, load, load_rank, load_share, slowest, sqrt(residual));
	free(g);
	MPI_Finalize();
	return 0;
}
