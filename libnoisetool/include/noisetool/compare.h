/* Two runs of one program compared: per call site and per rank what changed (time, calls,
 * spread, culprits), each change against the two runs' own run-to-run spread, so that a real
 * change is told from noise (doc/compare.md). */
#ifndef NOISETOOL_COMPARE_H
#define NOISETOOL_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <noisetool/attrib.h>
#include <noisetool/common.h>
#include <noisetool/report.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_COMPARE_BLOCKS 10       /* each run's time span cut into this many blocks */
#define NT_COMPARE_SIGMAS 3.0      /* a change must exceed this many times its noise ... */
#define NT_COMPARE_REL_FLOOR 0.10  /* ... and this share of the larger of the two values */
#define NT_COMPARE_WALL_FLOOR 1e-3 /* a lateness change: also this share of the longer wall */
#define NT_COMPARE_MIN_CALLS 16    /* a site judged needs this many calls per rank in each run */

enum nt_compare_verdict {
	NT_COMPARE_WITHIN_NOISE = 0,
	NT_COMPARE_SIGNIFICANT,
	NT_COMPARE_FEW_CALLS, /* a site called too few times to know its noise: not judged */
	NT_COMPARE_ONLY_A,    /* a site or rank of run A alone */
	NT_COMPARE_ONLY_B,
};

/* One statistic in both runs, with its noise: the standard error each run's own data give it
 * (doc/compare.md, "The noise of a run"). */
struct nt_compare_value {
	double a, b;             /* the statistic in run A and in run B */
	double noise_a, noise_b; /* their standard errors */
	double change;           /* b - a */
	double noise;            /* sqrt(noise_a^2 + noise_b^2): the change's standard error */
	enum nt_compare_verdict verdict;
};

/* A call site of either run, matched by function and location (file:line when symbolized, else
 * module base name + offset; a Python site's call too). */
struct nt_compare_site {
	const char *function;         /* borrowed from a report */
	const char *location;
	const char *python_call;      /* "" unless a Python site */
	uint64_t calls_a, calls_b;
	uint64_t time_ns_a, time_ns_b; /* over all ranks */
	uint32_t ranks_a, ranks_b;    /* ranks that called it */
	double cov_a, cov_b;          /* spread of the per-rank time across ranks */
	struct nt_compare_value mean_ns; /* time per call, ns */
	uint64_t culprit_ns_a, culprit_ns_b; /* delay imposed when it was the last arriver's */
};

/* A rank of either run, matched by rank number. */
struct nt_compare_rank {
	uint32_t rank;
	uint64_t wall_ns_a, wall_ns_b, mpi_ns_a, mpi_ns_b;
	struct nt_compare_value delay_ns; /* lateness imposed: delay of the instances it was last at */
	uint64_t late_a, late_b;          /* those instances */
	struct nt_causes causes_a, causes_b;
};

struct nt_compare {
	const struct nt_report *a, *b;
	uint64_t wall_ns_a, wall_ns_b;       /* the longest rank's */
	struct nt_compare_value delay_ns;    /* the job's total delay */
	struct nt_causes causes_a, causes_b; /* the job's delay by cause */
	size_t nsites;
	struct nt_compare_site *sites; /* significant first, then by change of total time */
	size_t nranks;
	struct nt_compare_rank *ranks; /* significant first, then by change of lateness */
	size_t sites_only_a, sites_only_b, ranks_only_a, ranks_only_b;
};

/* Compare run b with run a (a: before, b: after); both reports stay borrowed until
 * nt_compare_free. Runs of different rank counts are compared rank by rank where both have
 * the rank (the others are marked as in one run only). 0, -EINVAL, -ENOMEM. */
NT_API int nt_compare_build(const struct nt_report *a, const struct nt_report *b,
			    struct nt_compare **out);

/* The verdict of a change of a - b given its noise (standard error) and its floor: significant
 * when |b - a| > NT_COMPARE_SIGMAS x noise and |b - a| >= floor. */
NT_API enum nt_compare_verdict nt_compare_judge(double a, double b, double noise, double floor);

/* "significant", "within noise", "few calls", "only in A", "only in B". */
NT_API const char *nt_compare_verdict_name(enum nt_compare_verdict v);

/* The comparison as text; top = how many rows per table (0 = all). 0 or -EIO. */
NT_API int nt_compare_write_text(FILE *f, const struct nt_compare *c, const char *a_path,
				 const char *b_path, size_t top);

/* As JSON (doc/report-json.md, "Comparing two logs"). 0 or -EIO. */
NT_API int nt_compare_write_json(FILE *f, const struct nt_compare *c, const char *a_path,
				 const char *b_path);

/* Its tables as CSV files (compare-sites.csv, compare-ranks.csv) in the existing directory
 * dir, each by the output rules (noisetool/outfile.h). 0, or -errno with the reason in why. */
NT_API int nt_compare_write_csv(const struct nt_compare *c, const char *dir, char *why,
				size_t why_size);

/* Free a comparison nt_compare_build made (the reports stay the caller's). NULL is accepted. */
NT_API void nt_compare_free(struct nt_compare *c);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_COMPARE_H */
