/* Which hosts make jobs late, across many jobs (noisetool/hosts.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <noisetool/hosts.h>

#include "json-write.h"
#include "report-merge.h"

#define WORST_JOBS 3
/* Call sites followed per host (the worst shown): when full, a site with more delay takes the
 * place of the one with least, whose delay is then counted as untracked. */
#define HOST_SITES 16
#define WORST_SITES 3

struct job_ref {
	char *log;
	char *command;
	char *user, *batch_system, *batch_job; /* "" when its log does not say (version 8) */
	uint64_t delay_ns;
};

static void free_ref(struct job_ref *r)
{
	free(r->log);
	free(r->command);
	free(r->user);
	free(r->batch_system);
	free(r->batch_job);
}

/* s, or "" for NULL, copied with each control character '?': a log's strings reach the
 * terminal through the text view. */
static char *dup_printable(const char *s)
{
	char *d = strdup(s ? s : "");
	for (char *c = d; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return d;
}

/* A call site at which a host's ranks arrived last: the last arriver's site, by its function,
 * module and offset (one binary's site is one across jobs). */
struct site_ref {
	char *function, *module;
	uint64_t offset;
	uint64_t delay_ns;
	uint64_t jobs, last_job; /* the jobs it was late in; the last (1-based) that added to it */
};

struct host {
	char *name;
	uint64_t ranks, rank_ns; /* its ranks over all jobs, and their wall time */
	uint64_t jobs, jobs_hurt;
	uint64_t late_ns, held_ns;
	struct nt_causes causes;
	struct job_ref worst[WORST_JOBS]; /* most delay first */
	size_t nworst;
	struct site_ref sites[HOST_SITES]; /* in no order */
	size_t nsites;
	uint64_t untracked_ns;            /* delay at sites that did not stay among them */
};

struct unreadable {
	char *log, *why;
};

struct nt_hosts {
	struct host *hosts;
	size_t n, cap;
	struct unreadable *bad;
	size_t nbad, capbad;
	uint64_t jobs, ranks, total_ns, held_ns, first_ns, last_ns;
};

struct nt_hosts *nt_hosts_new(void)
{
	return calloc(1, sizeof(struct nt_hosts));
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The host named name, or SIZE_MAX. */
static size_t find_host(const struct nt_hosts *h, const char *name)
{
	if (!name)
		name = "";
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->hosts[i].name, name))
			return i;
	return SIZE_MAX;
}

/* The host named name, added when new; NULL when out of memory. */
static struct host *host_of(struct nt_hosts *h, const char *name)
{
	size_t at = find_host(h, name);
	if (at != SIZE_MAX)
		return &h->hosts[at];
	if (!name)
		name = "";
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 16;
		struct host *p = realloc(h->hosts, cap * sizeof *p);
		if (!p)
			return NULL;
		h->hosts = p;
		h->cap = cap;
	}
	struct host *x = &h->hosts[h->n];
	memset(x, 0, sizeof *x);
	if (!(x->name = strdup(name)))
		return NULL;
	h->n++;
	return x;
}

/* Keep the job among the host's worst, most delay first. */
static int note_worst(struct host *x, const char *log, const struct nt_log_rank *first,
		      uint64_t delay_ns)
{
	size_t at = x->nworst;
	while (at > 0 && x->worst[at - 1].delay_ns < delay_ns)
		at--;
	if (at >= WORST_JOBS)
		return 0;
	struct job_ref r = { dup_printable(log),
			     dup_printable(first ? first->command : NULL),
			     dup_printable(first ? first->user : NULL),
			     dup_printable(first ? first->batch_system : NULL),
			     dup_printable(first ? first->batch_job : NULL),
			     delay_ns };
	if (!r.log || !r.command || !r.user || !r.batch_system || !r.batch_job) {
		free_ref(&r);
		return -ENOMEM;
	}
	if (x->nworst == WORST_JOBS) {
		free_ref(&x->worst[WORST_JOBS - 1]);
		x->nworst--;
	}
	memmove(&x->worst[at + 1], &x->worst[at], (x->nworst - at) * sizeof *x->worst);
	x->worst[at] = r;
	x->nworst++;
	return 0;
}

/* Add delay_ns at site (of job number job) to the host's sites. 0 or -ENOMEM. */
static int note_site(struct host *x, const struct nt_log_site *site, uint64_t delay_ns,
		     uint64_t job)
{
	const char *fn = site && site->function ? site->function : "?";
	const char *mod = site && site->module ? site->module : "?";
	uint64_t off = site ? site->offset : 0;
	struct site_ref *least = NULL;
	for (size_t i = 0; i < x->nsites; i++) {
		struct site_ref *s = &x->sites[i];
		if (s->offset == off && !strcmp(s->function, fn) && !strcmp(s->module, mod)) {
			s->delay_ns = add_sat(s->delay_ns, delay_ns);
			s->jobs += s->last_job != job;
			s->last_job = job;
			return 0;
		}
		if (!least || s->delay_ns < least->delay_ns)
			least = s;
	}
	struct site_ref *to = x->nsites < HOST_SITES ? &x->sites[x->nsites] : least;
	if (to == least && least->delay_ns >= delay_ns) {
		x->untracked_ns = add_sat(x->untracked_ns, delay_ns);
		return 0;
	}
	struct site_ref r = { strdup(fn), strdup(mod), off, delay_ns, 1, job };
	if (!r.function || !r.module) {
		free(r.function);
		free(r.module);
		return -ENOMEM;
	}
	if (to == least) {
		x->untracked_ns = add_sat(x->untracked_ns, least->delay_ns);
		free(least->function);
		free(least->module);
	} else {
		x->nsites++;
	}
	*to = r;
	return 0;
}

static int by_site_delay(const void *a, const void *b)
{
	const struct site_ref *x = *(const struct site_ref *const *)a,
			      *y = *(const struct site_ref *const *)b;
	return (x->delay_ns < y->delay_ns) - (x->delay_ns > y->delay_ns);
}

/* The host's sites, most delay first, into v (HOST_SITES of room); how many. */
static size_t worst_sites(const struct host *x, const struct site_ref **v)
{
	for (size_t i = 0; i < x->nsites; i++)
		v[i] = &x->sites[i];
	qsort(v, x->nsites, sizeof *v, by_site_delay);
	return x->nsites;
}

/* A module's path as the text names it: its file name alone. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && strncmp(path, NT_LOG_PYTHON_PREFIX, strlen(NT_LOG_PYTHON_PREFIX)) != 0
		       ? slash + 1 : path;
}

static void add_causes(struct nt_causes *to, const struct nt_causes *from)
{
	for (int c = 0; c < NT_CAUSE_COUNT; c++)
		to->ns[c] = add_sat(to->ns[c], from->ns[c]);
}

int nt_hosts_add(struct nt_hosts *h, const struct nt_report *rep, const char *log_path)
{
	if (!h || !rep || !rep->log || !log_path)
		return -EINVAL;
	const struct nt_log *log = rep->log;
	/* The job's hosts first (a linear search per rank: a job's hosts are few), then the delay
	 * its attribution gives each: late arrivals by node, holds by the rank that held. */
	for (uint32_t r = 0; r < log->nranks; r++) {
		struct host *x = host_of(h, log->ranks[r].host);
		if (!x)
			return -ENOMEM;
		x->ranks++;
		x->rank_ns = add_sat(x->rank_ns, log->ranks[r].wall_ns);
	}
	bool *in = calloc(h->n ? h->n : 1, sizeof *in);
	uint64_t *job_ns = calloc(h->n ? h->n : 1, sizeof *job_ns);
	if (!in || !job_ns) {
		free(in);
		free(job_ns);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < log->nranks; r++)
		in[find_host(h, log->ranks[r].host)] = true;
	const struct nt_attrib *a = &rep->attrib;
	for (size_t i = 0; i < a->nnodes; i++) {
		size_t k = find_host(h, a->nodes[i].host);
		if (k == SIZE_MAX || !in[k])
			continue; /* a host of none of the job's ranks: cannot be */
		struct host *x = &h->hosts[k];
		x->late_ns = add_sat(x->late_ns, a->nodes[i].delay_ns);
		add_causes(&x->causes, &a->nodes[i].causes);
		job_ns[k] = add_sat(job_ns[k], a->nodes[i].delay_ns);
	}
	for (size_t i = 0; i < a->nheld_ranks; i++) {
		const struct nt_culprit *c = &a->held_ranks[i];
		const char *name = c->host ? c->host
			   : c->rank < log->nranks ? log->ranks[c->rank].host : NULL;
		size_t k = find_host(h, name);
		if (k == SIZE_MAX || !in[k])
			continue;
		struct host *x = &h->hosts[k];
		h->held_ns = add_sat(h->held_ns, c->delay_ns);
		x->held_ns = add_sat(x->held_ns, c->delay_ns);
	}
	const struct nt_log_rank *first = log->nranks ? &log->ranks[0] : NULL;
	int rc = 0;
	for (size_t i = 0; i < a->nlate && rc == 0; i++) {
		size_t k = find_host(h, a->late[i].host);
		if (k != SIZE_MAX && in[k] && a->late[i].delay_ns)
			rc = note_site(&h->hosts[k], a->late[i].site, a->late[i].delay_ns, h->jobs + 1);
	}
	for (size_t k = 0; k < h->n; k++) {
		if (!in[k])
			continue;
		struct host *x = &h->hosts[k];
		x->jobs++;
		if (job_ns[k] > 0) {
			x->jobs_hurt++;
			h->total_ns = add_sat(h->total_ns, job_ns[k]);
			if (!rc)
				rc = note_worst(x, log_path, first, job_ns[k]);
		}
	}
	free(in);
	free(job_ns);
	h->jobs++;
	h->ranks += log->nranks;
	if (log->created_unix_ns) {
		if (!h->first_ns || log->created_unix_ns < h->first_ns)
			h->first_ns = log->created_unix_ns;
		if (log->created_unix_ns > h->last_ns)
			h->last_ns = log->created_unix_ns;
	}
	return rc;
}

int nt_hosts_add_unreadable(struct nt_hosts *h, const char *log_path, const char *why)
{
	if (!h || !log_path || !why)
		return -EINVAL;
	if (h->nbad == h->capbad) {
		size_t cap = h->capbad ? 2 * h->capbad : 8;
		struct unreadable *p = realloc(h->bad, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		h->bad = p;
		h->capbad = cap;
	}
	struct unreadable u = { dup_printable(log_path), dup_printable(why) };
	if (!u.log || !u.why) {
		free(u.log);
		free(u.why);
		return -ENOMEM;
	}
	h->bad[h->nbad++] = u;
	return 0;
}

/* What ranks a host: the delay its ranks imposed by arriving last, as the job report's
 * culprits are ranked; what they held up inside calls is shown beside it. A rank that shares
 * its CPU with another of the job holds and is held in turn, and its holds say less of its host
 * than its late arrivals. */
static uint64_t delay_of(const struct host *x)
{
	return x->late_ns;
}

/* Most delay first; then by name, so that the order never depends on the logs' order. */
static int by_delay(const void *p, const void *q)
{
	const struct host *x = *(const struct host *const *)p, *y = *(const struct host *const *)q;
	uint64_t a = delay_of(x), b = delay_of(y);
	if (a != b)
		return a < b ? 1 : -1;
	return strcmp(x->name, y->name);
}

static const struct host **sorted(const struct nt_hosts *h)
{
	const struct host **v = malloc((h->n ? h->n : 1) * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < h->n; i++)
		v[i] = &h->hosts[i];
	qsort(v, h->n, sizeof *v, by_delay);
	return v;
}

/* Delay in ms per hour of the host's rank time. */
static double per_rank_hour(const struct host *x)
{
	return x->rank_ns ? (double)delay_of(x) / 1e6 / ((double)x->rank_ns / 3.6e12) : 0;
}

static void utc(uint64_t ns, char *buf, size_t size)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	if (!ns || !gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, size, "?");
}

int nt_hosts_write_text(FILE *f, const struct nt_hosts *h, size_t top)
{
	if (!f || !h)
		return -EINVAL;
	const struct host **v = sorted(h);
	if (!v)
		return -ENOMEM;
	char from[40], to[40];
	utc(h->first_ns, from, sizeof from);
	utc(h->last_ns, to, sizeof to);
	fprintf(f, "Hosts by the delay their ranks imposed on jobs: %llu jobs, %llu ranks, %zu hosts, "
		   "jobs from %s to %s; %.3f ms of delay in all\n",
		(unsigned long long)h->jobs, (unsigned long long)h->ranks, h->n, from, to,
		(double)h->total_ns / 1e6);
	fprintf(f, "(delay: arriving last at collectives, as the job reports' culprits; share: of all "
		   "hosts' delay; ms/rank-h: per hour of its ranks' wall time; held ms: what its ranks "
		   "held up inside calls after the last arrival; causes in %% of its delay)\n");
	fprintf(f, "%-24s %12s %6s %10s %9s %9s %10s", "host", "delay ms", "share", "ms/rank-h",
		"jobs hurt", "rank-h", "held ms");
	for (int c = 0; c < NT_CAUSE_COUNT; c++)
		fprintf(f, " %5s", nt_cause_info((enum nt_cause)c)->column);
	fputc('\n', f);
	size_t n = top && top < h->n ? top : h->n;
	for (size_t i = 0; i < n; i++) {
		const struct host *x = v[i];
		uint64_t d = delay_of(x);
		char hurt[48];
		snprintf(hurt, sizeof hurt, "%llu/%llu", (unsigned long long)x->jobs_hurt,
			 (unsigned long long)x->jobs);
		fprintf(f, "%-24s %12.3f %5.1f%% %10.1f %9s %9.3f %10.3f", x->name[0] ? x->name : "?",
			(double)d / 1e6, h->total_ns ? 100.0 * (double)d / (double)h->total_ns : 0.0,
			per_rank_hour(x), hurt, (double)x->rank_ns / 3.6e12, (double)x->held_ns / 1e6);
		for (int c = 0; c < NT_CAUSE_COUNT; c++)
			fprintf(f, " %5.1f", d ? 100.0 * (double)x->causes.ns[c] / (double)d : 0.0);
		fputc('\n', f);
	}
	if (n < h->n)
		fprintf(f, "(%zu more hosts: --top 0 shows all)\n", h->n - n);
	bool any = false;
	for (size_t i = 0; i < n && i < 5; i++) {
		const struct host *x = v[i];
		if (!x->nworst)
			continue;
		if (!any)
			fprintf(f, "\nThe jobs and call sites each host hurt most (delay its ranks "
				   "imposed there)\n");
		any = true;
		fprintf(f, "%s: its worst jobs, then the call sites it arrived last at\n",
			x->name[0] ? x->name : "?");
		for (size_t k = 0; k < x->nworst; k++) {
			const struct job_ref *w = &x->worst[k];
			fprintf(f, "  %12.3f ms  ", (double)w->delay_ns / 1e6);
			if (w->batch_job[0])
				fprintf(f, "%s %s, ", w->batch_system[0] ? w->batch_system : "?",
					w->batch_job);
			if (w->user[0])
				fprintf(f, "%s, ", w->user);
			fprintf(f, "%s  (%s)\n", w->log, w->command[0] ? w->command : "?");
		}
		const struct site_ref *s[HOST_SITES];
		size_t ns = worst_sites(x, s);
		for (size_t k = 0; k < ns && k < WORST_SITES; k++)
			fprintf(f, "  %12.3f ms  at %s %s+0x%llx (%llu job%s)\n",
				(double)s[k]->delay_ns / 1e6, s[k]->function, base_name(s[k]->module),
				(unsigned long long)s[k]->offset, (unsigned long long)s[k]->jobs,
				s[k]->jobs == 1 ? "" : "s");
	}
	if (h->nbad) {
		fprintf(f, "\n%zu logs could not be read (left out):\n", h->nbad);
		for (size_t i = 0; i < h->nbad && i < 10; i++)
			fprintf(f, "  %s: %s\n", h->bad[i].log, h->bad[i].why);
		if (h->nbad > 10)
			fprintf(f, "  (%zu more: the JSON lists them all)\n", h->nbad - 10);
	}
	free(v);
	return ferror(f) ? -EIO : 0;
}

int nt_hosts_write_json(FILE *f, const struct nt_hosts *h)
{
	if (!f || !h)
		return -EINVAL;
	const struct host **v = sorted(h);
	if (!v)
		return -ENOMEM;
	struct nt_json j;
	nt_json_init(&j, f);
	nt_json_object_begin(&j, NULL);
	nt_json_string(&j, "schema", "noisetool-hosts/1");
	nt_json_uint(&j, "jobs", h->jobs);
	nt_json_uint(&j, "ranks", h->ranks);
	nt_json_uint(&j, "first_job_unix_ns", h->first_ns);
	nt_json_uint(&j, "last_job_unix_ns", h->last_ns);
	nt_json_uint(&j, "delay_ns", h->total_ns);
	nt_json_uint(&j, "held_ns", h->held_ns);
	nt_report_causes_json(&j);
	nt_json_array_begin(&j, "hosts");
	for (size_t i = 0; i < h->n; i++) {
		const struct host *x = v[i];
		uint64_t d = delay_of(x);
		nt_json_object_begin(&j, NULL);
		nt_json_string(&j, "host", x->name);
		nt_json_uint(&j, "delay_ns", d);
		nt_json_uint(&j, "held_ns", x->held_ns);
		nt_json_double(&j, "share", h->total_ns ? (double)d / (double)h->total_ns : 0.0);
		nt_json_double(&j, "delay_ms_per_rank_hour", per_rank_hour(x));
		nt_json_uint(&j, "rank_ns", x->rank_ns);
		nt_json_uint(&j, "ranks", x->ranks);
		nt_json_uint(&j, "jobs", x->jobs);
		nt_json_uint(&j, "jobs_hurt", x->jobs_hurt);
		nt_json_object_begin(&j, "causes");
		for (int c = 0; c < NT_CAUSE_COUNT; c++)
			nt_json_uint(&j, nt_cause_key((enum nt_cause)c), x->causes.ns[c]);
		nt_json_object_end(&j);
		nt_json_array_begin(&j, "worst_jobs");
		for (size_t k = 0; k < x->nworst; k++) {
			nt_json_object_begin(&j, NULL);
			nt_json_string(&j, "log", x->worst[k].log);
			nt_json_string(&j, "command", x->worst[k].command);
			nt_json_string(&j, "user", x->worst[k].user);
			nt_json_string(&j, "batch_system", x->worst[k].batch_system);
			nt_json_string(&j, "batch_job", x->worst[k].batch_job);
			nt_json_uint(&j, "delay_ns", x->worst[k].delay_ns);
			nt_json_object_end(&j);
		}
		nt_json_array_end(&j);
		const struct site_ref *s[HOST_SITES];
		size_t ns = worst_sites(x, s);
		nt_json_array_begin(&j, "worst_sites");
		for (size_t k = 0; k < ns && k < WORST_SITES; k++) {
			nt_json_object_begin(&j, NULL);
			nt_json_string(&j, "function", s[k]->function);
			nt_json_string(&j, "module", s[k]->module);
			nt_json_uint(&j, "offset", s[k]->offset);
			nt_json_uint(&j, "delay_ns", s[k]->delay_ns);
			nt_json_uint(&j, "jobs", s[k]->jobs);
			nt_json_object_end(&j);
		}
		nt_json_array_end(&j);
		nt_json_uint(&j, "sites_untracked_ns", x->untracked_ns);
		nt_json_object_end(&j);
	}
	nt_json_array_end(&j);
	nt_json_array_begin(&j, "unreadable");
	for (size_t i = 0; i < h->nbad; i++) {
		nt_json_object_begin(&j, NULL);
		nt_json_string(&j, "log", h->bad[i].log);
		nt_json_string(&j, "why", h->bad[i].why);
		nt_json_object_end(&j);
	}
	nt_json_array_end(&j);
	nt_json_object_end(&j);
	free(v);
	return nt_json_finish(&j) ? -EIO : 0;
}

void nt_hosts_free(struct nt_hosts *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++) {
		free(h->hosts[i].name);
		for (size_t k = 0; k < h->hosts[i].nworst; k++)
			free_ref(&h->hosts[i].worst[k]);
		for (size_t k = 0; k < h->hosts[i].nsites; k++) {
			free(h->hosts[i].sites[k].function);
			free(h->hosts[i].sites[k].module);
		}
	}
	for (size_t i = 0; i < h->nbad; i++) {
		free(h->bad[i].log);
		free(h->bad[i].why);
	}
	free(h->hosts);
	free(h->bad);
	free(h);
}
