/* A report's tables as CSV files (noisetool/report-csv.h): RFC 4180, a header row, the numbers
 * of the JSON report (doc/report-csv.md). */
#include "nt-config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <noisetool/outfile.h>
#include <noisetool/report-csv.h>

#include "report-merge.h"
#include "utf8.h"

/* The files, in the order written. */
enum table {
	COVERAGE, COVERAGE_SITES, SITES, RANKS, OTHER_TASKS, CULPRITS, CULPRIT_NODES,
	CULPRIT_SITES, LATE, TABLES
};

static const char *const file_name[TABLES] = {
	"coverage.csv", "coverage-sites.csv", "sites.csv", "ranks.csv", "other-tasks.csv",
	"culprits.csv", "culprit-nodes.csv", "culprit-sites.csv", "late.csv",
};

/* A row under construction: fields separated by commas, the row ended by CRLF (RFC 4180). */
struct row {
	FILE *f;
	bool first;
};

static void row_begin(struct row *w, FILE *f)
{
	w->f = f;
	w->first = true;
}

static void sep(struct row *w)
{
	if (!w->first)
		fputc(',', w->f);
	w->first = false;
}

static void row_end(struct row *w)
{
	fputs("\r\n", w->f);
}

/* A text field: quoted when it holds a comma, a quote, CR or LF (quotes doubled), or starts or
 * ends with a space (which some readers strip); a byte that starts no UTF-8 sequence becomes
 * U+FFFD, as in the JSON report. */
static void text(struct row *w, const char *s)
{
	sep(w);
	s = s ? s : "";
	size_t len = strlen(s);
	bool quote = strpbrk(s, ",\"\r\n") != NULL || (len && (s[0] == ' ' || s[len - 1] == ' '));
	if (quote)
		fputc('"', w->f);
	for (const char *p = s; *p;) {
		size_t n = nt_utf8_length(p);
		if (n == 0) {
			fputs("\xef\xbf\xbd", w->f);
			p++;
			continue;
		}
		if (*p == '"')
			fputc('"', w->f);
		fwrite(p, 1, n, w->f);
		p += n;
	}
	if (quote)
		fputc('"', w->f);
}

static void u64(struct row *w, uint64_t v)
{
	sep(w);
	fprintf(w->f, "%" PRIu64, v);
}

/* A real number as the JSON report writes it (%.10g); empty when it is not finite. */
static void real(struct row *w, double v)
{
	sep(w);
	if (v == v && v - v == 0)
		fprintf(w->f, "%.10g", v);
}

/* A header row from a NULL-terminated list of names. */
static void header(FILE *f, const char *const *names)
{
	struct row w;
	row_begin(&w, f);
	for (const char *const *n = names; *n; n++)
		text(&w, *n);
	row_end(&w);
}

/* The header names of the six causes, after the columns before them. */
static void header_causes(FILE *f, const char *const *before)
{
	struct row w;
	row_begin(&w, f);
	for (const char *const *n = before; *n; n++)
		text(&w, *n);
	for (int c = 0; c < NT_CAUSE_COUNT; c++)
		text(&w, nt_cause_key((enum nt_cause)c));
	row_end(&w);
}

static void causes(struct row *w, const struct nt_causes *c)
{
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		u64(w, c->ns[k]);
}

static void write_sites(FILE *f, const struct nt_report *rep)
{
	static const char *const names[] = {
		"function", "location", "module", "offset", "calls", "time_ns_total", "time_ns_max",
		"time_ns_max_rank", "bytes_total", "bytes_per_call", "max_rank", "ranks_calling",
		"cov", "language", "file", "line", "caller", "python_call", NULL,
	};
	header(f, names);
	for (size_t i = 0; i < rep->nsites; i++) {
		const struct nt_report_site *s = &rep->sites[i];
		const char *py_file;
		bool python = nt_log_python_site(s->module, NULL, NULL, &py_file);
		struct row w;
		row_begin(&w, f);
		text(&w, s->function);
		text(&w, s->location);
		text(&w, s->module);
		u64(&w, s->offset);
		u64(&w, s->calls);
		u64(&w, s->time_ns_total);
		u64(&w, s->time_ns_max);
		u64(&w, s->time_ns_max_rank);
		u64(&w, s->bytes);
		real(&w, s->calls ? (double)s->bytes / (double)s->calls : 0.0);
		u64(&w, s->max_rank);
		u64(&w, s->ranks);
		real(&w, s->cov);
		text(&w, python ? "python" : "");
		text(&w, python ? py_file : "");
		if (python)
			u64(&w, s->offset);
		else
			text(&w, "");
		text(&w, s->caller);
		text(&w, s->python_call);
		row_end(&w);
	}
}

static void coverage_row(FILE *f, const char *who, const char *where,
			 const struct nt_coverage_part *c)
{
	struct row w;
	row_begin(&w, f);
	text(&w, who);
	if (where)
		text(&w, where);
	u64(&w, c->mpi_ns);
	u64(&w, c->coll_ns);
	u64(&w, c->own_ns);
	u64(&w, c->over_ns);
	u64(&w, c->waited_ns);
	u64(&w, c->held_ns);
	u64(&w, c->cause_ns);
	u64(&w, c->unexplained_ns);
	u64(&w, c->no_data_ns);
	u64(&w, c->over_ns - c->waited_ns - c->held_ns);
	row_end(&w);
}

/* How much of the MPI time the attribution accounts for (coverage.h): the job ("all"), then a
 * row a rank. */
static void write_coverage(FILE *f, const struct nt_report *rep)
{
	static const char *const names[] = {
		"rank", "mpi_ns", "collective_ns", "own_cost_ns", "over_own_cost_ns",
		"late_arrivals_ns", "held_inside_ns", "with_cause_ns", "unexplained_ns",
		"not_measured_ns", "not_accounted_ns", NULL,
	};
	header(f, names);
	coverage_row(f, "all", NULL, &rep->coverage.all);
	for (size_t r = 0; r < rep->coverage.nranks; r++) {
		char who[24];
		snprintf(who, sizeof who, "%zu", r);
		coverage_row(f, who, NULL, &rep->coverage.ranks[r]);
	}
}

/* The same by collective call site (merged across ranks), in the sites' order. */
static void write_coverage_sites(FILE *f, const struct nt_report *rep)
{
	static const char *const names[] = {
		"function", "location", "mpi_ns", "collective_ns", "own_cost_ns",
		"over_own_cost_ns", "late_arrivals_ns", "held_inside_ns", "with_cause_ns",
		"unexplained_ns", "not_measured_ns", "not_accounted_ns", NULL,
	};
	header(f, names);
	for (size_t i = 0; rep->site_coverage && i < rep->nsites; i++)
		if (rep->site_coverage[i].coll_ns)
			coverage_row(f, rep->sites[i].function, rep->sites[i].location,
				     &rep->site_coverage[i]);
}

static void write_ranks(FILE *f, const struct nt_report *rep)
{
	static const char *const names[] = {
		"rank", "host", "wall_ns", "mpi_ns", "dropped_calls", "records", "dropped_records",
		"untimed_instances", "unregistered_persistent", "unknown_comm_records",
		"probe_reads", "probe_read_ns", "probe_pct", "injected_ns", "injected_count",
		"unfinished", "aborted", "missing", "running", "unwritten", "cpus", "cpu_ns",
		"run_delay_ns", "cpus_busy_ns", "cpus_steal_ns", "ranks_within", "on_cpu_share",
		"waited_share", "job_share", "others_share", "steal_share", NULL,
	};
	header(f, names);
	const struct nt_log *log = rep->log;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		struct row w;
		row_begin(&w, f);
		u64(&w, k->rank);
		text(&w, k->host);
		u64(&w, k->wall_ns);
		u64(&w, k->mpi_ns);
		u64(&w, k->dropped);
		u64(&w, k->nrecords);
		u64(&w, k->dropped_records);
		u64(&w, k->untimed_instances);
		u64(&w, k->unregistered_persistent);
		u64(&w, k->unknown_comm_records);
		u64(&w, k->probe_reads);
		u64(&w, k->probe_cost_ns);
		real(&w, nt_report_probe_pct(k));
		u64(&w, k->injected_ns);
		u64(&w, k->injected_count);
		u64(&w, (k->flags & NT_LOG_FLAG_UNFINISHED) != 0);
		u64(&w, (k->flags & NT_LOG_FLAG_ABORTED) != 0);
		u64(&w, (k->flags & NT_LOG_FLAG_MISSING) != 0);
		u64(&w, (k->flags & NT_LOG_FLAG_RUNNING) != 0);
		u64(&w, (k->flags & NT_LOG_FLAG_UNWRITTEN) != 0);
		/* its CPUs (log version 6): a cell empty where it is not known */
		text(&w, k->cpus ? k->cpus : "");
		const uint64_t t[4] = { k->cpu_ns, k->run_delay_ns, k->cpus_busy_ns,
					k->cpus_steal_ns };
		for (int i = 0; i < 4; i++) {
			if (k->cpus && *k->cpus && t[i] != NT_LOG_UNKNOWN)
				u64(&w, t[i]);
			else
				text(&w, "");
		}
		const struct nt_report_cpus *c = rep->cpus ? &rep->cpus[r] : NULL;
		if (c && c->known)
			u64(&w, c->crowd);
		else
			text(&w, "");
		const double sh[5] = { c ? c->on_cpu : -1, c ? c->waited : -1,
				       c ? c->job_share : -1, c ? c->others_share : -1,
				       c ? c->steal_share : -1 };
		for (int i = 0; i < 5; i++) {
			if (c && c->known && sh[i] >= 0)
				real(&w, sh[i]);
			else
				text(&w, "");
		}
		row_end(&w);
	}
}

/* The other tasks on each rank's CPUs (log version 7): a row a rank and task. */
static void write_other_tasks(FILE *f, const struct nt_report *rep)
{
	static const char *const names[] = { "rank", "host", "pid", "comm", "kind", "run_ns",
					     "share", "job_rank", "partial", "from_ns", "run_delay_ns",
					     NULL };
	static const char *const kinds[NT_LOG_TASK_KIND_COUNT] = { "process", "kernel thread",
								   "another user's" };
	header(f, names);
	const struct nt_log *log = rep->log;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		const struct nt_report_cpus *c = rep->cpus ? &rep->cpus[r] : NULL;
		if (!(k->others_flags & NT_LOG_OTHERS_KNOWN))
			continue;
		for (uint32_t t = 0; t < k->nothers && t < NT_LOG_OTHERS_MAX; t++) {
			const struct nt_log_task *o = &k->others[t];
			struct row w;
			row_begin(&w, f);
			u64(&w, k->rank);
			text(&w, k->host);
			u64(&w, o->pid);
			text(&w, o->comm);
			text(&w, kinds[o->kind < NT_LOG_TASK_KIND_COUNT ? o->kind : 0]);
			u64(&w, o->run_ns);
			real(&w, k->others_ns ? (double)o->run_ns / (double)k->others_ns : 0);
			if (c && c->known && c->others_rank[t] >= 0)
				u64(&w, (uint64_t)c->others_rank[t]);
			else
				text(&w, "");
			u64(&w, (k->others_flags & NT_LOG_OTHERS_PARTIAL) != 0);
			u64(&w, k->others_from_ns);
			if (k->others_run_delay_ns != NT_LOG_UNKNOWN)
				u64(&w, k->others_run_delay_ns);
			else
				text(&w, "");
			row_end(&w);
		}
	}
}

static void culprit_tail(struct row *w, const struct nt_culprit *c)
{
	u64(w, c->delay_ns);
	u64(w, c->instances);
	causes(w, &c->causes);
	row_end(w);
}

static void write_culprits(FILE *f, const struct nt_report *rep)
{
	static const char *const names[] = { "rank", "host", "delay_ns", "instances", NULL };
	header_causes(f, names);
	const struct nt_attrib *a = &rep->attrib;
	for (size_t i = 0; i < a->nranks; i++) {
		struct row w;
		row_begin(&w, f);
		u64(&w, a->ranks[i].rank);
		text(&w, a->ranks[i].host);
		culprit_tail(&w, &a->ranks[i]);
	}
}

static void write_culprit_nodes(FILE *f, const struct nt_report *rep)
{
	static const char *const names[] = { "host", "delay_ns", "instances", NULL };
	header_causes(f, names);
	const struct nt_attrib *a = &rep->attrib;
	for (size_t i = 0; i < a->nnodes; i++) {
		struct row w;
		row_begin(&w, f);
		text(&w, a->nodes[i].host);
		culprit_tail(&w, &a->nodes[i]);
	}
}

static void write_culprit_sites(FILE *f, const struct nt_report *rep)
{
	static const char *const names[] = { "function", "location", "delay_ns", "instances",
					     NULL };
	header_causes(f, names);
	const struct nt_attrib *a = &rep->attrib;
	for (size_t i = 0; i < a->nsites; i++) {
		const struct nt_report_site *s = nt_report_merged_site(rep, a->sites[i].site);
		struct row w;
		row_begin(&w, f);
		text(&w, a->sites[i].site->function);
		text(&w, s ? s->location : "");
		culprit_tail(&w, &a->sites[i]);
	}
}

static void write_late(FILE *f, const struct nt_report *rep)
{
	static const char *const names[] = { "comm_id", "seq", "time_ns", "last_rank",
					     "last_host", "members", "function", "location",
					     "delay_ns", NULL };
	header_causes(f, names);
	const struct nt_attrib *a = &rep->attrib;
	for (size_t i = 0; i < a->nlate; i++) {
		const struct nt_late *l = &a->late[i];
		const struct nt_report_site *s = nt_report_merged_site(rep, l->site);
		struct row w;
		row_begin(&w, f);
		u64(&w, l->comm_id);
		u64(&w, l->seq);
		u64(&w, l->start_ns);
		u64(&w, l->rank);
		text(&w, l->host);
		u64(&w, l->members);
		text(&w, l->site ? l->site->function : "");
		text(&w, s ? s->location : "");
		u64(&w, l->delay_ns);
		causes(&w, &l->causes);
		row_end(&w);
	}
}

int nt_report_write_csv(const struct nt_report *rep, const char *dir, char *why, size_t why_size)
{
	char none[1];
	if (!why || !why_size) {
		why = none;
		why_size = sizeof none;
	}
	why[0] = '\0';
	if (!rep || !rep->log || !dir || !dir[0]) {
		snprintf(why, why_size, "no report or no directory");
		return -EINVAL;
	}
	int rc = 0;
	/* Every file to a temporary file first; renamed over the targets only when all of them were
	 * written, so that a failure leaves no new table beside old ones. */
	struct nt_outfile out[TABLES];
	int opened = 0;
	for (; opened < TABLES; opened++) {
		char path[NT_PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", dir, file_name[opened]) >=
		    (int)sizeof path) {
			snprintf(why, why_size, "%s/%s: path too long", dir, file_name[opened]);
			rc = -ENAMETOOLONG;
			goto out;
		}
		rc = nt_outfile_open(&out[opened], path, false);
		if (rc) {
			snprintf(why, why_size, "%s", out[opened].why);
			goto out;
		}
	}
	write_coverage(out[COVERAGE].f, rep);
	write_coverage_sites(out[COVERAGE_SITES].f, rep);
	write_sites(out[SITES].f, rep);
	write_ranks(out[RANKS].f, rep);
	write_other_tasks(out[OTHER_TASKS].f, rep);
	write_culprits(out[CULPRITS].f, rep);
	write_culprit_nodes(out[CULPRIT_NODES].f, rep);
	write_culprit_sites(out[CULPRIT_SITES].f, rep);
	write_late(out[LATE].f, rep);
	/* Flushed here, so that an error (a full disk) shows before any file is renamed. */
	for (int i = 0; i < TABLES; i++) {
		errno = 0;
		if (fflush(out[i].f) != 0 || ferror(out[i].f)) {
			rc = errno ? -errno : -EIO;
			snprintf(why, why_size, "writing '%s' failed: %s", out[i].path,
				 strerror(-rc));
			goto out;
		}
	}
	for (int i = 0; i < TABLES; i++) {
		rc = nt_outfile_commit(&out[i]);
		if (rc) {
			snprintf(why, why_size, "%s", out[i].why);
			goto out;
		}
	}
out:
	for (int i = 0; i < opened; i++)
		nt_outfile_abort(&out[i]);
	return rc;
}
