/* Two runs compared (noisetool/compare.h): call sites matched by function and location, ranks
 * by number, and each change judged against the noise each run's own data show. */
#include "nt-config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/compare.h>

#include "report-merge.h"

#define K NT_COMPARE_BLOCKS

/* What one run says of one compared site or rank: the sums that give its statistic and the
 * statistic's noise. */
struct acc {
	uint64_t hist[NT_LOG_HIST_BINS]; /* sites: call durations, log2 bins of cycles */
	double block_ns[K];              /* what fell in each block of the run's span */
	double sum_sq_ns;                /* sum of the squares of those events */
};

/* One run being compared: its report, and for each of its log sites the compared site. */
struct run {
	const struct nt_report *rep;
	size_t *site_of_rep;   /* report site -> compared site */
	size_t **site_of_log;  /* [rank][log site] -> compared site, SIZE_MAX when unmatched */
	struct acc *sites;     /* per compared site */
	uint64_t span_ns;      /* the job's span on the global time base */
};

/* A report site, for sorting by the compared key. */
struct keyed {
	const struct nt_report_site *s;
	int run;   /* 0: A, 1: B */
	size_t at; /* in its report */
};

static int str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_key(const struct nt_report_site *a, const struct nt_report_site *b)
{
	int c = str_cmp(a->function, b->function);
	if (!c)
		c = str_cmp(a->location, b->location);
	return c ? c : str_cmp(a->python_call, b->python_call);
}

static int cmp_keyed(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	int c = cmp_key(a->s, b->s);
	if (c)
		return c;
	if (a->run != b->run)
		return a->run - b->run;
	return (a->at > b->at) - (a->at < b->at);
}

/* The report site of a log site, by its place in rep->sites; SIZE_MAX when none. */
static size_t rep_site_of(const struct nt_report *rep, const struct nt_log_site *s)
{
	const struct nt_report_site *m = nt_report_merged_site(rep, s);
	return m ? (size_t)(m - rep->sites) : SIZE_MAX;
}

/* Which block of span_ns time t_ns falls in. */
static unsigned block_of(uint64_t t_ns, uint64_t span_ns)
{
	if (!span_ns)
		return 0;
	double k = (double)t_ns / (double)span_ns * K;
	return k >= K - 1 ? K - 1 : k > 0 ? (unsigned)k : 0;
}

/* The variance of the sum of the blocks: K x their sample variance (doc/compare.md). */
static double block_var(const double *x)
{
	double mean = 0, var = 0;
	for (int k = 0; k < K; k++)
		mean += x[k] / K;
	for (int k = 0; k < K; k++)
		var += (x[k] - mean) * (x[k] - mean) / (K - 1);
	return K * var;
}

/* The per-call variance of durations in a log2 histogram of cycles, in ns^2: each bin's calls
 * at its centre, plus the spread inside a bin as uniform. 0 for fewer than two calls. */
static double hist_var_ns2(const uint64_t *hist, double clock_hz)
{
	double n = 0, sum = 0, sum2 = 0, inside = 0;
	if (!(clock_hz > 0))
		return 0;
	double ns = 1e9 / clock_hz;
	for (int b = 0; b < NT_LOG_HIST_BINS; b++) {
		if (!hist[b])
			continue;
		double lo = b ? ldexp(1, b) : 0, width = b ? ldexp(1, b) : 2;
		double mid = (lo + width / 2) * ns, c = (double)hist[b];
		n += c;
		sum += c * mid;
		sum2 += c * mid * mid;
		inside += c * width * width * ns * ns / 12;
	}
	if (n < 2)
		return 0;
	double var = (sum2 - sum * sum / n) / (n - 1);
	return (var > 0 ? var : 0) + inside / n;
}

enum nt_compare_verdict nt_compare_judge(double a, double b, double noise, double floor)
{
	double d = fabs(b - a);
	return d > NT_COMPARE_SIGMAS * noise && d >= floor && d > 0 ? NT_COMPARE_SIGNIFICANT
								   : NT_COMPARE_WITHIN_NOISE;
}

const char *nt_compare_verdict_name(enum nt_compare_verdict v)
{
	switch (v) {
	case NT_COMPARE_SIGNIFICANT:
		return "significant";
	case NT_COMPARE_WITHIN_NOISE:
		return "within noise";
	case NT_COMPARE_FEW_CALLS:
		return "few calls";
	case NT_COMPARE_ONLY_A:
		return "only in A";
	case NT_COMPARE_ONLY_B:
		return "only in B";
	}
	return "?";
}

static void value_set(struct nt_compare_value *v, double a, double na, double b, double nb)
{
	v->a = a;
	v->b = b;
	v->noise_a = na;
	v->noise_b = nb;
	v->change = b - a;
	v->noise = sqrt(na * na + nb * nb);
}

static void run_free(struct run *r)
{
	if (r->site_of_log && r->rep)
		for (uint32_t k = 0; k < r->rep->log->nranks; k++)
			free(r->site_of_log[k]);
	free(r->site_of_log);
	free(r->site_of_rep);
	free(r->sites);
}

/* Map every log site of run r to its compared site (r->site_of_rep filled). */
static int run_map_logs(struct run *r)
{
	const struct nt_report *rep = r->rep;
	const struct nt_log *log = rep->log;
	r->site_of_log = calloc(log->nranks ? log->nranks : 1, sizeof *r->site_of_log);
	if (!r->site_of_log)
		return -ENOMEM;
	for (uint32_t k = 0; k < log->nranks; k++) {
		const struct nt_log_rank *rk = &log->ranks[k];
		r->site_of_log[k] = calloc(rk->nsites ? rk->nsites : 1, sizeof **r->site_of_log);
		if (!r->site_of_log[k])
			return -ENOMEM;
		for (uint32_t i = 0; i < rk->nsites; i++) {
			size_t at = rep_site_of(rep, &rk->sites[i]);
			r->site_of_log[k][i] = at == SIZE_MAX ? SIZE_MAX : r->site_of_rep[at];
		}
	}
	return 0;
}

/* Run r's per-site sums: every rank's histograms, and the time of the calls kept because they
 * were slow (NT_LOG_REC_SLOW, NT_LOG_REC_ABSOLUTE) by block of the rank's own span. */
static void run_site_sums(struct run *r)
{
	const struct nt_log *log = r->rep->log;
	for (uint32_t k = 0; k < log->nranks; k++) {
		const struct nt_log_rank *rk = &log->ranks[k];
		for (uint32_t i = 0; i < rk->nsites; i++) {
			size_t c = r->site_of_log[k][i];
			if (c == SIZE_MAX)
				continue;
			for (int b = 0; b < NT_LOG_HIST_BINS; b++)
				r->sites[c].hist[b] += rk->sites[i].hist[b];
		}
		for (uint64_t q = 0; q < rk->nrecords; q++) {
			const struct nt_log_record *x = &rk->records[q];
			if (!(x->flags & (NT_LOG_REC_SLOW | NT_LOG_REC_ABSOLUTE)) || x->site >= rk->nsites)
				continue;
			size_t c = r->site_of_log[k][x->site];
			if (c == SIZE_MAX)
				continue;
			double d = (double)x->duration_ns;
			r->sites[c].block_ns[block_of(x->start_ns, rk->wall_ns)] += d;
			r->sites[c].sum_sq_ns += d * d;
		}
	}
}

/* Time per call of a compared site in run r and its standard error: the histogram's standard
 * error of the mean and the lumpiness of the slow calls across blocks (doc/compare.md). */
static void site_stat(const struct run *r, const struct acc *s, uint64_t calls, uint64_t time_ns,
		      double *mean_ns, double *se_ns)
{
	*mean_ns = calls ? (double)time_ns / (double)calls : 0;
	*se_ns = 0;
	if (!calls)
		return;
	double n = (double)calls;
	double var_total = n * hist_var_ns2(s->hist, r->rep->log->clock_hz) + block_var(s->block_ns);
	*se_ns = sqrt(var_total) / n;
}

/* The job's span on the global time base: the latest end of a rank. */
static uint64_t job_span_ns(const struct nt_log *log)
{
	double span = 0;
	for (uint32_t k = 0; k < log->nranks; k++) {
		double end = (double)log->ranks[k].init_global_ns + (double)log->ranks[k].wall_ns;
		span = end > span ? end : span;
	}
	return span < 0x1p63 ? (uint64_t)span : UINT64_MAX;
}

static uint64_t longest_wall_ns(const struct nt_log *log)
{
	uint64_t w = 0;
	for (uint32_t k = 0; k < log->nranks; k++)
		w = log->ranks[k].wall_ns > w ? log->ranks[k].wall_ns : w;
	return w;
}

/* The delay rank (index; ALL_RANKS: any) imposed in run r, with its noise: the lumpiness of
 * its late instances across blocks of the job's span, at least their own compound-Poisson
 * spread (the root of the sum of their squares). */
#define ALL_RANKS UINT32_MAX
static void delay_stat(const struct run *r, uint32_t rank, double *delay_ns, double *se_ns)
{
	const struct nt_attrib *a = &r->rep->attrib;
	double x[K] = { 0 }, sum = 0, sq = 0;
	for (size_t i = 0; i < a->nlate; i++) {
		const struct nt_late *l = &a->late[i];
		if (rank != ALL_RANKS && l->rank != rank)
			continue;
		double d = (double)l->delay_ns;
		x[block_of(l->start_ns, r->span_ns)] += d;
		sum += d;
		sq += d * d;
	}
	double var = block_var(x);
	*delay_ns = sum;
	*se_ns = sqrt(var > sq ? var : sq);
}

static const struct nt_culprit *culprit_of(const struct nt_report *rep, uint32_t rank)
{
	for (size_t i = 0; i < rep->attrib.nranks; i++)
		if (rep->attrib.ranks[i].rank == rank)
			return &rep->attrib.ranks[i];
	return NULL;
}

static uint64_t culprit_site_ns(const struct run *r, size_t compared)
{
	const struct nt_attrib *a = &r->rep->attrib;
	uint64_t ns = 0;
	for (size_t i = 0; i < a->nsites; i++) {
		const struct nt_log_site *s = a->sites[i].site;
		if (!s)
			continue;
		/* The culprit site is a log site of some rank: find it among the ranks' sites. */
		const struct nt_log *log = r->rep->log;
		for (uint32_t k = 0; k < log->nranks; k++) {
			const struct nt_log_rank *rk = &log->ranks[k];
			if (rk->nsites && s >= rk->sites && s < rk->sites + rk->nsites) {
				if (r->site_of_log[k][s - rk->sites] == compared)
					ns += a->sites[i].delay_ns;
				break;
			}
		}
	}
	return ns;
}

/* Significant first, then the largest change first. */
static double order_key(enum nt_compare_verdict v, double change)
{
	return (v == NT_COMPARE_SIGNIFICANT ? 1e300 : 0) + fabs(change);
}

static int cmp_sites(const void *x, const void *y)
{
	const struct nt_compare_site *a = x, *b = y;
	double ka = order_key(a->mean_ns.verdict,
			      (double)a->time_ns_b - (double)a->time_ns_a);
	double kb = order_key(b->mean_ns.verdict,
			      (double)b->time_ns_b - (double)b->time_ns_a);
	if (ka != kb)
		return ka < kb ? 1 : -1;
	int c = str_cmp(a->function, b->function);
	return c ? c : str_cmp(a->location, b->location);
}

static int cmp_ranks(const void *x, const void *y)
{
	const struct nt_compare_rank *a = x, *b = y;
	double ka = order_key(a->delay_ns.verdict, a->delay_ns.change);
	double kb = order_key(b->delay_ns.verdict, b->delay_ns.change);
	if (ka != kb)
		return ka < kb ? 1 : -1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The compared sites: the two reports' sites grouped by key. */
static int build_sites(struct nt_compare *c, struct run *runs)
{
	size_t n = runs[0].rep->nsites + runs[1].rep->nsites;
	struct keyed *all = calloc(n ? n : 1, sizeof *all);
	for (int r = 0; r < 2; r++)
		runs[r].site_of_rep = calloc(runs[r].rep->nsites ? runs[r].rep->nsites : 1,
					     sizeof *runs[r].site_of_rep);
	if (!all || !runs[0].site_of_rep || !runs[1].site_of_rep) {
		free(all);
		return -ENOMEM;
	}
	size_t k = 0;
	for (int r = 0; r < 2; r++)
		for (size_t i = 0; i < runs[r].rep->nsites; i++)
			all[k++] = (struct keyed){ &runs[r].rep->sites[i], r, i };
	qsort(all, n, sizeof *all, cmp_keyed);
	c->sites = calloc(n ? n : 1, sizeof *c->sites);
	if (!c->sites) {
		free(all);
		return -ENOMEM;
	}
	for (size_t i = 0, j; i < n; i = j) {
		struct nt_compare_site *o = &c->sites[c->nsites];
		o->function = all[i].s->function;
		o->location = all[i].s->location;
		o->python_call = all[i].s->python_call;
		for (j = i; j < n && cmp_key(all[i].s, all[j].s) == 0; j++) {
			const struct nt_report_site *s = all[j].s;
			runs[all[j].run].site_of_rep[all[j].at] = c->nsites;
			/* Several report sites under one key (one line, two offsets) add up. */
			if (all[j].run == 0) {
				o->calls_a += s->calls;
				o->time_ns_a += s->time_ns_total;
				o->ranks_a = s->ranks > o->ranks_a ? s->ranks : o->ranks_a;
				o->cov_a = s->cov > o->cov_a ? s->cov : o->cov_a;
			} else {
				o->calls_b += s->calls;
				o->time_ns_b += s->time_ns_total;
				o->ranks_b = s->ranks > o->ranks_b ? s->ranks : o->ranks_b;
				o->cov_b = s->cov > o->cov_b ? s->cov : o->cov_b;
			}
		}
		c->nsites++;
	}
	free(all);
	for (int r = 0; r < 2; r++) {
		runs[r].sites = calloc(c->nsites ? c->nsites : 1, sizeof *runs[r].sites);
		if (!runs[r].sites)
			return -ENOMEM;
		int rc = run_map_logs(&runs[r]);
		if (rc)
			return rc;
		run_site_sums(&runs[r]);
	}
	for (size_t i = 0; i < c->nsites; i++) {
		struct nt_compare_site *o = &c->sites[i];
		double ma, sa, mb, sb;
		site_stat(&runs[0], &runs[0].sites[i], o->calls_a, o->time_ns_a, &ma, &sa);
		site_stat(&runs[1], &runs[1].sites[i], o->calls_b, o->time_ns_b, &mb, &sb);
		value_set(&o->mean_ns, ma, sa, mb, sb);
		o->culprit_ns_a = culprit_site_ns(&runs[0], i);
		o->culprit_ns_b = culprit_site_ns(&runs[1], i);
		bool in_a = o->ranks_a || o->calls_a, in_b = o->ranks_b || o->calls_b;
		if (!in_a || !in_b) {
			o->mean_ns.verdict = in_a ? NT_COMPARE_ONLY_A : NT_COMPARE_ONLY_B;
			*(in_a ? &c->sites_only_a : &c->sites_only_b) += 1;
		} else if (o->calls_a < (uint64_t)NT_COMPARE_MIN_CALLS * (o->ranks_a ? o->ranks_a : 1) ||
			   o->calls_b < (uint64_t)NT_COMPARE_MIN_CALLS * (o->ranks_b ? o->ranks_b : 1)) {
			o->mean_ns.verdict = NT_COMPARE_FEW_CALLS;
		} else {
			o->mean_ns.verdict = nt_compare_judge(ma, mb, o->mean_ns.noise,
							      NT_COMPARE_REL_FLOOR * fmax(ma, mb));
		}
	}
	qsort(c->sites, c->nsites, sizeof *c->sites, cmp_sites);
	return 0;
}

/* The floor of a lateness change: a share of the larger value and of the longer wall time. */
static double delay_floor(const struct nt_compare *c, double a, double b)
{
	double wall = (double)(c->wall_ns_a > c->wall_ns_b ? c->wall_ns_a : c->wall_ns_b);
	return fmax(NT_COMPARE_REL_FLOOR * fmax(a, b), NT_COMPARE_WALL_FLOOR * wall);
}

/* The compared ranks: every rank number of either run, in order. */
static int build_ranks(struct nt_compare *c, const struct run *runs)
{
	const struct nt_log *la = runs[0].rep->log, *lb = runs[1].rep->log;
	size_t n = (size_t)la->nranks + lb->nranks;
	c->ranks = calloc(n ? n : 1, sizeof *c->ranks);
	if (!c->ranks)
		return -ENOMEM;
	/* Both logs hold their ranks in order (the reader checks it): a merge by number. */
	uint32_t i = 0, j = 0;
	while (i < la->nranks || j < lb->nranks) {
		struct nt_compare_rank *o = &c->ranks[c->nranks++];
		bool in_a = i < la->nranks && (j >= lb->nranks || la->ranks[i].rank <= lb->ranks[j].rank);
		bool in_b = j < lb->nranks && (i >= la->nranks || lb->ranks[j].rank <= la->ranks[i].rank);
		double da = 0, sa = 0, db = 0, sb = 0;
		if (in_a) {
			const struct nt_log_rank *k = &la->ranks[i];
			const struct nt_culprit *cu = culprit_of(runs[0].rep, i);
			o->rank = k->rank;
			o->wall_ns_a = k->wall_ns;
			o->mpi_ns_a = k->mpi_ns;
			if (cu) {
				o->late_a = cu->instances;
				o->causes_a = cu->causes;
			}
			delay_stat(&runs[0], i, &da, &sa);
		}
		if (in_b) {
			const struct nt_log_rank *k = &lb->ranks[j];
			const struct nt_culprit *cu = culprit_of(runs[1].rep, j);
			o->rank = k->rank;
			o->wall_ns_b = k->wall_ns;
			o->mpi_ns_b = k->mpi_ns;
			if (cu) {
				o->late_b = cu->instances;
				o->causes_b = cu->causes;
			}
			delay_stat(&runs[1], j, &db, &sb);
		}
		value_set(&o->delay_ns, da, sa, db, sb);
		if (!in_a || !in_b) {
			o->delay_ns.verdict = in_a ? NT_COMPARE_ONLY_A : NT_COMPARE_ONLY_B;
			*(in_a ? &c->ranks_only_a : &c->ranks_only_b) += 1;
		} else {
			o->delay_ns.verdict = nt_compare_judge(da, db, o->delay_ns.noise,
							       delay_floor(c, da, db));
		}
		i += in_a;
		j += in_b;
	}
	qsort(c->ranks, c->nranks, sizeof *c->ranks, cmp_ranks);
	return 0;
}

int nt_compare_build(const struct nt_report *a, const struct nt_report *b, struct nt_compare **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!a || !b || !a->log || !b->log)
		return -EINVAL;
	struct nt_compare *c = calloc(1, sizeof *c);
	struct run runs[2] = { { .rep = a }, { .rep = b } };
	if (!c)
		return -ENOMEM;
	c->a = a;
	c->b = b;
	c->wall_ns_a = longest_wall_ns(a->log);
	c->wall_ns_b = longest_wall_ns(b->log);
	for (int r = 0; r < 2; r++) {
		runs[r].span_ns = job_span_ns(runs[r].rep->log);
		const struct nt_attrib *at = &runs[r].rep->attrib;
		struct nt_causes *sum = r ? &c->causes_b : &c->causes_a;
		for (size_t i = 0; i < at->nranks; i++)
			for (int k = 0; k < NT_CAUSE_COUNT; k++)
				sum->ns[k] += at->ranks[i].causes.ns[k];
	}
	int rc = build_sites(c, runs);
	if (!rc)
		rc = build_ranks(c, runs);
	if (!rc) {
		double da, sa, db, sb;
		delay_stat(&runs[0], ALL_RANKS, &da, &sa);
		delay_stat(&runs[1], ALL_RANKS, &db, &sb);
		value_set(&c->delay_ns, da, sa, db, sb);
		c->delay_ns.verdict = nt_compare_judge(da, db, c->delay_ns.noise,
						       delay_floor(c, da, db));
	}
	run_free(&runs[0]);
	run_free(&runs[1]);
	if (rc) {
		nt_compare_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void nt_compare_free(struct nt_compare *c)
{
	if (!c)
		return;
	free(c->sites);
	free(c->ranks);
	free(c);
}
