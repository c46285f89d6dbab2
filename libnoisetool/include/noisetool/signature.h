/* Statistics of a detour list and its signature: periodic components (timer ticks, periodic
 * daemons: Jones et al.'s type 1) versus rare long detours (type 2). */
#ifndef NOISETOOL_SIGNATURE_H
#define NOISETOOL_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>
#include <noisetool/detour.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_HIST_BINS 40 /* log2 bins of duration: bin b holds [2^b, 2^(b+1)) ns */

struct nt_detour_stats {
	size_t count;
	size_t preempted;
	uint64_t total_ns;
	uint64_t max_ns;
	double mean_ns;
	double median_ns;    /* mean of the two middle values when count is even */
	uint64_t p99_ns;     /* nearest rank */
	double noise_ratio;  /* total_ns / elapsed_ns, 0..1 */
	uint64_t hist[NT_HIST_BINS];
};

/* Statistics of d[0..n); n = 0 gives all zeros. elapsed_ns = 0 gives noise_ratio 0.
 * Returns 0, -EINVAL (NULL out, or d NULL with n > 0), -ENOMEM. */
NT_API int nt_detour_stats_compute(const struct nt_detour *d, size_t n, uint64_t elapsed_ns,
				   struct nt_detour_stats *out);

#define NT_SIG_MAX_PERIODIC 8
#define NT_SIG_MAX_RARE 16
#define NT_SIG_QUANTILES 32 /* points of an empirical distribution: min, ..., max */

/* An empirical distribution in bounded size: n (<= NT_SIG_QUANTILES) values at the evenly
 * spaced probabilities k / (n - 1), k = 0 .. n - 1 (nearest rank); n = 0: no values. */
struct nt_quantiles {
	size_t n;
	uint64_t ns[NT_SIG_QUANTILES];
};

/* One periodic component. */
struct nt_periodic {
	double freq_hz;
	double typical_ns;  /* median duration of its detours */
	size_t count;       /* detours that belong to it */
	double jitter_ns;   /* median distance of arrivals from the fitted comb */
	double phase_ns;    /* arrival time of the comb's teeth modulo the period */
	double hit_fraction; /* count / teeth in the run (elapsed x freq), at most 1 */
	uint64_t total_ns;  /* its detours' summed durations */
	uint64_t preempted_ns; /* of them, the detours another task ran in (NT_DETOUR_PREEMPTED) */
	uint64_t softirq_ns;   /* of them, the others in which a softirq ran (softirq bits) */
	uint64_t softirq_kind_ns[NT_DETOUR_SOFTIRQ_KINDS]; /* the same by kind (a detour in each
							    * kind that ran in it) */
	struct nt_quantiles durations; /* its detours' durations */
};

struct nt_signature {
	size_t nperiodic;
	struct nt_periodic periodic[NT_SIG_MAX_PERIODIC]; /* most detours first */
	size_t periodic_detours;  /* detours in some periodic component */
	uint64_t rare_threshold_ns; /* non-periodic detours at least this long are "rare long" */
	size_t rare_count;
	size_t nrare;
	struct nt_detour rare[NT_SIG_MAX_RARE]; /* the longest rare ones, longest first */
	/* Every detour in no listed component (rare long or not, preempted or not): the
	 * simulator's renewal process. Gaps are from one's end to the next one's start. */
	size_t other_count;
	uint64_t other_total_ns;
	uint64_t other_preempted_ns; /* of them, the detours another task ran in */
	uint64_t other_softirq_ns;   /* of them, the others in which a softirq ran */
	uint64_t other_softirq_kind_ns[NT_DETOUR_SOFTIRQ_KINDS];
	size_t softirqs_read;        /* detours with NT_DETOUR_SOFTIRQS_READ (all of them) */
	struct nt_quantiles other_durations;
	struct nt_quantiles other_gaps;
};

/* The distribution of v[0..n) (sorted in place) as quantiles (see struct nt_quantiles). */
NT_API void nt_quantiles_of(uint64_t *v, size_t n, struct nt_quantiles *out);

/* Find periodic components and rare long detours in d[0..n) (sorted by start or not).
 * A component needs at least 8 detours whose arrivals fit a comb of one period (within 3 % of
 * the period, gaps of up to 8 periods allowed). Rare long: not periodic and at least
 * max(10 µs, 10 x the median duration). Per listed component also its hit fraction (teeth
 * in elapsed_ns, 0: not known, 1) and durations; the detours of no listed component as count,
 * total and the quantiles of their durations and gaps. Never fails on n = 0. Returns 0, -EINVAL, -ENOMEM. */
NT_API int nt_signature_analyze(const struct nt_detour *d, size_t n, uint64_t elapsed_ns,
				struct nt_signature *out);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_SIGNATURE_H */
