/* Samples sorted, and the nearest-rank percentile (percentile.h). */
#include <math.h>
#include <stdlib.h>

#include "percentile.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void nt_sort_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
}

void nt_sort_double(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
}

size_t nt_nearest_rank(size_t n, double p)
{
	double r = ceil(p / 100.0 * (double)n);
	size_t k = r < 1 ? 1 : (size_t)r;
	return (k > n ? n : k) - 1;
}
