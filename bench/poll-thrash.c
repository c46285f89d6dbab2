/* A polling loop whose work between polls evicts the caches, as HPCC's MPIRandomAccess does
 * (random updates of a large table between MPI_Testany polls): what an unsuccessful poll costs
 * a wrapper when its state is no longer in the caches. 1 rank; each batch of iterations does
 * UPDATES random updates of a TABLE_MB table and one MPI_Iprobe that finds nothing, and is
 * followed by the same batch through PMPI_Iprobe, which no wrapper sees: the reference. Prints
 * the median over batches of (batch - reference) / iterations, in ns a poll, and the median
 * reference in ns an iteration. Knows nothing of noisetool.
 *
 *   poll-thrash [TABLE_MB=256 [UPDATES=8 [BATCHES=41 [ITERATIONS=20000 [SITES=1]]]]]
 *
 * TABLE_MB 0 updates nothing: the wrapper's state stays in the caches. SITES 2 polls at two
 * call sites in turn, as a loop testing two requests does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "batch-median.h"

static uint64_t *table;
static size_t words;
static uint64_t x = 88172645463325252ull;
static int sites = 1;

/* The second call site (SITES 2): a function of its own, with its own tag, so that the
 * compiler cannot merge its call with the first site's. */
static __attribute__((noinline)) int second_site(void)
{
	int flag = 0;
	MPI_Iprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	return flag;
}

/* n iterations of `updates` random updates and one poll, through MPI_Iprobe or, for the
 * reference, PMPI_Iprobe; the time they took in ns. */
static double batch(int n, int updates, int ref)
{
	int found = 0;
	double t0 = now_ns();
	for (int i = 0; i < n; i++) {
		for (int u = 0; u < updates && words; u++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			table[x % words] ^= x;
		}
		int flag = 0;
		if (ref)
			PMPI_Iprobe(MPI_ANY_SOURCE, 1 + (sites > 1 && (i & 1)), MPI_COMM_WORLD, &flag,
				    MPI_STATUS_IGNORE);
		else if (sites > 1 && (i & 1))
			flag = second_site();
		else
			MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		found += flag;
	}
	double t = now_ns() - t0;
	if (found)
		fprintf(stderr, "poll-thrash: a probe found a message that nobody sent\n");
	return t;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	int updates = argc > 2 ? atoi(argv[2]) : 8;
	int batches = argc > 3 ? atoi(argv[3]) : 41;
	int n = argc > 4 ? atoi(argv[4]) : 20000;
	sites = argc > 5 ? atoi(argv[5]) : 1;
	if (batches < 1 || n < 1 || updates < 0 || sites < 1 || sites > 2) {
		fprintf(stderr,
			"usage: poll-thrash [TABLE_MB [UPDATES [BATCHES [ITERATIONS [SITES (1, 2)]]]]]\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	words = mb * (1u << 20) / sizeof *table;
	table = words ? malloc(words * sizeof *table) : NULL;
	if (words && !table) {
		fprintf(stderr, "poll-thrash: no memory for a %zu MiB table\n", mb);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (table)
		memset(table, 1, words * sizeof *table);
	double *over = malloc((size_t)batches * sizeof *over);
	double *ref = malloc((size_t)batches * sizeof *ref);
	if (!over || !ref)
		MPI_Abort(MPI_COMM_WORLD, 1);
	batch(n, updates, 0); /* warm up: every page of the table touched, the site known */
	batch(n, updates, 1);
	for (int b = 0; b < batches; b++) {
		/* The order alternates, so that a speed change between the two halves cancels. */
		double w, r;
		if (b % 2) {
			r = batch(n, updates, 1);
			w = batch(n, updates, 0);
		} else {
			w = batch(n, updates, 0);
			r = batch(n, updates, 1);
		}
		over[b] = (w - r) / n;
		ref[b] = r / n;
	}
	printf("table %zu MiB, %d updates a poll, %d call site%s: wrapper over PMPI %.2f ns a poll "
	       "(median of %d batches of %d), reference %.1f ns an iteration\n",
	       mb, updates, sites, sites > 1 ? "s" : "", median(over, (size_t)batches), batches, n,
	       median(ref, (size_t)batches));
	free(over);
	free(ref);
	free(table);
	MPI_Finalize();
	return 0;
}
