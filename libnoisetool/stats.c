/* Statistics of a detour list: count, noise ratio, max/mean/median/p99, log2 histogram. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/signature.h>

#include "log2-bin.h"
#include "percentile.h"

int nt_detour_stats_compute(const struct nt_detour *d, size_t n, uint64_t elapsed_ns,
			    struct nt_detour_stats *out)
{
	if (!out || (!d && n > 0))
		return -EINVAL;
	memset(out, 0, sizeof *out);
	if (n == 0)
		return 0;
	uint64_t *dur = malloc(n * sizeof *dur);
	if (!dur)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = d[i].duration_ns;
		dur[i] = v;
		out->total_ns += v;
		if (v > out->max_ns)
			out->max_ns = v;
		if (d[i].flags & NT_DETOUR_PREEMPTED)
			out->preempted++;
		out->hist[nt_log2_bin(v, NT_HIST_BINS)]++;
	}
	nt_sort_u64(dur, n);
	out->count = n;
	out->mean_ns = (double)out->total_ns / (double)n;
	out->median_ns = (n % 2) ? (double)dur[n / 2]
				 : ((double)dur[n / 2 - 1] + (double)dur[n / 2]) / 2.0;
	out->p99_ns = dur[nt_nearest_rank(n, 99.0)];
	if (elapsed_ns > 0) {
		double r = (double)out->total_ns / (double)elapsed_ns;
		out->noise_ratio = r > 1.0 ? 1.0 : r;
	}
	free(dur);
	return 0;
}
