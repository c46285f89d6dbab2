/* Samples put in order for their order statistics (a median, a p99): ascending sorts and the
 * nearest-rank percentile's place. Private to the core (and its benches). */
#ifndef LIBNOISETOOL_PERCENTILE_H
#define LIBNOISETOOL_PERCENTILE_H

#include <stddef.h>
#include <stdint.h>

/* Sort ascending. */
void nt_sort_u64(uint64_t *v, size_t n);
void nt_sort_double(double *v, size_t n);

/* Index (0-based) of the nearest-rank p-th percentile of n sorted values; n > 0. */
size_t nt_nearest_rank(size_t n, double p);

#endif /* LIBNOISETOOL_PERCENTILE_H */
