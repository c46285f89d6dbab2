/* A comparison of two runs written out (noisetool/compare.h): text tables, JSON (schema
 * noisetool-compare/1, doc/report-json.md) and CSV. */
#include "nt-config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/compare.h>
#include <noisetool/outfile.h>

#include "json-write.h"
#include "report-merge.h"

/* s for a terminal or a CSV cell: control characters become '?'. At most size - 1 bytes. */
static const char *plain(const char *s, char *buf, size_t size)
{
	size_t n = 0;
	for (const char *p = s ? s : ""; *p && n + 1 < size; p++)
		buf[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
	buf[n] = '\0';
	return buf;
}

/* A duration in ns as a short string ("850 ns", "12.3 us", "4.56 ms", "1.23 s"); with sign,
 * "+" before a non-negative one. Returns buf. */
static const char *dur(double ns, bool sign, char *buf, size_t size)
{
	const char *unit = "ns";
	double v = ns;
	if (fabs(ns) >= 1e9) {
		unit = "s";
		v = ns / 1e9;
	} else if (fabs(ns) >= 1e6) {
		unit = "ms";
		v = ns / 1e6;
	} else if (fabs(ns) >= 1e3) {
		unit = "us";
		v = ns / 1e3;
	}
	snprintf(buf, size, "%s%.3g %s", sign && v >= 0 ? "+" : "", v, unit);
	return buf;
}

/* The cause with the largest share, or NULL when there is no delay. */
static const char *top_cause(const struct nt_causes *c)
{
	int best = -1;
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		if (c->ns[k] && (best < 0 || c->ns[k] > c->ns[best]))
			best = k;
	return best < 0 ? NULL : nt_cause_info((enum nt_cause)best)->words;
}

static const char *site_where(const struct nt_compare_site *s, char *buf, size_t size)
{
	char fn[128], loc[256], call[128];
	plain(s->function, fn, sizeof fn);
	plain(s->location, loc, sizeof loc);
	if (s->python_call && s->python_call[0])
		snprintf(buf, size, "%s at %s %s", fn, loc, plain(s->python_call, call, sizeof call));
	else
		snprintf(buf, size, "%s at %s", fn, loc);
	return buf;
}

/* "(significant: +340 us/call, noise ±12 us)" */
static const char *judged(const struct nt_compare_value *v, const char *per, char *buf,
			  size_t size)
{
	char d[32], n[32];
	snprintf(buf, size, "(%s: %s%s, noise \u00b1%s)", nt_compare_verdict_name(v->verdict),
		 dur(v->change, true, d, sizeof d), per, dur(v->noise, false, n, sizeof n));
	return buf;
}

/* The summary: one line per kind of significant change (the largest site, the largest rank,
 * the job's delay), or one line saying there is none. Calls line(ctx, text) for each. */
static void summary(const struct nt_compare *c, void (*line)(void *, const char *), void *ctx)
{
	char buf[1024], where[640], j[128], d[32], va[32], vb[32];
	bool any = false;
	const struct nt_compare_site *s = c->nsites ? &c->sites[0] : NULL;
	if (s && s->mean_ns.verdict == NT_COMPARE_SIGNIFICANT) {
		const struct nt_compare_value *v = &s->mean_ns;
		double ratio = v->a > 0 && v->b > 0 ? (v->b > v->a ? v->b / v->a : v->a / v->b) : 0;
		if (ratio > 0)
			snprintf(buf, sizeof buf, "B is %.*fx %s in %s %s", ratio < 10 ? 2 : 0, ratio,
				 v->b > v->a ? "slower" : "faster",
				 site_where(s, where, sizeof where), judged(v, "/call", j, sizeof j));
		else
			snprintf(buf, sizeof buf, "B's time per call changed in %s %s",
				 site_where(s, where, sizeof where), judged(v, "/call", j, sizeof j));
		line(ctx, buf);
		any = true;
	}
	const struct nt_compare_rank *r = c->nranks ? &c->ranks[0] : NULL;
	if (r && r->delay_ns.verdict == NT_COMPARE_SIGNIFICANT) {
		const struct nt_causes *causes = r->delay_ns.change > 0 ? &r->causes_b : &r->causes_a;
		const char *why = top_cause(causes);
		snprintf(buf, sizeof buf, "rank %u makes the others wait %s %s in B (%s -> %s) %s%s%s",
			 r->rank, dur(fabs(r->delay_ns.change), false, d, sizeof d),
			 r->delay_ns.change > 0 ? "more" : "less",
			 dur(r->delay_ns.a, false, va, sizeof va), dur(r->delay_ns.b, false, vb, sizeof vb),
			 judged(&r->delay_ns, "", j, sizeof j), why ? "; mostly " : "", why ? why : "");
		line(ctx, buf);
		any = true;
	}
	if (c->delay_ns.verdict == NT_COMPARE_SIGNIFICANT) {
		snprintf(buf, sizeof buf, "the job's late arrivals cost %s in A, %s in B %s",
			 dur(c->delay_ns.a, false, va, sizeof va), dur(c->delay_ns.b, false, vb, sizeof vb),
			 judged(&c->delay_ns, "", j, sizeof j));
		line(ctx, buf);
		any = true;
	}
	if (!any)
		line(ctx, "no significant change: every difference between A and B is within the "
			  "runs' own noise");
}

static void text_line(void *ctx, const char *s)
{
	fprintf(ctx, "%s\n", s);
}

static void run_line(FILE *f, const char *name, const char *path, const struct nt_report *rep,
		     uint64_t wall_ns)
{
	char p[4096], w[32], d[32];
	fprintf(f, "%s: %s (%u rank%s, level %s, waits %s, wall %s, late arrivals %s%s)\n", name,
		plain(path, p, sizeof p), rep->nranks, rep->nranks == 1 ? "" : "s",
		nt_report_level_name(rep->level), nt_report_wait_name(rep->log->wait_mode),
		dur((double)wall_ns, false, w, sizeof w),
		dur((double)rep->attrib.total_delay_ns, false, d, sizeof d),
		rep->partial ? ", PARTIAL" : "");
}

int nt_compare_write_text(FILE *f, const struct nt_compare *c, const char *a_path,
			  const char *b_path, size_t top)
{
	if (!f || !c)
		return -EINVAL;
	fprintf(f, "noisetool report: B compared with A\n");
	run_line(f, "A", a_path, c->a, c->wall_ns_a);
	run_line(f, "B", b_path, c->b, c->wall_ns_b);
	if (c->a->nranks != c->b->nranks)
		fprintf(f, "the runs have %u and %u ranks: ranks are compared where both have them\n",
			c->a->nranks, c->b->nranks);
	summary(c, text_line, f);
	fprintf(f, "(change = B - A; noise = the change's standard error from each run's own "
		   "spread; significant when |change| > %.0f x noise and >= %.0f%% of the larger "
		   "value: doc/compare.md)\n",
		NT_COMPARE_SIGMAS, 100 * NT_COMPARE_REL_FLOOR);

	size_t n = top && top < c->nsites ? top : c->nsites;
	fprintf(f, "\nCall sites, time per call (significant first)\n");
	int loc_w = 24;
	for (size_t i = 0; i < n; i++) {
		int len = (int)strlen(c->sites[i].location);
		loc_w = len > loc_w ? (len < 60 ? len : 60) : loc_w;
	}
	fprintf(f, "%-20s %-*s %9s %9s %10s %10s %10s %10s  %-12s %6s %6s\n", "function", loc_w,
		"location", "calls A", "calls B", "A", "B", "change", "noise", "verdict", "cov A",
		"cov B");
	for (size_t i = 0; i < n; i++) {
		const struct nt_compare_site *s = &c->sites[i];
		const struct nt_compare_value *v = &s->mean_ns;
		char fn[21], loc[256], a[32], b[32], d[32], e[32];
		fprintf(f, "%-20s %-*s %9llu %9llu %10s %10s %10s %10s  %-12s %6.3f %6.3f\n",
			plain(s->function, fn, sizeof fn), loc_w, plain(s->location, loc, sizeof loc),
			(unsigned long long)s->calls_a, (unsigned long long)s->calls_b,
			dur(v->a, false, a, sizeof a), dur(v->b, false, b, sizeof b),
			dur(v->change, true, d, sizeof d), dur(v->noise, false, e, sizeof e),
			nt_compare_verdict_name(v->verdict), s->cov_a, s->cov_b);
	}
	if (n < c->nsites)
		fprintf(f, "(%zu more call sites; --top 0 shows all)\n", c->nsites - n);
	if (c->sites_only_a || c->sites_only_b)
		fprintf(f, "%zu call site%s only in A, %zu only in B\n", c->sites_only_a,
			c->sites_only_a == 1 ? "" : "s", c->sites_only_b);

	n = top && top < c->nranks ? top : c->nranks;
	fprintf(f, "\nRanks, lateness imposed on the others (significant first)\n");
	fprintf(f, "%6s %10s %10s %10s %10s  %-12s %7s %7s %7s %7s  %-12s %-12s\n", "rank", "A",
		"B", "change", "noise", "verdict", "late A", "late B", "MPI% A", "MPI% B",
		"cause A", "cause B");
	for (size_t i = 0; i < n; i++) {
		const struct nt_compare_rank *r = &c->ranks[i];
		const struct nt_compare_value *v = &r->delay_ns;
		char a[32], b[32], d[32], e[32];
		const char *ca = top_cause(&r->causes_a), *cb = top_cause(&r->causes_b);
		fprintf(f, "%6u %10s %10s %10s %10s  %-12s %7llu %7llu %7.2f %7.2f  %-12s %-12s\n",
			r->rank, dur(v->a, false, a, sizeof a), dur(v->b, false, b, sizeof b),
			dur(v->change, true, d, sizeof d), dur(v->noise, false, e, sizeof e),
			nt_compare_verdict_name(v->verdict), (unsigned long long)r->late_a,
			(unsigned long long)r->late_b,
			r->wall_ns_a ? 100.0 * (double)r->mpi_ns_a / (double)r->wall_ns_a : 0.0,
			r->wall_ns_b ? 100.0 * (double)r->mpi_ns_b / (double)r->wall_ns_b : 0.0,
			ca ? ca : "-", cb ? cb : "-");
	}
	if (n < c->nranks)
		fprintf(f, "(%zu more ranks; --top 0 shows all)\n", c->nranks - n);
	return ferror(f) ? -EIO : 0;
}

static void value_json(struct nt_json *j, const char *key, const struct nt_compare_value *v)
{
	nt_json_object_begin(j, key);
	nt_json_double(j, "a", v->a);
	nt_json_double(j, "b", v->b);
	nt_json_double(j, "change", v->change);
	nt_json_double(j, "noise", v->noise);
	nt_json_double(j, "noise_a", v->noise_a);
	nt_json_double(j, "noise_b", v->noise_b);
	nt_json_string(j, "verdict", nt_compare_verdict_name(v->verdict));
	nt_json_object_end(j);
}

static void causes_json(struct nt_json *j, const char *key, const struct nt_causes *c)
{
	nt_json_object_begin(j, key);
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		nt_json_uint(j, nt_cause_key((enum nt_cause)k), c->ns[k]);
	nt_json_object_end(j);
}

static void run_json(struct nt_json *j, const char *key, const char *path,
		     const struct nt_report *rep, uint64_t wall_ns)
{
	nt_json_object_begin(j, key);
	nt_json_string(j, "log", path ? path : "");
	nt_json_uint(j, "ranks", rep->nranks);
	nt_json_string(j, "level", nt_report_level_name(rep->level));
	nt_json_string(j, "wait_mode", nt_report_wait_name(rep->log->wait_mode));
	nt_json_bool(j, "partial", rep->partial);
	nt_json_uint(j, "wall_ns", wall_ns);
	nt_json_uint(j, "instances_late", rep->attrib.instances_late);
	nt_json_uint(j, "total_delay_ns", rep->attrib.total_delay_ns);
	nt_json_object_end(j);
}

static void json_line(void *ctx, const char *s)
{
	nt_json_string(ctx, NULL, s);
}

int nt_compare_write_json(FILE *f, const struct nt_compare *c, const char *a_path,
			  const char *b_path)
{
	if (!f || !c)
		return -EINVAL;
	struct nt_json j;
	nt_json_init(&j, f);
	nt_json_object_begin(&j, NULL);
	nt_json_string(&j, "schema", "noisetool-compare/1");
	nt_json_string(&j, "version", NT_VERSION);
	run_json(&j, "a", a_path, c->a, c->wall_ns_a);
	run_json(&j, "b", b_path, c->b, c->wall_ns_b);
	nt_json_object_begin(&j, "rules");
	nt_json_uint(&j, "blocks", NT_COMPARE_BLOCKS);
	nt_json_double(&j, "sigmas", NT_COMPARE_SIGMAS);
	nt_json_double(&j, "relative_floor", NT_COMPARE_REL_FLOOR);
	nt_json_double(&j, "wall_floor", NT_COMPARE_WALL_FLOOR);
	nt_json_uint(&j, "min_calls_per_rank", NT_COMPARE_MIN_CALLS);
	nt_json_object_end(&j);
	nt_json_array_begin(&j, "summary");
	summary(c, json_line, &j);
	nt_json_array_end(&j);
	nt_json_object_begin(&j, "job");
	value_json(&j, "delay_ns", &c->delay_ns);
	causes_json(&j, "causes_a", &c->causes_a);
	causes_json(&j, "causes_b", &c->causes_b);
	nt_json_object_end(&j);
	nt_json_object_begin(&j, "only");
	nt_json_uint(&j, "sites_a", c->sites_only_a);
	nt_json_uint(&j, "sites_b", c->sites_only_b);
	nt_json_uint(&j, "ranks_a", c->ranks_only_a);
	nt_json_uint(&j, "ranks_b", c->ranks_only_b);
	nt_json_object_end(&j);
	nt_json_array_begin(&j, "sites");
	for (size_t i = 0; i < c->nsites; i++) {
		const struct nt_compare_site *s = &c->sites[i];
		nt_json_object_begin(&j, NULL);
		nt_json_string(&j, "function", s->function);
		nt_json_string(&j, "location", s->location);
		if (s->python_call && s->python_call[0])
			nt_json_string(&j, "python_call", s->python_call);
		nt_json_uint(&j, "calls_a", s->calls_a);
		nt_json_uint(&j, "calls_b", s->calls_b);
		nt_json_uint(&j, "time_ns_a", s->time_ns_a);
		nt_json_uint(&j, "time_ns_b", s->time_ns_b);
		nt_json_uint(&j, "ranks_a", s->ranks_a);
		nt_json_uint(&j, "ranks_b", s->ranks_b);
		nt_json_double(&j, "cov_a", s->cov_a);
		nt_json_double(&j, "cov_b", s->cov_b);
		nt_json_uint(&j, "culprit_ns_a", s->culprit_ns_a);
		nt_json_uint(&j, "culprit_ns_b", s->culprit_ns_b);
		value_json(&j, "mean_ns", &s->mean_ns);
		nt_json_object_end(&j);
	}
	nt_json_array_end(&j);
	nt_json_array_begin(&j, "ranks");
	for (size_t i = 0; i < c->nranks; i++) {
		const struct nt_compare_rank *r = &c->ranks[i];
		const char *ca = top_cause(&r->causes_a), *cb = top_cause(&r->causes_b);
		nt_json_object_begin(&j, NULL);
		nt_json_uint(&j, "rank", r->rank);
		nt_json_uint(&j, "wall_ns_a", r->wall_ns_a);
		nt_json_uint(&j, "wall_ns_b", r->wall_ns_b);
		nt_json_uint(&j, "mpi_ns_a", r->mpi_ns_a);
		nt_json_uint(&j, "mpi_ns_b", r->mpi_ns_b);
		nt_json_uint(&j, "late_a", r->late_a);
		nt_json_uint(&j, "late_b", r->late_b);
		nt_json_string(&j, "top_cause_a", ca ? ca : "");
		nt_json_string(&j, "top_cause_b", cb ? cb : "");
		causes_json(&j, "causes_a", &r->causes_a);
		causes_json(&j, "causes_b", &r->causes_b);
		value_json(&j, "delay_ns", &r->delay_ns);
		nt_json_object_end(&j);
	}
	nt_json_array_end(&j);
	nt_report_causes_json(&j);
	nt_json_object_end(&j);
	return nt_json_finish(&j);
}

/* A CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break. */
static void csv_cell(FILE *f, const char *s, bool last)
{
	s = s ? s : "";
	if (strpbrk(s, ",\"\r\n")) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else {
		fputs(s, f);
	}
	fputc(last ? '\n' : ',', f);
}

/* The numbers of a judged value as CSV cells: A, B, change, noise, noise A, noise B. */
static void csv_value(FILE *f, const struct nt_compare_value *v)
{
	fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,", v->a, v->b, v->change, v->noise,
		v->noise_a, v->noise_b);
}

static int write_sites_csv(FILE *f, const struct nt_compare *c)
{
	fputs("function,location,python_call,verdict,mean_ns_a,mean_ns_b,change_ns,noise_ns,"
	      "noise_ns_a,noise_ns_b,calls_a,calls_b,time_ns_a,time_ns_b,cov_a,cov_b,"
	      "culprit_ns_a,culprit_ns_b\n", f);
	for (size_t i = 0; i < c->nsites; i++) {
		const struct nt_compare_site *s = &c->sites[i];
		csv_cell(f, s->function, false);
		csv_cell(f, s->location, false);
		csv_cell(f, s->python_call, false);
		csv_cell(f, nt_compare_verdict_name(s->mean_ns.verdict), false);
		csv_value(f, &s->mean_ns);
		fprintf(f, "%llu,%llu,%llu,%llu,%.6g,%.6g,%llu,%llu\n",
			(unsigned long long)s->calls_a, (unsigned long long)s->calls_b,
			(unsigned long long)s->time_ns_a, (unsigned long long)s->time_ns_b, s->cov_a,
			s->cov_b, (unsigned long long)s->culprit_ns_a,
			(unsigned long long)s->culprit_ns_b);
	}
	return ferror(f) ? -EIO : 0;
}

static int write_ranks_csv(FILE *f, const struct nt_compare *c)
{
	fputs("rank,verdict,delay_ns_a,delay_ns_b,change_ns,noise_ns,noise_ns_a,noise_ns_b,"
	      "late_a,late_b,wall_ns_a,wall_ns_b,mpi_ns_a,mpi_ns_b,top_cause_a,top_cause_b\n", f);
	for (size_t i = 0; i < c->nranks; i++) {
		const struct nt_compare_rank *r = &c->ranks[i];
		fprintf(f, "%u,", r->rank);
		csv_cell(f, nt_compare_verdict_name(r->delay_ns.verdict), false);
		csv_value(f, &r->delay_ns);
		fprintf(f, "%llu,%llu,%llu,%llu,%llu,%llu,", (unsigned long long)r->late_a,
			(unsigned long long)r->late_b, (unsigned long long)r->wall_ns_a,
			(unsigned long long)r->wall_ns_b, (unsigned long long)r->mpi_ns_a,
			(unsigned long long)r->mpi_ns_b);
		const char *ca = top_cause(&r->causes_a), *cb = top_cause(&r->causes_b);
		csv_cell(f, ca, false);
		csv_cell(f, cb, true);
	}
	return ferror(f) ? -EIO : 0;
}

int nt_compare_write_csv(const struct nt_compare *c, const char *dir, char *why, size_t why_size)
{
	if (!c || !dir) {
		if (why && why_size)
			snprintf(why, why_size, "no comparison or directory");
		return -EINVAL;
	}
	static const char *const names[2] = { "compare-sites.csv", "compare-ranks.csv" };
	int (*const writers[2])(FILE *, const struct nt_compare *) = { write_sites_csv,
								       write_ranks_csv };
	for (int i = 0; i < 2; i++) {
		char path[NT_PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path) {
			if (why && why_size)
				snprintf(why, why_size, "%s: path too long", dir);
			return -ENAMETOOLONG;
		}
		struct nt_outfile of;
		int rc = nt_outfile_open(&of, path, false);
		if (!rc) {
			rc = writers[i](of.f, c);
			if (rc)
				snprintf(of.why, sizeof of.why, "writing '%.400s' failed", path);
			else
				rc = nt_outfile_commit(&of);
		}
		if (rc) {
			if (why && why_size)
				snprintf(why, why_size, "%s", of.why);
			nt_outfile_abort(&of);
			return rc;
		}
	}
	return 0;
}
