/* Sorting and ranking helpers for the statistics code. */
#ifndef LIBNOISETOOL_SORTUTIL_H
#define LIBNOISETOOL_SORTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Sort ascending. */
void nt_sort_u64(uint64_t *v, size_t n);
void nt_sort_double(double *v, size_t n);

/* Index (0-based) of the nearest-rank p-th percentile of n sorted values; n > 0. */
size_t nt_nearest_rank(size_t n, double p);

/* log2 bin of v: 0 for v < 2, else floor(log2 v), clamped to nbins - 1. */
static inline unsigned nt_log2_bin(uint64_t v, unsigned nbins)
{
	unsigned b = v < 2 ? 0 : 63u - (unsigned)__builtin_clzll(v);
	return b < nbins ? b : nbins - 1;
}

#endif /* LIBNOISETOOL_SORTUTIL_H */
