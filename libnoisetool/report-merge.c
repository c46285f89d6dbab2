/* Merging a job log into a report (noisetool/report.h): each call site's identity merged across
 * ranks, ordered by MPI time, then the attribution; and what the writers read besides
 * (report-merge.h): a log site's merged site, the job, the named Python calls. The writers:
 * report-text.c, report-json.c, report-csv.c, report-perfetto.c, report-page.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/report.h>

#include "json-write.h"
#include "report-merge.h"
#include "site-identity.h"

/* a + b, at most UINT64_MAX: a damaged log's counts may add up past 2^64. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* A site of one rank, for sorting by identity. */
struct ref {
	const struct nt_log_site *s;
	uint32_t rank;
};

static int cmp_ref(const void *x, const void *y)
{
	const struct ref *a = x, *b = y;
	int c = nt_site_identity_cmp(a->s, b->s);
	return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

/* A merged site by identity: one of its log sites, and where it went in rep->sites. */
struct ident {
	const struct nt_log_site *s;
	size_t at;
};

static int cmp_ident(const void *x, const void *y)
{
	return nt_site_identity_cmp(((const struct ident *)x)->s, ((const struct ident *)y)->s);
}

/* A merged site's place in the report: by total time, largest first, then in identity order. */
struct rank_by_total {
	uint64_t total_ns;
	size_t at; /* in identity order */
};

static int cmp_total_desc(const void *x, const void *y)
{
	const struct rank_by_total *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns < b->total_ns ? 1 : -1;
	return (a->at > b->at) - (a->at < b->at);
}

/* Fill o, the merge of refs[0..n) (one site's identity, by rank), over nranks ranks. */
static void merge_site(struct nt_report_site *o, const struct ref *refs, size_t n, uint32_t nranks)
{
	o->function = refs[0].s->function;
	o->module = refs[0].s->module;
	o->offset = refs[0].s->offset;
	double sum = 0, sum2 = 0, max_rank = 0;
	for (size_t j = 0; j < n;) {
		/* A rank may hold the same identity more than once (one module loaded from two
		 * paths): its times add up. */
		uint32_t rank = refs[j].rank;
		double per_rank = 0;
		for (; j < n && refs[j].rank == rank; j++) {
			const struct nt_log_site *s = refs[j].s;
			o->calls = add_sat(o->calls, s->calls);
			o->time_ns_total = add_sat(o->time_ns_total, s->total_ns);
			o->bytes = add_sat(o->bytes, s->bytes);
			if (s->max_ns > o->time_ns_max)
				o->time_ns_max = s->max_ns;
			per_rank += (double)s->total_ns;
		}
		sum += per_rank;
		sum2 += per_rank * per_rank;
		if (per_rank > 0)
			o->ranks++;
		if (per_rank > max_rank) {
			max_rank = per_rank;
			/* A sum of many sites' times may pass 2^64 ns in a damaged log. */
			o->time_ns_max_rank = per_rank < 0x1p64 ? (uint64_t)per_rank : UINT64_MAX;
			o->max_rank = rank;
		}
	}
	/* The spread over all ranks, those that never called it included (at 0). */
	double mean = nranks ? sum / nranks : 0;
	double var = nranks ? sum2 / nranks - mean * mean : 0;
	o->cov = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
}

/* The coverage by merged site: each rank's site parts (the coverage's, by the attribution's
 * numbering) summed at the merged site they belong to. 0 or -ENOMEM. */
static int site_coverage(const struct nt_log *log, struct nt_report *rep)
{
	const struct nt_coverage *cv = &rep->coverage;
	rep->site_coverage = calloc(rep->nsites ? rep->nsites : 1, sizeof *rep->site_coverage);
	if (!rep->site_coverage)
		return -ENOMEM;
	if (!cv->sites || !cv->site_at)
		return 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		for (uint32_t i = 0; k->sites && i < k->nsites; i++) {
			const struct nt_report_site *m = nt_report_merged_site(rep, &k->sites[i]);
			if (m)
				nt_coverage_part_add(&rep->site_coverage[m - rep->sites],
						     &cv->sites[cv->site_at[r] + i]);
		}
	}
	return 0;
}

int nt_report_build(const struct nt_log *log, nt_symbolize_fn symbolize, void *ctx,
		    struct nt_report *rep)
{
	if (!log || !rep || (log->nranks && !log->ranks))
		return -EINVAL;
	memset(rep, 0, sizeof *rep);
	rep->nranks = log->nranks;
	rep->partial = log->flags & NT_LOG_FLAG_PARTIAL;
	size_t n = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		if (k->nsites && !k->sites)
			return -EINVAL;
		if (k->nsites > SIZE_MAX - n)
			return -ENOMEM;
		n += k->nsites;
		for (int c = 0; c < NT_LOSS_COUNT; c++) {
			uint64_t lost = nt_loss_count(k, (enum nt_loss)c);
			rep->losses[c] = add_sat(rep->losses[c], lost);
			rep->partial |= lost > 0;
		}
	}
	rep->level = log->level;
	rep->log = log;
	struct ref *refs = calloc(n ? n : 1, sizeof *refs); /* calloc checks n * size */
	if (!refs) {
		nt_report_free(rep);
		return -ENOMEM;
	}
	size_t k = 0;
	for (uint32_t r = 0; r < log->nranks; r++)
		for (uint32_t i = 0; i < log->ranks[r].nsites; i++)
			refs[k++] = (struct ref){ &log->ranks[r].sites[i], r };
	qsort(refs, n, sizeof *refs, cmp_ref);
	size_t groups = n ? 1 : 0; /* distinct identities: 5,000 call sites of 4,096 ranks are
				    * 5,000 merged sites, not 2 x 10^7 */
	for (size_t i = 1; i < n; i++)
		groups += nt_site_identity_cmp(refs[i - 1].s, refs[i].s) != 0;
	struct nt_report_site *merged = calloc(groups ? groups : 1, sizeof *merged);
	struct rank_by_total *order = calloc(groups ? groups : 1, sizeof *order);
	struct ident *ident = calloc(groups ? groups : 1, sizeof *ident);
	rep->sites = calloc(groups ? groups : 1, sizeof *rep->sites);
	if (!merged || !order || !ident || !rep->sites) {
		free(refs);
		free(merged);
		free(order);
		free(ident);
		nt_report_free(rep);
		return -ENOMEM;
	}

	/* Merged in identity order, each named once; then ordered by total time. */
	size_t nmerged = 0;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && nt_site_identity_cmp(refs[i].s, refs[j].s) == 0; j++)
			;
		struct nt_report_site *o = &merged[nmerged];
		merge_site(o, &refs[i], j - i, log->nranks);
		const char *py_fn, *py_file;
		size_t py_fn_len;
		if (nt_log_python_site(o->module, &py_fn, &py_fn_len, &py_file)) {
			/* A Python site: its file and line, never addr2line. */
			const char *base = strrchr(py_file, '/') ? strrchr(py_file, '/') + 1 : py_file;
			snprintf(o->location, sizeof o->location, "%s:%llu", base,
				 (unsigned long long)o->offset);
			snprintf(o->caller, sizeof o->caller, "%.*s",
				 (int)(py_fn_len < sizeof o->caller ? py_fn_len : sizeof o->caller - 1),
				 py_fn);
			const char *call;
			size_t call_len;
			if (nt_log_python_call(o->module, &call, &call_len) &&
			    call_len < sizeof o->python_call)
				snprintf(o->python_call, sizeof o->python_call, "%.*s", (int)call_len,
					 call);
		} else if (!symbolize || symbolize(ctx, o->module, o->offset, o->location,
						   sizeof o->location) != 0) {
			const char *base = strrchr(o->module, '/') ? strrchr(o->module, '/') + 1
								   : o->module;
			snprintf(o->location, sizeof o->location, "%s+0x%llx", base,
				 (unsigned long long)o->offset);
		}
		ident[nmerged] = (struct ident){ refs[i].s, 0 };
		order[nmerged] = (struct rank_by_total){ o->time_ns_total, nmerged };
		nmerged++;
	}
	qsort(order, nmerged, sizeof *order, cmp_total_desc);
	for (size_t p = 0; p < nmerged; p++) {
		rep->sites[p] = merged[order[p].at];
		ident[order[p].at].at = p;
	}
	rep->nsites = nmerged;
	rep->by_identity_ = ident;
	free(refs);
	free(merged);
	free(order);
	int rc = nt_attrib_build(log, &rep->attrib);
	if (rc == 0)
		rc = nt_coverage_build(log, &rep->attrib, &rep->coverage);
	if (rc == 0)
		rc = site_coverage(log, rep);
	if (rc == 0)
		rc = nt_report_cpus_build(log, rep);
	if (rc < 0)
		nt_report_free(rep);
	return rc;
}

const struct nt_report_site *nt_report_merged_site(const struct nt_report *rep,
						   const struct nt_log_site *s)
{
	if (!rep || !s || !s->function || !s->module || !rep->nsites)
		return NULL;
	struct ident key = { s, 0 };
	const struct ident *hit = bsearch(&key, rep->by_identity_, rep->nsites, sizeof key,
					  cmp_ident);
	return hit ? &rep->sites[hit->at] : NULL;
}

void nt_report_free(struct nt_report *rep)
{
	if (!rep)
		return;
	free(rep->sites);
	free(rep->by_identity_);
	nt_attrib_free(&rep->attrib);
	nt_coverage_free(&rep->coverage);
	free(rep->site_coverage);
	free(rep->cpus);
	memset(rep, 0, sizeof *rep);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *rank_command(const struct nt_log_rank *k)
{
	return k->command;
}

static const char *rank_host(const struct nt_log_rank *k)
{
	return k->host;
}

/* How many distinct non-empty strings field gives of the ranks (NULL as ""), ranks with a flag
 * of without excluded. O(n log n). 0 or -ENOMEM. */
static int count_distinct(const struct nt_log *log,
			  const char *(*field)(const struct nt_log_rank *), uint32_t without,
			  uint32_t *count)
{
	const char **v = calloc(log->nranks ? log->nranks : 1, sizeof *v);
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const char *s = field(&log->ranks[r]);
		if (s && *s && !(log->ranks[r].flags & without))
			v[n++] = s;
	}
	qsort((void *)v, n, sizeof *v, cmp_str);
	uint32_t k = n ? 1 : 0;
	for (size_t i = 1; i < n; i++)
		k += strcmp(v[i - 1], v[i]) != 0;
	free((void *)v);
	*count = k;
	return 0;
}

int nt_report_job(const struct nt_log *log, struct nt_report_job *job)
{
	*job = (struct nt_report_job){ "", "", "", "", "", "", "", 0, 0 };
	for (uint32_t r = log->nranks; r-- > 0;) { /* the lowest rank's last */
		const struct nt_log_rank *k = &log->ranks[r];
		if (k->command && *k->command)
			job->command = k->command;
		if (k->mpi_library && *k->mpi_library)
			job->mpi_library = k->mpi_library;
		if (k->tool_version && *k->tool_version)
			job->tool_version = k->tool_version;
		if (k->user && *k->user)
			job->user = k->user;
		if (k->batch_job && *k->batch_job) { /* the three together, of one rank */
			job->batch_system = k->batch_system ? k->batch_system : "";
			job->batch_job = k->batch_job;
			job->batch_nodes = k->batch_nodes ? k->batch_nodes : "";
		}
	}
	int rc = count_distinct(log, rank_command, 0, &job->commands);
	if (rc == 0)
		rc = count_distinct(log, rank_host, NT_LOG_FLAG_MISSING, &job->hosts);
	return rc;
}

static int cmp_py_site(const void *a, const void *b)
{
	const struct nt_report_site *x = *(const struct nt_report_site *const *)a,
				    *y = *(const struct nt_report_site *const *)b;
	int c = strcmp(x->module, y->module);
	if (c)
		return c;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x < y ? -1 : x > y; /* the report's order: by time, largest first */
}

static int cmp_py_group(const void *a, const void *b)
{
	const struct nt_report_py_group *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

int nt_report_python_groups(const struct nt_report *rep, const struct nt_report_site ***idx,
			     struct nt_report_py_group **groups, size_t *ngroups)
{
	*idx = NULL;
	*groups = NULL;
	*ngroups = 0;
	size_t n = 0;
	for (size_t i = 0; i < rep->nsites; i++)
		n += rep->sites[i].python_call[0] != '\0';
	if (!n)
		return 0;
	const struct nt_report_site **ix = calloc(n, sizeof *ix);
	struct nt_report_py_group *g = calloc(n, sizeof *g);
	if (!ix || !g) {
		free((void *)ix);
		free(g);
		return -ENOMEM;
	}
	for (size_t i = 0, k = 0; i < rep->nsites; i++)
		if (rep->sites[i].python_call[0])
			ix[k++] = &rep->sites[i];
	qsort(ix, n, sizeof *ix, cmp_py_site);
	size_t ng = 0;
	for (size_t i = 0, j; i < n; i = j) {
		const struct nt_report_site *s = ix[i];
		g[ng] = (struct nt_report_py_group){ i, 0, 0, 0 };
		for (j = i; j < n && ix[j]->offset == s->offset &&
			    strcmp(ix[j]->module, s->module) == 0;
		     j++) {
			g[ng].calls += ix[j]->calls;
			g[ng].time_ns += ix[j]->time_ns_total;
		}
		g[ng++].n = j - i;
	}
	qsort(g, ng, sizeof *g, cmp_py_group);
	*idx = ix;
	*groups = g;
	*ngroups = ng;
	return 0;
}

const char *nt_report_level_name(uint32_t level)
{
	return level == 0 ? "timing" : level == 1 ? "os" : level == 2 ? "full" : "?";
}

const char *nt_report_wait_name(uint32_t wait_mode)
{
	static const char *const names[] = {
#define NT_WAIT_NAME_(id, code, name) [code] = name,
		NT_LOG_WAIT_MODES(NT_WAIT_NAME_)
#undef NT_WAIT_NAME_
	};
	return wait_mode < NT_LOG_WAIT_COUNT ? names[wait_mode] : "?";
}

uint64_t nt_report_others_span_ns(const struct nt_log_rank *k)
{
	return k->wall_ns > k->others_from_ns ? k->wall_ns - k->others_from_ns : 0;
}

double nt_report_probe_pct(const struct nt_log_rank *k)
{
	return k->wall_ns ? 100.0 *
				    ((double)k->probe_reads * (double)k->probe_cost_ns +
				     (double)k->scan_ns) /
				    (double)k->wall_ns
			  : 0;
}


void nt_report_causes_json(struct nt_json *j)
{
	nt_json_array_begin(j, "causes");
	for (int k = 0; k < NT_CAUSE_COUNT; k++) {
		const struct nt_cause_info *c = nt_cause_info((enum nt_cause)k);
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "key", c->key);
		nt_json_string(j, "json", nt_cause_key((enum nt_cause)k));
		nt_json_string(j, "column", c->column);
		nt_json_string(j, "words", c->words);
		nt_json_string(j, "colour", c->colour);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
}
