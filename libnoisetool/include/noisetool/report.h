/* The job report: a log's call sites merged across ranks (by function, module and offset),
 * with their spread across ranks, as a table and as JSON (doc/report-json.md). */
#ifndef NOISETOOL_REPORT_H
#define NOISETOOL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <noisetool/attrib.h>
#include <noisetool/common.h>
#include <noisetool/coverage.h>
#include <noisetool/loss.h>
#include <noisetool/ntlog.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Turn (module, offset) into "file.c:123" or "symbol+0x1f"; return 0 when it did, else the
 * report falls back to "module+0xoffset". */
typedef int (*nt_symbolize_fn)(void *ctx, const char *module, uint64_t offset, char *out,
			       size_t size);

struct nt_report_site {
	const char *function;
	const char *module;
	uint64_t offset;
	char location[256];         /* file.c:line, function or module+0xoffset; a Python
				     * site's file.py:line */
	char caller[128];           /* a Python site's function (co_qualname), else "" */
	char python_call[128];      /* a Python site's call ("comm.allreduce"), else "" */
	uint64_t calls;
	uint64_t time_ns_total;     /* over all ranks */
	uint64_t time_ns_max;       /* the longest single call on any rank */
	uint64_t bytes;             /* over all ranks: sum of count x datatype size */
	uint64_t time_ns_max_rank;  /* the largest per-rank total */
	uint32_t max_rank;          /* the rank that has it */
	uint32_t ranks;             /* ranks that called it */
	double cov;                 /* coefficient of variation of per-rank totals (all ranks) */
};

/* A rank's CPUs over the job (log version 6; doc/attribution.md, "Who shares the CPUs"):
 * shares of its wall time (on_cpu, waited) or of its CPUs' capacity, its wall time times their
 * number (the rest). A time the rank could not read leaves its shares negative. */
struct nt_report_cpus {
	bool known;          /* its CPU list was recorded (and parsed) */
	uint32_t ncpus;      /* CPUs in it */
	uint32_t crowd;      /* ranks of the job on its host whose CPUs all lie in its list,
			      * itself included: more than ncpus, and they take turns */
	uint32_t sharing;    /* other ranks of the job on its host that share a CPU with it */
	double on_cpu;       /* its process's CPU time */
	double waited;       /* its thread's time runnable, waiting for a CPU */
	double job_share;    /* the CPU time of the job's other ranks whose CPUs lie in its list */
	double others_share; /* what tasks outside the job ran on its CPUs */
	double steal_share;  /* what the hypervisor took from them */
	/* Its log's other tasks (struct nt_log_rank's others, version 7): the job's rank each one
	 * is (a rank of its host with that pid), or -1 for a task outside the job. */
	int64_t others_rank[NT_LOG_OTHERS_MAX];
};

struct nt_report {
	uint32_t nranks;
	bool partial;                    /* a rank or the header says so, or a loss is counted */
	uint64_t losses[NT_LOSS_COUNT];  /* over all ranks, by kind (enum nt_loss) */
	uint32_t level;
	const struct nt_log *log;
	size_t nsites;
	struct nt_report_site *sites; /* by time_ns_total, largest first */
	struct nt_attrib attrib;      /* who made collectives late, and why */
	struct nt_coverage coverage;  /* how much of the MPI time that accounts for */
	struct nt_coverage_part *site_coverage; /* the same by merged site (sites' order): the
						 * ranks' parts at it, summed */
	struct nt_report_cpus *cpus;  /* by rank index; NULL when no rank recorded its CPUs */
	uint32_t crowded_ranks;       /* ranks whose crowd is over their CPUs */
	void *by_identity_;           /* private: the sites in identity order, for lookups */
};

/* Merge log's sites; symbolize may be NULL. The report borrows log. 0, -EINVAL, -ENOMEM. */
NT_API int nt_report_build(const struct nt_log *log, nt_symbolize_fn symbolize, void *ctx,
			   struct nt_report *rep);

/* Free what nt_report_build allocated and zero *rep; the log stays the caller's. NULL is
 * accepted. */
NT_API void nt_report_free(struct nt_report *rep);

/* Text tables; top = how many call sites to print (0 = all). 0 or -EIO. */
NT_API int nt_report_write_text(FILE *f, const struct nt_report *rep, const char *log_path,
				size_t top);

/* The n latest instances (largest delay first): when, where, who was last, and why.
 * 0 or -EIO. */
NT_API int nt_report_write_late(FILE *f, const struct nt_report *rep, size_t n);

/* The JSON document: { "ranks", "partial", "losses", "level", "rank_times": [...], "sites":
 * [...], ... } (doc/report-json.md). */
NT_API int nt_report_write_json(FILE *f, const struct nt_report *rep);

/* The reports of several logs as one JSON array (`noisetool report A B --json FILE`): call this
 * for each report in turn, first = true for the first (it writes the '['), then
 * nt_report_write_json_array_end. Each element is the document of nt_report_write_json with
 * "log": log_path after "schema". 0, -EINVAL, or -EIO. */
NT_API int nt_report_write_json_item(FILE *f, const struct nt_report *rep, const char *log_path,
				     bool first);
NT_API int nt_report_write_json_array_end(FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_REPORT_H */
