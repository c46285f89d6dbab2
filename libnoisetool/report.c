/* Merging a job log into a report, and its writers. */
#include "nt-config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/report.h>

#include "json.h"

/* A site of one rank, for sorting by identity. */
struct ref {
	const struct nt_log_site *s;
	uint32_t rank;
};

static int cmp_identity(const struct nt_log_site *a, const struct nt_log_site *b)
{
	int c = strcmp(a->function, b->function);
	if (c)
		return c;
	const char *ma = strrchr(a->module, '/') ? strrchr(a->module, '/') + 1 : a->module;
	const char *mb = strrchr(b->module, '/') ? strrchr(b->module, '/') + 1 : b->module;
	if ((c = strcmp(ma, mb)))
		return c;
	return (a->offset > b->offset) - (a->offset < b->offset);
}

static int cmp_ref(const void *x, const void *y)
{
	const struct ref *a = x, *b = y;
	int c = cmp_identity(a->s, b->s);
	return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

static int cmp_total_desc(const void *x, const void *y)
{
	const struct nt_report_site *a = x, *b = y;
	return (a->time_ns_total < b->time_ns_total) - (a->time_ns_total > b->time_ns_total);
}

int nt_report_build(const struct nt_log *log, nt_symbolize_fn symbolize, void *ctx,
		    struct nt_report *rep)
{
	if (!log || !rep)
		return -EINVAL;
	memset(rep, 0, sizeof *rep);
	rep->nranks = log->nranks;
	rep->partial = log->flags & NT_LOG_FLAG_PARTIAL;
	rep->level = log->level;
	rep->log = log;
	size_t n = 0;
	for (uint32_t r = 0; r < log->nranks; r++)
		n += log->ranks[r].nsites;
	struct ref *refs = malloc((n ? n : 1) * sizeof *refs);
	rep->sites = calloc(n ? n : 1, sizeof *rep->sites);
	double *per_rank = calloc(log->nranks, sizeof *per_rank);
	if (!refs || !rep->sites || !per_rank) {
		free(refs);
		free(per_rank);
		nt_report_free(rep);
		return -ENOMEM;
	}
	size_t k = 0;
	for (uint32_t r = 0; r < log->nranks; r++)
		for (uint32_t i = 0; i < log->ranks[r].nsites; i++)
			refs[k++] = (struct ref){ &log->ranks[r].sites[i], r };
	qsort(refs, n, sizeof *refs, cmp_ref);

	for (size_t i = 0; i < n;) {
		size_t j = i;
		struct nt_report_site *o = &rep->sites[rep->nsites++];
		o->function = refs[i].s->function;
		o->module = refs[i].s->module;
		o->offset = refs[i].s->offset;
		memset(per_rank, 0, log->nranks * sizeof *per_rank);
		for (; j < n && cmp_identity(refs[i].s, refs[j].s) == 0; j++) {
			const struct nt_log_site *s = refs[j].s;
			o->calls += s->calls;
			o->time_ns_total += s->total_ns;
			o->bytes += s->bytes;
			if (s->max_ns > o->time_ns_max)
				o->time_ns_max = s->max_ns;
			per_rank[refs[j].rank] += (double)s->total_ns;
		}
		double sum = 0, sum2 = 0;
		for (uint32_t r = 0; r < log->nranks; r++) {
			sum += per_rank[r];
			sum2 += per_rank[r] * per_rank[r];
			if (per_rank[r] > 0)
				o->ranks++;
			if (per_rank[r] > (double)o->time_ns_max_rank) {
				o->time_ns_max_rank = (uint64_t)per_rank[r];
				o->max_rank = r;
			}
		}
		double mean = sum / log->nranks;
		double var = sum2 / log->nranks - mean * mean;
		o->cov = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
		if (!symbolize || symbolize(ctx, o->module, o->offset, o->location,
					    sizeof o->location) != 0) {
			const char *base = strrchr(o->module, '/') ? strrchr(o->module, '/') + 1
								   : o->module;
			snprintf(o->location, sizeof o->location, "%s+0x%llx", base,
				 (unsigned long long)o->offset);
		}
		i = j;
	}
	qsort(rep->sites, rep->nsites, sizeof *rep->sites, cmp_total_desc);
	free(refs);
	free(per_rank);
	return 0;
}

void nt_report_free(struct nt_report *rep)
{
	if (!rep)
		return;
	free(rep->sites);
	memset(rep, 0, sizeof *rep);
}

static const char *level_name(uint32_t level)
{
	return level == 0 ? "timing" : level == 1 ? "os" : level == 2 ? "full" : "?";
}

int nt_report_write_text(FILE *f, const struct nt_report *rep, const char *log_path, size_t top)
{
	if (!f || !rep)
		return -EINVAL;
	const struct nt_log *log = rep->log;
	fprintf(f, "noisetool report: %s\n%u rank%s, level %s, %s\n\n", log_path ? log_path : "",
		rep->nranks, rep->nranks == 1 ? "" : "s", level_name(rep->level),
		rep->partial ? "PARTIAL (records were dropped: raise NOISETOOL_MEM)"
			     : "complete");
	fprintf(f, "%6s  %-20s %12s %12s %8s %10s\n", "rank", "host", "wall s", "MPI s", "MPI %",
		"records");
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		fprintf(f, "%6u  %-20.20s %12.6f %12.6f %8.2f %10llu%s%s\n", k->rank, k->host,
			(double)k->wall_ns / 1e9, (double)k->mpi_ns / 1e9,
			k->wall_ns ? 100.0 * (double)k->mpi_ns / (double)k->wall_ns : 0,
			(unsigned long long)k->nrecords, k->dropped ? "  (calls not recorded)" : "",
			k->dropped_records ? "  (records dropped)" : "");
	}
	size_t n = top && top < rep->nsites ? top : rep->nsites;
	fprintf(f, "\nCall sites by MPI time (cov: spread of the per-rank time across ranks)\n");
	fprintf(f, "%-24s %-36s %12s %12s %12s %12s %6s %12s\n", "function", "location", "calls",
		"total ms", "max/rank ms", "max call us", "cov", "bytes/call");
	for (size_t i = 0; i < n; i++) {
		const struct nt_report_site *s = &rep->sites[i];
		fprintf(f, "%-24s %-36s %12llu %12.3f %12.3f %12.1f %6.3f %12.0f\n", s->function,
			s->location, (unsigned long long)s->calls, (double)s->time_ns_total / 1e6,
			(double)s->time_ns_max_rank / 1e6, (double)s->time_ns_max / 1e3, s->cov,
			s->calls ? (double)s->bytes / (double)s->calls : 0.0);
	}
	if (n < rep->nsites)
		fprintf(f, "(%zu more call sites; --top 0 shows all)\n", rep->nsites - n);
	return ferror(f) ? -EIO : 0;
}

int nt_report_write_json(FILE *f, const struct nt_report *rep)
{
	if (!f || !rep)
		return -EINVAL;
	struct nt_json j;
	nt_json_init(&j, f);
	nt_json_object_begin(&j, NULL);
	nt_json_string(&j, "schema", "noisetool-report/1");
	nt_json_string(&j, "version", NT_VERSION);
	nt_json_uint(&j, "ranks", rep->nranks);
	nt_json_bool(&j, "partial", rep->partial);
	nt_json_string(&j, "level", level_name(rep->level));
	nt_json_array_begin(&j, "rank_times");
	for (uint32_t r = 0; r < rep->nranks; r++) {
		const struct nt_log_rank *k = &rep->log->ranks[r];
		nt_json_object_begin(&j, NULL);
		nt_json_uint(&j, "rank", k->rank);
		nt_json_string(&j, "host", k->host);
		nt_json_uint(&j, "wall_ns", k->wall_ns);
		nt_json_uint(&j, "mpi_ns", k->mpi_ns);
		nt_json_uint(&j, "dropped_calls", k->dropped);
		nt_json_uint(&j, "records", k->nrecords);
		nt_json_uint(&j, "dropped_records", k->dropped_records);
		nt_json_object_end(&j);
	}
	nt_json_array_end(&j);
	nt_json_array_begin(&j, "sites");
	for (size_t i = 0; i < rep->nsites; i++) {
		const struct nt_report_site *s = &rep->sites[i];
		nt_json_object_begin(&j, NULL);
		nt_json_string(&j, "function", s->function);
		nt_json_string(&j, "location", s->location);
		nt_json_string(&j, "module", s->module);
		nt_json_uint(&j, "offset", s->offset);
		nt_json_uint(&j, "calls", s->calls);
		nt_json_uint(&j, "time_ns_total", s->time_ns_total);
		nt_json_uint(&j, "time_ns_max", s->time_ns_max);
		nt_json_uint(&j, "time_ns_max_rank", s->time_ns_max_rank);
		nt_json_uint(&j, "bytes_total", s->bytes);
		nt_json_double(&j, "bytes_per_call",
			       s->calls ? (double)s->bytes / (double)s->calls : 0.0);
		nt_json_uint(&j, "max_rank", s->max_rank);
		nt_json_uint(&j, "ranks_calling", s->ranks);
		nt_json_double(&j, "cov", s->cov);
		nt_json_object_end(&j);
	}
	nt_json_array_end(&j);
	nt_json_object_end(&j);
	return nt_json_finish(&j);
}
