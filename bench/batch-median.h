/* What the benchmarks' MPI loops share (overhead-loop.c, p2p-loop.c): a clock read per batch
 * and the median over batches. Header only; knows nothing of noisetool. */
#ifndef BENCH_BATCH_MEDIAN_H
#define BENCH_BATCH_MEDIAN_H

#include <stdlib.h>
#include <time.h>

static inline double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of t[0..n) (sorts t). */
static inline double median(double *t, size_t n)
{
	qsort(t, n, sizeof *t, cmp_double);
	return t[n / 2];
}

#endif
