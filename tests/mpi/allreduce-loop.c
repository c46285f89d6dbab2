/* A plain MPI program that knows nothing of noisetool: N 8-byte allreduces, a barrier, a bcast.
 * Prints the final sum so that runs with and without the library can be compared.
 *
 *   allreduce-loop [N [--seconds S [--work-us U]]]   then more allreduces, each after U us of
 *       work (default 1000: a collective a millisecond, whose probe reads take about 0.3 % of
 *       the time), and a bcast of rank 0's "go on" after every 16, until the job has run S s */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "peak-rss.h"

/* Resident set size in KiB. */
static long rss_kb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = argc > 1 ? atol(argv[1]) : 10000;
	double min_s = argc > 3 && !strcmp(argv[2], "--seconds") ? atof(argv[3]) : 0;
	double work_s = argc > 5 && !strcmp(argv[4], "--work-us") ? atof(argv[5]) * 1e-6 : 1e-3;
	double x = rank + 1, sum = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	long rss0 = rss_kb();
	double t0 = MPI_Wtime();
	for (long i = 0; i < n; i++) {
		MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		x = sum / size;
	}
	for (int go = min_s > 0; go;) {
		for (int i = 0; i < 16; i++) {
			for (double w = MPI_Wtime(); MPI_Wtime() - w < work_s;)
				;
			MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			x = sum / size;
		}
		go = MPI_Wtime() - t0 < min_s;
		MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}
	double per_call_ns = (MPI_Wtime() - t0) / (double)(n > 0 ? n : 1) * 1e9;
	long growth = rss_kb() - rss0, max_growth = 0;
	MPI_Reduce(&growth, &max_growth, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Bcast(&sum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("result %.6f\n", sum);
	if (rank == 0)
		fprintf(stderr, "per-call %.1f ns\nrss-growth-kb %ld\n", per_call_ns, max_growth);
	MPI_Finalize();
	fprintf(stderr, "rank %d peak-rss-kb %ld\n", rank, peak_rss_kb());
	return 0;
}
