/* The data of a job's HTML page (noisetool-private/report-page.h): the report, and what the page draws
 * besides, each part bounded whatever the log's size (doc/html.md, "The report page"). */
#include "nt-config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool-private/report-page.h>

#include "json-write.h"
#include "report-merge.h"

#define PAGE_HIST_SITES 50     /* call sites with a histogram of call time */
#define PAGE_TIME_BINS 100     /* columns of the lateness matrix */
#define PAGE_RANK_ROWS 256     /* its rows at most: more ranks share a row (consecutive ones) */
#define PAGE_LATEST 2000       /* late instances listed */

/* The place in rep->sites of a log site, or -1 (NULL, or not merged: cannot happen for a site
 * of the report's own log). */
static long site_index(const struct nt_report *rep, const struct nt_log_site *s)
{
	const struct nt_report_site *m = nt_report_merged_site(rep, s);
	return m ? (long)(m - rep->sites) : -1;
}

/* A numeric array written compactly, "[1,2,3]", inside j's current scope. */
static void uint_array(struct nt_json *j, const char *key, const uint64_t *v, size_t n)
{
	nt_json_array_begin(j, key);
	for (size_t i = 0; i < n; i++)
		fprintf(j->f, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
	nt_json_array_end(j); /* nothing was added through j: "]" right after the numbers */
}

/* "partial_reasons": the report's own "PARTIAL: ..." sentences (nt_report_write_text's header
 * lines, so that the page says it in the same words). */
static int write_partial_reasons(struct nt_json *j, const struct nt_report *rep)
{
	nt_json_array_begin(j, "partial_reasons");
	if (!rep->partial) {
		nt_json_array_end(j);
		return 0;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return -ENOMEM;
	/* Only the header matters: a one-rank copy of the report would do, but the header
	 * comes first and the rest is cheap next to building the report. */
	int rc = nt_report_write_text(m, rep, "", 1);
	if (fclose(m) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc == 0) {
		/* The header ends at the first blank line. */
		for (char *line = text; line && *line && *line != '\n';) {
			char *end = strchr(line, '\n');
			if (end)
				*end = '\0';
			char *p = strstr(line, "PARTIAL: ");
			if (p)
				nt_json_string(j, NULL, p + strlen("PARTIAL: "));
			line = end ? end + 1 : NULL;
		}
	}
	free(text);
	nt_json_array_end(j);
	return rc;
}

/* "histograms": the log2 histograms of call time of the report's first PAGE_HIST_SITES call
 * sites, merged over the ranks, with the bins' edges in ns (the log's bins are in counter
 * cycles: clock_hz converts). */
static int write_histograms(struct nt_json *j, const struct nt_report *rep)
{
	const struct nt_log *log = rep->log;
	size_t n = rep->nsites < PAGE_HIST_SITES ? rep->nsites : PAGE_HIST_SITES;
	uint64_t(*hist)[NT_LOG_HIST_BINS] = calloc(n ? n : 1, sizeof *hist);
	if (!hist)
		return -ENOMEM;
	for (uint32_t r = 0; r < log->nranks; r++)
		for (uint32_t i = 0; i < log->ranks[r].nsites; i++) {
			const struct nt_log_site *s = &log->ranks[r].sites[i];
			long at = site_index(rep, s);
			if (at < 0 || (size_t)at >= n)
				continue;
			for (int b = 0; b < NT_LOG_HIST_BINS; b++)
				hist[at][b] = s->hist[b] > UINT64_MAX - hist[at][b] ? UINT64_MAX
										    : hist[at][b] + s->hist[b];
		}
	double hz = log->clock_hz > 0 ? log->clock_hz : 1e9;
	nt_json_object_begin(j, "histograms");
	nt_json_double(j, "clock_hz", log->clock_hz);
	nt_json_uint(j, "sites_total", rep->nsites);
	nt_json_array_begin(j, "bin_edges_ns"); /* bin b: [edge b, edge b + 1) */
	for (int b = 0; b <= NT_LOG_HIST_BINS; b++)
		fprintf(j->f, "%s%.6g", b ? "," : "", (double)(1ull << (b < 63 ? b : 63)) / hz * 1e9);
	nt_json_array_end(j);
	nt_json_array_begin(j, "sites"); /* the report's "sites", in its order */
	for (size_t i = 0; i < n; i++) {
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "site", i);
		uint_array(j, "counts", hist[i], NT_LOG_HIST_BINS);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_object_end(j);
	free(hist);
	return 0;
}

/* The job's span on the global time base: from rank 0's MPI_Init (0) to the last rank's end
 * or the end of the last late instance, whichever is later. */
static uint64_t job_end_ns(const struct nt_report *rep)
{
	const struct nt_log *log = rep->log;
	double end = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		double e = (double)k->init_global_ns +
			   (double)k->wall_ns * (1 + (double)k->drift_ppb / 1e9);
		if (e > end)
			end = e;
	}
	for (size_t i = 0; i < rep->attrib.nlate; i++) {
		const struct nt_late *l = &rep->attrib.late[i];
		double e = (double)l->start_ns + (double)l->delay_ns;
		if (e > end)
			end = e;
	}
	return end < 1 ? 1 : end < 0x1p63 ? (uint64_t)end : (uint64_t)1 << 63;
}

/* "lateness": the delay imposed by the last arrivers, by rank (rows of consecutive ranks when
 * there are more than PAGE_RANK_ROWS) and by time bin of the job (the instance's start). */
static int write_lateness(struct nt_json *j, const struct nt_report *rep, uint64_t end_ns)
{
	const struct nt_log *log = rep->log;
	size_t rows = log->nranks < PAGE_RANK_ROWS ? log->nranks : PAGE_RANK_ROWS;
	uint64_t *m = calloc(rows ? rows * PAGE_TIME_BINS : 1, sizeof *m);
	if (!m)
		return -ENOMEM;
	double bin_ns = (double)end_ns / PAGE_TIME_BINS;
	for (size_t i = 0; i < rep->attrib.nlate; i++) {
		const struct nt_late *l = &rep->attrib.late[i];
		if (l->rank >= log->nranks)
			continue;
		size_t row = (size_t)((uint64_t)l->rank * rows / log->nranks);
		size_t bin = (size_t)((double)l->start_ns / bin_ns);
		if (bin >= PAGE_TIME_BINS)
			bin = PAGE_TIME_BINS - 1;
		uint64_t *c = &m[row * PAGE_TIME_BINS + bin];
		*c = l->delay_ns > UINT64_MAX - *c ? UINT64_MAX : *c + l->delay_ns;
	}
	nt_json_object_begin(j, "lateness");
	nt_json_uint(j, "start_ns", 0);
	nt_json_double(j, "bin_ns", bin_ns);
	nt_json_uint(j, "bins", PAGE_TIME_BINS);
	nt_json_array_begin(j, "rows"); /* each: its ranks (first, last) and delay_ns per bin */
	for (size_t row = 0; row < rows; row++) {
		/* The rank indices of a row: those i with i * rows / nranks == row. */
		uint64_t first = (row * (uint64_t)log->nranks + rows - 1) / rows;
		uint64_t last = ((row + 1) * (uint64_t)log->nranks + rows - 1) / rows - 1;
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "first_rank", log->ranks[first].rank);
		nt_json_uint(j, "last_rank", log->ranks[last].rank);
		uint_array(j, "delay_ns", &m[row * PAGE_TIME_BINS], PAGE_TIME_BINS);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_object_end(j);
	free(m);
	return 0;
}

/* "latest": the PAGE_LATEST latest instances, largest delay first, each with its start, delay,
 * last arriver (rank and host), call site (index into the report's "sites") and causes (ns, in
 * the order of "cause_keys"). */
static void write_latest(struct nt_json *j, const struct nt_report *rep)
{
	const struct nt_attrib *a = &rep->attrib;
	size_t n = a->nlate < PAGE_LATEST ? a->nlate : PAGE_LATEST;
	nt_json_object_begin(j, "latest");
	nt_json_uint(j, "total", a->nlate);
	nt_json_array_begin(j, "instances");
	for (size_t i = 0; i < n; i++) {
		const struct nt_late *l = &a->late[i];
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "time_ns", l->start_ns);
		nt_json_uint(j, "delay_ns", l->delay_ns);
		nt_json_uint(j, "rank", l->rank < rep->log->nranks ? rep->log->ranks[l->rank].rank
								   : l->rank);
		nt_json_string(j, "host", l->host);
		nt_json_uint(j, "comm_id", l->comm_id);
		nt_json_uint(j, "seq", l->seq);
		nt_json_int(j, "site", site_index(rep, l->site));
		uint_array(j, "causes", l->causes.ns, NT_CAUSE_COUNT);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_object_end(j);
}

int nt_report_write_page_json(FILE *f, const struct nt_report *rep, const char *log_path)
{
	if (!f || !rep || !rep->log || (rep->nsites && !rep->sites))
		return -EINVAL;
	struct nt_json j;
	nt_json_init(&j, f);
	nt_json_object_begin(&j, NULL);
	nt_json_string(&j, "schema", "noisetool-page/1");
	nt_json_string(&j, "log", log_path ? log_path : "");
	/* The report as --json writes it, one level down. */
	fputs(",\n  \"report\": ", f);
	int rc = nt_report_write_json(f, rep);
	j.need_comma[1] = true;
	nt_json_uint(&j, "created_unix_ns", rep->log->created_unix_ns);
	nt_json_array_begin(&j, "cause_keys");
	for (int c = 0; c < NT_CAUSE_COUNT; c++)
		nt_json_string(&j, NULL, nt_cause_key((enum nt_cause)c));
	nt_json_array_end(&j);
	if (rc == 0)
		rc = write_partial_reasons(&j, rep);
	if (rc == 0)
		rc = write_histograms(&j, rep);
	if (rc == 0)
		rc = write_lateness(&j, rep, job_end_ns(rep));
	if (rc == 0)
		write_latest(&j, rep);
	if (rc)
		return rc;
	nt_json_object_end(&j);
	return nt_json_finish(&j);
}
