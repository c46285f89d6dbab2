/* Merging a job log into a report, and its writers. */
#include "nt-config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/report.h>

#include "json-write.h"
#include "site-identity.h"
#include "site-index.h"
#include "utf8.h"

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
	memset(rep, 0, sizeof *rep);
}

/* s for a terminal: each byte that is a control character (an escape sequence in a host or
 * function name would drive the terminal), a C1 control or not UTF-8 becomes '?'. At most
 * size - 1 bytes, never a sequence cut in two. Returns buf. */
static const char *printable(const char *s, char *buf, size_t size)
{
	size_t n = 0;
	for (const char *p = s ? s : ""; *p && n + 1 < size;) {
		size_t len = nt_utf8_length(p);
		unsigned char c = (unsigned char)p[0], c1 = (unsigned char)p[1];
		bool control = len == 1 ? c < 0x20 || c == 0x7f : len == 2 && c == 0xc2 && c1 < 0xa0;
		if (len == 0 || control) {
			buf[n++] = '?';
			p += len ? len : 1;
			continue;
		}
		if (n + len >= size)
			break;
		memcpy(buf + n, p, len);
		n += len;
		p += len;
	}
	buf[n] = '\0';
	return buf;
}

/* The job as its ranks recorded it (log version 4): the command line, MPI library and tool of
 * the lowest rank that has one (rank 0 but when it left nothing), how many distinct command
 * lines the ranks ran (more than 1: an MPMD job) and on how many hosts (of the ranks that left
 * data). */
struct job_summary {
	const char *command, *mpi_library, *tool_version;
	uint32_t commands, hosts;
};

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

static int job_summary(const struct nt_log *log, struct job_summary *job)
{
	*job = (struct job_summary){ "", "", "", 0, 0 };
	for (uint32_t r = log->nranks; r-- > 0;) { /* the lowest rank's last */
		const struct nt_log_rank *k = &log->ranks[r];
		if (k->command && *k->command)
			job->command = k->command;
		if (k->mpi_library && *k->mpi_library)
			job->mpi_library = k->mpi_library;
		if (k->tool_version && *k->tool_version)
			job->tool_version = k->tool_version;
	}
	int rc = count_distinct(log, rank_command, 0, &job->commands);
	if (rc == 0)
		rc = count_distinct(log, rank_host, NT_LOG_FLAG_MISSING, &job->hosts);
	return rc;
}

/* The job's lines of the text report: its command line and MPI library, each cut to a line. */
static void write_job_text(FILE *f, const struct nt_log *log)
{
	struct job_summary job;
	if (job_summary(log, &job) != 0)
		return;
	char buf[120];
	if (*job.command) {
		printable(job.command, buf, sizeof buf);
		fprintf(f, "command: %s%s", buf, strlen(buf) < strlen(job.command) ? " ..." : "");
		if (job.commands > 1)
			fprintf(f, " (one of %u different command lines: an MPMD job)", job.commands);
		fputc('\n', f);
	}
	if (*job.mpi_library) {
		printable(job.mpi_library, buf, sizeof buf);
		fprintf(f, "MPI: %s%s\n", buf, strlen(buf) < strlen(job.mpi_library) ? " ..." : "");
	}
}

static const char *level_name(uint32_t level)
{
	return level == 0 ? "timing" : level == 1 ? "os" : level == 2 ? "full" : "?";
}

static void culprit_row(FILE *f, const char *who, const struct nt_culprit *c)
{
	fprintf(f, "%-36s %10.3f %8llu", who, (double)c->delay_ns / 1e6,
		(unsigned long long)c->instances);
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		fprintf(f, " %5.1f", c->delay_ns ? 100.0 * (double)c->causes.ns[k] /
							 (double)c->delay_ns : 0.0);
	fputc('\n', f);
}

static void culprit_header(FILE *f, const char *what)
{
	fprintf(f, "%-36s %10s %8s %5s %5s %5s %5s %5s %5s\n", what, "delay ms", "late",
		"preem", "block", "fault", "work", "inj", "unexp");
}

/* The culprits: ranks, nodes and call sites by the delay they imposed, with the causes in %. */
/* A site's location for the text table: a Python site's "file.py:line" followed by its call
 * ("script.py:19 comm.allreduce"), any other as it is. Returns buf. */
static const char *site_location(const struct nt_report_site *s, char *buf, size_t size)
{
	char loc[sizeof s->location], call[sizeof s->python_call];
	printable(s->location, loc, sizeof loc);
	if (!s->python_call[0])
		snprintf(buf, size, "%s", loc);
	else
		snprintf(buf, size, "%s %s", loc, printable(s->python_call, call, sizeof call));
	return buf;
}

/* The MPI calls of one named Python call site: the merged sites of one module (function, call
 * and file) and line, whatever their MPI function. */
struct py_group {
	size_t first, n;          /* in the index array */
	uint64_t calls, time_ns;
};

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
	const struct py_group *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The named Python calls of rep: *idx the Python sites with a call name, grouped; *groups by MPI
 * time, largest first. 0 (with *ngroups 0 and nothing to free when there is none) or -ENOMEM. */
static int python_groups(const struct nt_report *rep, const struct nt_report_site ***idx, struct py_group **groups,
			 size_t *ngroups)
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
	struct py_group *g = calloc(n, sizeof *g);
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
		g[ng] = (struct py_group){ i, 0, 0, 0 };
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

/* "MPI calls by Python call": a line per named Python call site, its MPI calls and time
 * summed, and the MPI functions it is made of. Nothing when no site has a call name. */
static void write_python_calls_text(FILE *f, const struct nt_report *rep, size_t top)
{
	const struct nt_report_site **idx;
	size_t ng;
	struct py_group *g;
	if (python_groups(rep, &idx, &g, &ng) < 0 || !ng)
		return;
	size_t shown = top && top < ng ? top : ng;
	fprintf(f, "\nMPI calls by Python call (the MPI calls each Python call site is made of; "
		   "how many Python calls they were is not known)\n");
	fprintf(f, "%-24s %-36s %12s %12s  %s\n", "python call", "location", "MPI calls",
		"MPI ms", "MPI functions (calls)");
	for (size_t k = 0; k < shown; k++) {
		const struct nt_report_site *s = idx[g[k].first];
		char call[sizeof s->python_call], loc[sizeof s->location], fn[256];
		fprintf(f, "%-24s %-36s %12llu %12.3f ",
			printable(s->python_call, call, sizeof call),
			printable(s->location, loc, sizeof loc), (unsigned long long)g[k].calls,
			(double)g[k].time_ns / 1e6);
		for (size_t i = 0; i < g[k].n; i++) {
			const struct nt_report_site *m = idx[g[k].first + i];
			fprintf(f, "%s %s %llu", i ? "," : "", printable(m->function, fn, sizeof fn),
				(unsigned long long)m->calls);
		}
		fputc('\n', f);
	}
	if (shown < ng)
		fprintf(f, "(%zu more Python calls; --top 0 shows all)\n", ng - shown);
	free((void *)idx);
	free(g);
}

/* "python_calls": the JSON of write_python_calls_text (all of them). */
static void write_python_calls_json(struct nt_json *j, const struct nt_report *rep)
{
	const struct nt_report_site **idx;
	size_t ng;
	struct py_group *g;
	nt_json_array_begin(j, "python_calls");
	if (python_groups(rep, &idx, &g, &ng) < 0)
		j->error = true; /* the document would lie by omission */
	for (size_t k = 0; k < ng; k++) {
		const struct nt_report_site *s = idx[g[k].first];
		const char *py_file = "";
		nt_log_python_site(s->module, NULL, NULL, &py_file);
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "python_call", s->python_call);
		nt_json_string(j, "location", s->location);
		nt_json_string(j, "file", py_file);
		nt_json_uint(j, "line", s->offset);
		nt_json_string(j, "caller", s->caller);
		nt_json_uint(j, "mpi_calls", g[k].calls);
		nt_json_uint(j, "time_ns_total", g[k].time_ns);
		nt_json_array_begin(j, "mpi_functions");
		for (size_t i = 0; i < g[k].n; i++) {
			const struct nt_report_site *m = idx[g[k].first + i];
			nt_json_object_begin(j, NULL);
			nt_json_string(j, "function", m->function);
			nt_json_uint(j, "calls", m->calls);
			nt_json_uint(j, "time_ns_total", m->time_ns_total);
			nt_json_object_end(j);
		}
		nt_json_array_end(j);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	free((void *)idx);
	free(g);
}

static void write_culprits_text(FILE *f, const struct nt_report *rep)
{
	const struct nt_attrib *a = &rep->attrib;
	fprintf(f, "\nLate arrivals: %llu of %llu joined instances were late by more than %.1f us "
		   "(global clock error <= %.1f us)\n",
		(unsigned long long)a->instances_late, (unsigned long long)a->instances_joined,
		(double)a->threshold_ns / 1e3, (double)a->clock_error_ns / 1e3);
	if (a->clock_test_error_ns)
		fprintf(f, "clock test (NOISETOOL_TEST_CLOCK): largest error of a corrected time "
			   "%.3f us\n", (double)a->clock_test_error_ns / 1e3);
	if (!a->instances_late)
		return;
	fprintf(f, "total delay imposed %.3f ms; the last arriver also waited least inside the "
		   "collective in %llu of them%s\n",
		(double)a->total_delay_ns / 1e6, (unsigned long long)a->crosscheck_agree,
		a->instances_no_window ? " (some without OS data: level timing or a rate-limited "
					 "window)" : "");
	fprintf(f, "\nCulprits by rank (causes in %% of the delay)\n");
	culprit_header(f, "rank (host)");
	for (size_t i = 0; i < a->nranks; i++) {
		char who[64], host[41];
		snprintf(who, sizeof who, "%u (%s)", a->ranks[i].rank,
			 printable(a->ranks[i].host, host, sizeof host));
		culprit_row(f, who, &a->ranks[i]);
	}
	if (a->nnodes > 1) {
		fprintf(f, "\nCulprits by node\n");
		culprit_header(f, "host");
		for (size_t i = 0; i < a->nnodes; i++) {
			char host[256];
			culprit_row(f, printable(a->nodes[i].host, host, sizeof host), &a->nodes[i]);
		}
	}
	fprintf(f, "\nCulprits by call site (of the last arriver)\n");
	culprit_header(f, "function at location");
	for (size_t i = 0; i < a->nsites && i < 10; i++) {
		const struct nt_report_site *s = nt_report_merged_site(rep, a->sites[i].site);
		char who[96], fn[21], loc[61];
		snprintf(who, sizeof who, "%s %s", printable(a->sites[i].site->function, fn, sizeof fn),
			 printable(s ? s->location : "?", loc, sizeof loc));
		culprit_row(f, who, &a->sites[i]);
	}
}

int nt_report_write_late(FILE *f, const struct nt_report *rep, size_t n)
{
	if (!f || !rep)
		return -EINVAL;
	const struct nt_attrib *a = &rep->attrib;
	if (n > a->nlate)
		n = a->nlate;
	if (!n)
		return 0;
	fprintf(f, "\nThe %zu latest instances (causes in %% of the delay)\n", n);
	fprintf(f, "%10s %-22s %-30s %5s %9s %5s %5s %5s %5s %5s %5s\n", "at ms", "comm:seq",
		"function at location", "last", "delay us", "preem", "block", "fault", "work", "inj",
		"unexp");
	for (size_t i = 0; i < n; i++) {
		const struct nt_late *l = &a->late[i];
		const struct nt_report_site *s = nt_report_merged_site(rep, l->site);
		char inst[48], where[96], fn[15], loc[41];
		if (l->comm_id == 0)
			snprintf(inst, sizeof inst, "world:%llu", (unsigned long long)l->seq);
		else
			snprintf(inst, sizeof inst, "%llx:%llu", (unsigned long long)l->comm_id,
				 (unsigned long long)l->seq);
		snprintf(where, sizeof where, "%s %s",
			 printable(l->site ? l->site->function : "?", fn, sizeof fn),
			 printable(s ? s->location : "?", loc, sizeof loc));
		fprintf(f, "%10.3f %-22s %-30s %5u %9.1f", (double)l->start_ns / 1e6, inst, where,
			l->rank, (double)l->delay_ns / 1e3);
		for (int k = 0; k < NT_CAUSE_COUNT; k++)
			fprintf(f, " %5.1f", l->delay_ns ? 100.0 * (double)l->causes.ns[k] /
								 (double)l->delay_ns : 0.0);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* Share of the rank's wall time spent reading OS counters (budget 1 %). */
static double probe_pct(const struct nt_log_rank *k)
{
	return k->wall_ns ? 100.0 * (double)k->probe_reads * (double)k->probe_cost_ns /
				    (double)k->wall_ns : 0;
}

/* After "N ranks, level L, ": "complete", or each kind of loss with its count over all
 * ranks, one per line, each line "PARTIAL: ..." (the first on the line begun). */
/* The ranks whose block has flag, as "rank 3" or "ranks 0, 1, 5" (the first 20, then "..."),
 * into buf. Returns how many. */
static uint32_t ranks_with(const struct nt_log *log, uint32_t flag, uint32_t without, char *buf,
			   size_t size)
{
	uint32_t n = 0;
	size_t len = 0;
	buf[0] = '\0';
	for (uint32_t r = 0; r < log->nranks; r++) {
		if (!(log->ranks[r].flags & flag) || (log->ranks[r].flags & without))
			continue;
		if (n < 20 && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%u", n ? ", " : "",
						log->ranks[r].rank);
		else if (n == 20 && len < size)
			len += (size_t)snprintf(buf + len, size - len, ", ...");
		n++;
	}
	return n;
}

/* The ranks of a job read from its live files (noisetool/live.h): those that still ran, those
 * that ended without MPI_Finalize, those that left nothing. Whether it named any. */
static bool write_unfinished_text(FILE *f, const struct nt_log *log)
{
	char list[256];
	bool named = false;
	uint32_t n = ranks_with(log, NT_LOG_FLAG_RUNNING, 0, list, sizeof list);
	if (n) {
		fprintf(f, "PARTIAL: %s %s still %s on this host: a snapshot of a job in progress "
			   "(report again once it has ended)\n",
			n == 1 ? "rank" : "ranks", list, n == 1 ? "runs" : "run");
		named = true;
	}
	n = ranks_with(log, NT_LOG_FLAG_UNFINISHED, NT_LOG_FLAG_RUNNING, list, sizeof list);
	if (n) {
		fprintf(f, "PARTIAL: %s %s ended without MPI_Finalize (killed, crashed, aborted or "
			   "stopped at a time limit): %s calls and records up to then, from the live "
			   "files\n",
			n == 1 ? "rank" : "ranks", list, n == 1 ? "its" : "their");
		named = true;
	}
	n = ranks_with(log, NT_LOG_FLAG_ABORTED, 0, list, sizeof list);
	if (n)
		fprintf(f, "PARTIAL: %s %s called MPI_Abort\n", n == 1 ? "rank" : "ranks", list);
	n = ranks_with(log, NT_LOG_FLAG_MISSING, 0, list, sizeof list);
	if (n) {
		fprintf(f, "PARTIAL: %s %s left no data (no live file: %s never started the tool, or "
			   "the file was lost)\n",
			n == 1 ? "rank" : "ranks", list, n == 1 ? "it" : "they");
		named = true;
	}
	return named;
}

static void write_losses_text(FILE *f, const struct nt_report *rep)
{
	if (!rep->partial) {
		fprintf(f, "complete\n");
		return;
	}
	bool named = write_unfinished_text(f, rep->log);
	for (int k = 0; k < NT_LOSS_COUNT; k++) {
		if (!rep->losses[k])
			continue;
		char what[256];
		nt_loss_describe((enum nt_loss)k, rep->losses[k], what, sizeof what);
		fprintf(f, "PARTIAL: %s\n", what);
		named = true;
	}
	if (named)
		return;
	if (rep->log->version < 3)
		fprintf(f, "PARTIAL: a rank lost what a version %u log does not count (nonblocking or "
			   "persistent instances not timed, or records on communicators without an "
			   "id; the job's stderr said how many)\n", rep->log->version);
	else
		fprintf(f, "PARTIAL: the log is marked partial but counts no loss\n");
}

/* The rank table's note on what a rank lost. */
static void write_rank_losses_text(FILE *f, const struct nt_log_rank *k)
{
	static const char *const note[NT_LOSS_COUNT] = {
		"calls at merged sites", "records dropped", "instances not timed",
		"persistent collectives not registered", "records on communicators without an id",
	};
	for (int i = 0; i < NT_LOSS_COUNT; i++)
		if (nt_loss_count(k, (enum nt_loss)i))
			fprintf(f, "  (%s)", note[i]);
}

int nt_report_write_text(FILE *f, const struct nt_report *rep, const char *log_path, size_t top)
{
	if (!f || !rep)
		return -EINVAL;
	const struct nt_log *log = rep->log;
	char path[4096];
	fprintf(f, "noisetool report: %s\n", printable(log_path, path, sizeof path));
	write_job_text(f, log);
	fprintf(f, "%u rank%s, level %s, ", rep->nranks, rep->nranks == 1 ? "" : "s",
		level_name(rep->level));
	write_losses_text(f, rep);
	fputc('\n', f);
	fprintf(f, "%6s  %-20s %12s %12s %8s %10s %8s %12s\n", "rank", "host", "wall s", "MPI s",
		"MPI %", "records", "probe %", "injected ms");
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		char host[21];
		fprintf(f, "%6u  %-20s %12.6f %12.6f %8.2f %10llu %8.2f %12.3f", k->rank,
			printable(k->host, host, sizeof host), (double)k->wall_ns / 1e9, (double)k->mpi_ns / 1e9,
			k->wall_ns ? 100.0 * (double)k->mpi_ns / (double)k->wall_ns : 0,
			(unsigned long long)k->nrecords, probe_pct(k), (double)k->injected_ns / 1e6);
		write_rank_losses_text(f, k);
		fputc('\n', f);
	}
	size_t n = top && top < rep->nsites ? top : rep->nsites;
	fprintf(f, "\nCall sites by MPI time (cov: spread of the per-rank time across ranks)\n");
	/* The location column fits its longest entry (a Python site adds its call), up to 80. */
	int loc_w = 36;
	for (size_t i = 0; i < n; i++) {
		const struct nt_report_site *s = &rep->sites[i];
		char loc[sizeof s->location + sizeof s->python_call + 1];
		int len = (int)strlen(site_location(s, loc, sizeof loc));
		loc_w = len > loc_w ? (len < 80 ? len : 80) : loc_w;
	}
	fprintf(f, "%-24s %-*s %12s %12s %12s %12s %6s %12s\n", "function", loc_w, "location",
		"calls", "total ms", "max/rank ms", "max call us", "cov", "bytes/call");
	for (size_t i = 0; i < n; i++) {
		const struct nt_report_site *s = &rep->sites[i];
		char fn[256], loc[sizeof s->location + sizeof s->python_call + 1];
		fprintf(f, "%-24s %-*s %12llu %12.3f %12.3f %12.1f %6.3f %12.0f\n",
			printable(s->function, fn, sizeof fn), loc_w, site_location(s, loc, sizeof loc),
			(unsigned long long)s->calls, (double)s->time_ns_total / 1e6,
			(double)s->time_ns_max_rank / 1e6, (double)s->time_ns_max / 1e3, s->cov,
			s->calls ? (double)s->bytes / (double)s->calls : 0.0);
	}
	if (n < rep->nsites)
		fprintf(f, "(%zu more call sites; --top 0 shows all)\n", rep->nsites - n);
	write_python_calls_text(f, rep, top);
	write_culprits_text(f, rep);
	return ferror(f) ? -EIO : 0;
}

static void write_culprit_json(struct nt_json *j, const struct nt_culprit *c)
{
	nt_json_uint(j, "delay_ns", c->delay_ns);
	nt_json_uint(j, "instances", c->instances);
	nt_json_object_begin(j, "causes");
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		nt_json_uint(j, nt_cause_key((enum nt_cause)k), c->causes.ns[k]);
	nt_json_object_end(j);
}

/* The report's JSON object (doc/report-json.md) into j; with "log": log_path when it is set. */
static void write_json(struct nt_json *j, const struct nt_report *rep, const char *log_path)
{
	nt_json_object_begin(j, NULL);
	nt_json_string(j, "schema", "noisetool-report/1");
	if (log_path)
		nt_json_string(j, "log", log_path);
	nt_json_string(j, "version", NT_VERSION);
	nt_json_uint(j, "ranks", rep->nranks);
	nt_json_uint(j, "log_version", rep->log->version);
	nt_json_bool(j, "partial", rep->partial);
	nt_json_object_begin(j, "losses"); /* over all ranks */
	for (int k = 0; k < NT_LOSS_COUNT; k++)
		nt_json_uint(j, nt_loss_key((enum nt_loss)k), rep->losses[k]);
	nt_json_object_end(j);
	/* The ranks of a job read from its live files that had not finished MPI_Finalize, those
	 * of them that called MPI_Abort, those that left nothing, and those whose process still
	 * ran (all empty for a log MPI_Finalize wrote). */
	const char *const lists[4] = { "unfinished_ranks", "aborted_ranks", "missing_ranks",
				       "running_ranks" };
	const uint32_t flags[4] = { NT_LOG_FLAG_UNFINISHED, NT_LOG_FLAG_ABORTED,
				    NT_LOG_FLAG_MISSING, NT_LOG_FLAG_RUNNING };
	for (int l = 0; l < 4; l++) {
		nt_json_array_begin(j, lists[l]);
		for (uint32_t r = 0; r < rep->log->nranks; r++)
			if (rep->log->ranks[r].flags & flags[l])
				nt_json_uint(j, NULL, rep->log->ranks[r].rank);
		nt_json_array_end(j);
	}
	nt_json_string(j, "level", level_name(rep->level));
	struct job_summary job;
	if (job_summary(rep->log, &job) != 0)
		j->error = true; /* the document would lie by omission */
	nt_json_object_begin(j, "job");
	nt_json_string(j, "command", job.command);
	nt_json_uint(j, "commands", job.commands);
	nt_json_string(j, "mpi", job.mpi_library);
	nt_json_string(j, "tool_version", job.tool_version);
	nt_json_uint(j, "created_unix_ns", rep->log->created_unix_ns);
	nt_json_uint(j, "hosts", job.hosts);
	nt_json_object_end(j);
	nt_json_array_begin(j, "rank_times");
	for (uint32_t r = 0; r < rep->nranks; r++) {
		const struct nt_log_rank *k = &rep->log->ranks[r];
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "rank", k->rank);
		nt_json_string(j, "host", k->host);
		nt_json_uint(j, "wall_ns", k->wall_ns);
		nt_json_uint(j, "mpi_ns", k->mpi_ns);
		nt_json_uint(j, "dropped_calls", k->dropped);
		nt_json_uint(j, "records", k->nrecords);
		nt_json_uint(j, "dropped_records", k->dropped_records);
		nt_json_uint(j, "untimed_instances", k->untimed_instances);
		nt_json_uint(j, "unregistered_persistent", k->unregistered_persistent);
		nt_json_uint(j, "unknown_comm_records", k->unknown_comm_records);
		nt_json_uint(j, "probe_reads", k->probe_reads);
		nt_json_uint(j, "probe_read_ns", k->probe_cost_ns);
		nt_json_double(j, "probe_pct", probe_pct(k));
		nt_json_uint(j, "injected_ns", k->injected_ns);
		nt_json_uint(j, "injected_count", k->injected_count);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	const struct nt_attrib *a = &rep->attrib;
	nt_json_object_begin(j, "clock_sync");
	nt_json_string(j, "method", "ping-pong over a binomial tree at MPI_Init and MPI_Finalize "
				     "(offset and drift)");
	nt_json_uint(j, "max_error_ns", a->clock_error_ns);
	if (a->clock_test_error_ns)
		nt_json_uint(j, "test_error_ns", a->clock_test_error_ns);
	nt_json_object_end(j);
	nt_json_object_begin(j, "attribution");
	nt_json_uint(j, "instances_joined", a->instances_joined);
	nt_json_uint(j, "instances_late", a->instances_late);
	nt_json_uint(j, "threshold_ns", a->threshold_ns);
	nt_json_uint(j, "total_delay_ns", a->total_delay_ns);
	nt_json_uint(j, "crosscheck_agree", a->crosscheck_agree);
	nt_json_uint(j, "instances_without_os_data", a->instances_no_window);
	nt_json_object_end(j);
	nt_json_array_begin(j, "culprits");
	for (size_t i = 0; i < a->nranks; i++) {
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "rank", a->ranks[i].rank);
		nt_json_string(j, "host", a->ranks[i].host);
		write_culprit_json(j, &a->ranks[i]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_array_begin(j, "late_instances"); /* the 1000 latest */
	for (size_t i = 0; i < a->nlate && i < 1000; i++) {
		const struct nt_late *l = &a->late[i];
		const struct nt_report_site *s = nt_report_merged_site(rep, l->site);
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "comm_id", l->comm_id);
		nt_json_uint(j, "seq", l->seq);
		nt_json_uint(j, "time_ns", l->start_ns);
		nt_json_uint(j, "last_rank", l->rank);
		nt_json_uint(j, "members", l->members);
		nt_json_string(j, "function", l->site ? l->site->function : "");
		nt_json_string(j, "location", s ? s->location : "");
		nt_json_uint(j, "delay_ns", l->delay_ns);
		nt_json_object_begin(j, "causes");
		for (int k = 0; k < NT_CAUSE_COUNT; k++)
			nt_json_uint(j, nt_cause_key((enum nt_cause)k), l->causes.ns[k]);
		nt_json_object_end(j);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_array_begin(j, "culprit_nodes");
	for (size_t i = 0; i < a->nnodes; i++) {
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "host", a->nodes[i].host);
		write_culprit_json(j, &a->nodes[i]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_array_begin(j, "culprit_sites");
	for (size_t i = 0; i < a->nsites; i++) {
		const struct nt_report_site *s = nt_report_merged_site(rep, a->sites[i].site);
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "function", a->sites[i].site->function);
		nt_json_string(j, "location", s ? s->location : "");
		write_culprit_json(j, &a->sites[i]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_array_begin(j, "sites");
	for (size_t i = 0; i < rep->nsites; i++) {
		const struct nt_report_site *s = &rep->sites[i];
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "function", s->function);
		nt_json_string(j, "location", s->location);
		nt_json_string(j, "module", s->module);
		nt_json_uint(j, "offset", s->offset);
		const char *py_file;
		if (nt_log_python_site(s->module, NULL, NULL, &py_file)) {
			nt_json_string(j, "language", "python");
			nt_json_string(j, "file", py_file);
			nt_json_uint(j, "line", s->offset);
			nt_json_string(j, "caller", s->caller);
			nt_json_string(j, "python_call", s->python_call);
		}
		nt_json_uint(j, "calls", s->calls);
		nt_json_uint(j, "time_ns_total", s->time_ns_total);
		nt_json_uint(j, "time_ns_max", s->time_ns_max);
		nt_json_uint(j, "time_ns_max_rank", s->time_ns_max_rank);
		nt_json_uint(j, "bytes_total", s->bytes);
		nt_json_double(j, "bytes_per_call",
			       s->calls ? (double)s->bytes / (double)s->calls : 0.0);
		nt_json_uint(j, "max_rank", s->max_rank);
		nt_json_uint(j, "ranks_calling", s->ranks);
		nt_json_double(j, "cov", s->cov);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	write_python_calls_json(j, rep);
	nt_json_object_end(j);
}

int nt_report_write_json(FILE *f, const struct nt_report *rep)
{
	if (!f || !rep)
		return -EINVAL;
	struct nt_json j;
	nt_json_init(&j, f);
	write_json(&j, rep, NULL);
	return nt_json_finish(&j);
}

int nt_report_write_json_item(FILE *f, const struct nt_report *rep, const char *log_path,
			      bool first)
{
	if (!f || !rep || !log_path)
		return -EINVAL;
	if (first)
		fputc('[', f);
	/* A writer one level down, inside the array the caller's '[' opened. */
	struct nt_json j;
	nt_json_init(&j, f);
	j.depth = 1;
	j.need_comma[1] = !first;
	write_json(&j, rep, log_path);
	return j.error || j.depth != 1 || ferror(f) ? -EIO : 0;
}

int nt_report_write_json_array_end(FILE *f)
{
	if (!f)
		return -EINVAL;
	fputs("\n]\n", f);
	return ferror(f) ? -EIO : 0;
}
