/* What the report's writers read besides struct nt_report, from the merge (report-merge.c): a
 * rank's log site's merged site, the job as its ranks recorded it, the named Python calls, a
 * level's name and a rank's share of time spent reading counters. Private to the core. */
#ifndef LIBNOISETOOL_REPORT_MERGE_H
#define LIBNOISETOOL_REPORT_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include <noisetool/ntlog.h>
#include <noisetool/report.h>

/* The merged site of s (same function, module file name and offset: nt_site_identity_cmp's
 * identity), or NULL when s is NULL or not in the report: a binary search of the report's
 * sites in identity order (nt_report_build keeps that order). O(log n), no memory. For the
 * writers that name every record's and late instance's site (text, JSON, trace, CSV, page,
 * comparison). */
const struct nt_report_site *nt_report_merged_site(const struct nt_report *rep,
						   const struct nt_log_site *s);

/* The job as its ranks recorded it (log version 4): the command line, MPI library and tool of
 * the lowest rank that has one (rank 0 but when it left nothing), how many distinct command
 * lines the ranks ran (more than 1: an MPMD job) and on how many hosts (of the ranks that left
 * data). The strings are the log's ("" for none). */
struct nt_report_job {
	const char *command, *mpi_library, *tool_version;
	/* version 8: the user and the batch job ("" when the log does not say) */
	const char *user, *batch_system, *batch_job, *batch_nodes;
	uint32_t commands, hosts;
};

/* Fill *job from log. O(ranks log ranks). 0 or -ENOMEM. */
int nt_report_job(const struct nt_log *log, struct nt_report_job *job);

/* The MPI calls of one named Python call site: the merged sites of one module (function, call
 * and file) and line, whatever their MPI function. */
struct nt_report_py_group {
	size_t first, n;          /* in the index array */
	uint64_t calls, time_ns;
};

/* The named Python calls of rep: *idx the Python sites with a call name, grouped; *groups by MPI
 * time, largest first; both malloc'd. 0 (with *ngroups 0 and nothing to free when there is
 * none) or -ENOMEM. */
int nt_report_python_groups(const struct nt_report *rep, const struct nt_report_site ***idx,
			    struct nt_report_py_group **groups, size_t *ngroups);

/* rep->cpus and rep->crowded_ranks from log's version-6 rank fields (report-cpus.c): nothing
 * (NULL, 0) when no rank recorded its CPUs. 0 or -ENOMEM. */
int nt_report_cpus_build(const struct nt_log *log, struct nt_report *rep);

/* A probe level's name: "timing", "os", "full", "?" for any other. */
const char *nt_report_level_name(uint32_t level);

/* A wait mode's name (enum nt_log_wait_mode), "?" out of range. */
const char *nt_report_wait_name(uint32_t wait_mode);

/* Share of the rank's wall time spent reading OS counters, in % (budget 1 %): its probe
 * windows' reads and its readings of the other tasks and interrupts on its CPUs (version 7). */
double nt_report_probe_pct(const struct nt_log_rank *k);

/* The span the rank's other tasks and interrupts cover, ns: from their first reading
 * (others_from_ns after MPI_Init; at MPI_Init before log version 9) to MPI_Finalize. */
uint64_t nt_report_others_span_ns(const struct nt_log_rank *k);

struct nt_json;

/* The list of causes (noisetool/attrib.h: NT_CAUSES) as the JSON documents carry it, for the
 * readers that draw or check them (the pages, the tests): "causes": [{"key", "json",
 * "column", "words", "colour"}, ...] in the list's order. */
void nt_report_causes_json(struct nt_json *j);

#endif /* LIBNOISETOOL_REPORT_MERGE_H */
