/* Coverage: how much of a job's MPI time the attribution accounts for (issue 34's identity,
 * its first terms). A collective call site's own cost per call is estimated from its duration
 * histogram (the lower quartile: most of a site's instances are not held up); what its calls
 * took beyond it is the time over their own cost, and the late arrivals' waits (what the
 * members waited for the last arriver, summed: struct nt_late's waited_ns) and the holds inside
 * the calls (what every member lost to a member disturbed inside the call) are the part of it
 * the attribution gives to a rank, split as each instance's delay is: with an OS cause,
 * unexplained, or without OS data. The rest is not accounted for yet (instances without
 * records on every member). doc/attribution.md, "Coverage". */
#ifndef NOISETOOL_COVERAGE_H
#define NOISETOOL_COVERAGE_H

#include <stdint.h>

#include <noisetool/attrib.h>
#include <noisetool/common.h>
#include <noisetool/ntlog.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The coverage of a rank, or of the job (the ranks' sums). */
struct nt_coverage_part {
	uint64_t mpi_ns;        /* time in MPI calls */
	uint64_t coll_ns;       /* of it, at collective call sites (sites with records) */
	uint64_t own_ns;        /* their calls' own cost, estimated */
	uint64_t over_ns;       /* coll_ns beyond own_ns, site by site (never below 0) */
	uint64_t waited_ns;     /* lost waiting for late arrivals (struct nt_attrib's loss) */
	uint64_t held_ns;       /* lost to holds inside the calls */
	/* waited_ns + held_ns (both scaled down to over_ns if above: a rank's own cost is an
	 * estimate), split: */
	uint64_t cause_ns;      /* given to a rank and an OS cause */
	uint64_t unexplained_ns;/* given to a rank, measured, no OS cause */
	uint64_t no_data_ns;    /* given to a rank without OS data (not measured) */
};

struct nt_coverage {
	struct nt_coverage_part all; /* the job: the ranks' sums */
	size_t nranks;
	struct nt_coverage_part *ranks; /* by rank: its sites' sums (its mpi_ns the rank's) */
	/* By each rank's call site, as the attribution numbers them (rank r's site i at
	 * sites[site_at[r] + i]; its mpi_ns the site's time). A site's losses are scaled down to
	 * fit its time over its own cost, and a rank's parts are its sites' sums, so that every
	 * table adds up. */
	size_t nsites;
	const size_t *site_at;          /* the attribution's (NULL without one) */
	struct nt_coverage_part *sites;
};

/* The coverage of log, whose attribution is a (NULL: no waits), rank by rank and in all.
 * Every sum saturates. 0, -EINVAL (no log), -ENOMEM. nt_coverage_free frees it. */
NT_API int nt_coverage_build(const struct nt_log *log, const struct nt_attrib *a,
			     struct nt_coverage *out);

/* part += x, field by field, each sum saturating. */
NT_API void nt_coverage_part_add(struct nt_coverage_part *part, const struct nt_coverage_part *x);

/* Free what nt_coverage_build allocated and zero *c. NULL is accepted. */
NT_API void nt_coverage_free(struct nt_coverage *c);

/* A collective site's own cost per call in ns: the lower quartile of its histogram
 * (interpolated inside its log2 bin of clock_hz cycles), within [min_ns, max_ns]; 0 when the
 * histogram is empty. */
NT_API uint64_t nt_coverage_own_ns(const struct nt_log_site *s, double clock_hz);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_COVERAGE_H */
