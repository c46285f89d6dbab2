/* Signature analysis: periodic components (a comb of one period fits their arrivals) found
 * per duration octave, then rare long detours among the rest. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/signature.h>

#include "sortutil.h"

enum {
	MIN_MEMBERS = 8,      /* fewer arrivals than this are never called periodic */
	MAX_GAP_PERIODS = 8,  /* a train may miss up to 7 slots in a row */
	MAX_COMPONENTS = 64,  /* found before merging */
};
static const double TOLERANCE = 0.03;      /* arrival within 3 % of a period of its slot */
static const double MIN_MODE_SHARE = 0.10; /* the modal gap holds >= 10 % of gaps */
static const double MIN_COVERAGE = 0.20;   /* members fill >= 20 % of the comb's slots */
static const double MERGE_REL = 0.005;     /* components within 0.5 % in period are one */

struct ev {
	double t;     /* start, ns */
	double dur;   /* duration, ns */
	size_t orig;  /* index in the caller's array */
	int comp;     /* component id, -1 = none */
};

static int cmp_ev_time(const void *a, const void *b)
{
	double x = ((const struct ev *)a)->t, y = ((const struct ev *)b)->t;
	return (x > y) - (x < y);
}

/* The densest window [g, g * (1 + 2 TOLERANCE)] of the sorted gaps: its median is the period
 * candidate. Returns 0 when no window holds enough gaps. */
static double modal_gap(double *gaps, size_t n)
{
	nt_sort_double(gaps, n);
	size_t best_lo = 0, best_n = 0;
	for (size_t lo = 0, hi = 0; lo < n; lo++) {
		if (gaps[lo] <= 0)
			continue;
		if (hi < lo)
			hi = lo;
		while (hi + 1 < n && gaps[hi + 1] <= gaps[lo] * (1 + 2 * TOLERANCE))
			hi++;
		if (hi - lo + 1 > best_n) {
			best_n = hi - lo + 1;
			best_lo = lo;
		}
	}
	if (best_n < 4 || (double)best_n < MIN_MODE_SHARE * (double)n)
		return 0;
	return gaps[best_lo + best_n / 2];
}

/* Walk from the anchor in one direction (+1/-1) accepting arrivals that land on the comb.
 * Marks members with id; returns how many it accepted; sums (k, t) for the period fit. */
struct fit {
	double sk, st, skk, skt;
	size_t n;
	long kmin, kmax;
};

static void fit_add(struct fit *f, long k, double t)
{
	f->sk += (double)k;
	f->st += t;
	f->skk += (double)k * (double)k;
	f->skt += (double)k * t;
	f->n++;
	if (k < f->kmin)
		f->kmin = k;
	if (k > f->kmax)
		f->kmax = k;
}

static void walk(struct ev **pool, size_t n, size_t anchor, int dir, double period, int id,
		 struct fit *f)
{
	double last_t = pool[anchor]->t;
	long last_k = 0;
	double p = period;
	for (size_t j = anchor; dir > 0 ? j + 1 < n : j > 0;) {
		j = dir > 0 ? j + 1 : j - 1;
		double dt = (pool[j]->t - last_t) * dir;
		long k = lround(dt / p);
		if (k < 1)
			continue;
		if (k > MAX_GAP_PERIODS)
			break;
		if (fabs(dt - (double)k * p) > TOLERANCE * p)
			continue;
		pool[j]->comp = id;
		last_t = pool[j]->t;
		last_k += dir * k;
		fit_add(f, last_k, last_t);
		/* Track the period from the anchor so slow drift does not lose the train. */
		p = fabs(last_t - pool[anchor]->t) / (double)labs(last_k);
	}
}

/* Try to find one periodic component among pool[0..n) (sorted by time). On success marks its
 * members with id, fills *out (without typical_ns) and returns true. */
static bool find_component(struct ev **pool, size_t n, int id, struct nt_periodic *out,
			   double *gaps)
{
	if (n < MIN_MEMBERS)
		return false;
	size_t ng = 0;
	for (size_t i = 0; i + 1 < n; i++)
		gaps[ng++] = pool[i + 1]->t - pool[i]->t;
	double p0 = modal_gap(gaps, ng);
	if (p0 <= 0)
		return false;
	/* Anchor: the first arrival whose next gap is the modal one. */
	size_t anchor = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		if (fabs(pool[i + 1]->t - pool[i]->t - p0) <= TOLERANCE * p0) {
			anchor = i;
			break;
		}
	}
	struct fit f = { .kmin = 0, .kmax = 0 };
	pool[anchor]->comp = id;
	fit_add(&f, 0, pool[anchor]->t);
	walk(pool, n, anchor, +1, p0, id, &f);
	walk(pool, n, anchor, -1, p0, id, &f);

	double slots = (double)(f.kmax - f.kmin + 1);
	bool ok = f.n >= MIN_MEMBERS && (double)f.n >= MIN_COVERAGE * slots;
	double period = p0;
	double denom = (double)f.n * f.skk - f.sk * f.sk;
	if (ok && denom > 0)
		period = ((double)f.n * f.skt - f.sk * f.st) / denom;
	if (!ok || !(period > 0)) {
		for (size_t i = 0; i < n; i++)
			if (pool[i]->comp == id)
				pool[i]->comp = -1;
		return false;
	}
	memset(out, 0, sizeof *out);
	out->freq_hz = 1e9 / period;
	out->count = f.n;
	double t_at_k0 = (f.st - period * f.sk) / (double)f.n;
	out->phase_ns = fmod(t_at_k0, period);
	if (out->phase_ns < 0)
		out->phase_ns += period;
	return true;
}

static double median_of(double *v, size_t n)
{
	if (n == 0)
		return 0;
	nt_sort_double(v, n);
	return (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Recompute count, typical length and jitter of component id from its members. */
static void describe(struct ev *ev, size_t n, int id, struct nt_periodic *c, double *scratch)
{
	size_t m = 0;
	double period = 1e9 / c->freq_hz;
	for (size_t i = 0; i < n; i++)
		if (ev[i].comp == id)
			scratch[m++] = ev[i].dur;
	c->count = m;
	c->typical_ns = median_of(scratch, m);
	m = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].comp != id)
			continue;
		double x = (ev[i].t - c->phase_ns) / period;
		scratch[m++] = fabs(x - round(x)) * period;
	}
	c->jitter_ns = median_of(scratch, m);
}

static int cmp_periodic(const void *a, const void *b)
{
	const struct nt_periodic *x = a, *y = b;
	return (x->count < y->count) - (x->count > y->count);
}

/* Keep out->rare as the NT_SIG_MAX_RARE longest, longest first. */
static void insert_longest(struct nt_signature *out, const struct nt_detour *x)
{
	size_t pos = out->nrare;
	while (pos > 0 && out->rare[pos - 1].duration_ns < x->duration_ns)
		pos--;
	if (pos >= NT_SIG_MAX_RARE)
		return;
	size_t last = out->nrare < NT_SIG_MAX_RARE ? out->nrare : NT_SIG_MAX_RARE - 1;
	memmove(&out->rare[pos + 1], &out->rare[pos], (last - pos) * sizeof *x);
	out->rare[pos] = *x;
	if (out->nrare < NT_SIG_MAX_RARE)
		out->nrare++;
}

int nt_signature_analyze(const struct nt_detour *d, size_t n, uint64_t elapsed_ns,
			 struct nt_signature *out)
{
	(void)elapsed_ns;
	if (!out || (!d && n > 0))
		return -EINVAL;
	memset(out, 0, sizeof *out);
	if (n == 0)
		return 0;

	int rc = -ENOMEM;
	struct ev *ev = malloc(n * sizeof *ev);
	struct ev **pool = malloc(n * sizeof *pool);
	double *scratch = malloc(n * sizeof *scratch);
	struct nt_periodic *comps = calloc(MAX_COMPONENTS, sizeof *comps);
	if (!ev || !pool || !scratch || !comps)
		goto out;
	for (size_t i = 0; i < n; i++)
		ev[i] = (struct ev){ (double)d[i].start_ns, (double)d[i].duration_ns, i, -1 };
	qsort(ev, n, sizeof *ev, cmp_ev_time);

	/* Each pair of adjacent duration octaves, longest first, then everything left. */
	int ncomp = 0;
	for (int b = NT_HIST_BINS - 1; b >= -1 && ncomp < MAX_COMPONENTS; b--) {
		size_t np = 0;
		for (size_t i = 0; i < n; i++) {
			unsigned bin = nt_log2_bin((uint64_t)ev[i].dur, NT_HIST_BINS);
			bool in = b < 0 || (int)bin == b || (int)bin == b + 1;
			if (ev[i].comp < 0 && in)
				pool[np++] = &ev[i];
		}
		while (ncomp < MAX_COMPONENTS && find_component(pool, np, ncomp, &comps[ncomp], scratch)) {
			size_t keep = 0;
			for (size_t i = 0; i < np; i++)
				if (pool[i]->comp < 0)
					pool[keep++] = pool[i];
			np = keep;
			ncomp++;
		}
	}

	/* One train split over octaves shows up as several components of the same period. */
	for (int i = 0; i < ncomp; i++) {
		if (comps[i].count == 0)
			continue;
		for (int j = i + 1; j < ncomp; j++) {
			double pi = 1e9 / comps[i].freq_hz, pj = 1e9 / comps[j].freq_hz;
			if (comps[j].count == 0 || fabs(pi - pj) > MERGE_REL * pi)
				continue;
			/* Same period but another phase: two sources, kept apart. */
			double dphase = fmod(fabs(comps[i].phase_ns - comps[j].phase_ns), pi);
			if (fmin(dphase, pi - dphase) > TOLERANCE * pi)
				continue;
			for (size_t k = 0; k < n; k++)
				if (ev[k].comp == j)
					ev[k].comp = i;
			comps[j].count = 0;
		}
	}
	size_t periodic = 0;
	for (int i = 0; i < ncomp; i++) {
		if (comps[i].count == 0)
			continue;
		describe(ev, n, i, &comps[i], scratch);
		periodic += comps[i].count;
	}
	qsort(comps, (size_t)ncomp, sizeof *comps, cmp_periodic);
	for (int i = 0; i < ncomp && out->nperiodic < NT_SIG_MAX_PERIODIC; i++)
		if (comps[i].count > 0)
			out->periodic[out->nperiodic++] = comps[i];
	out->periodic_detours = periodic;

	/* Rare long detours: not periodic and long against the typical detour. */
	for (size_t i = 0; i < n; i++)
		scratch[i] = ev[i].dur;
	double med = median_of(scratch, n);
	double thr = med * 10 > 10000 ? med * 10 : 10000;
	out->rare_threshold_ns = (uint64_t)thr;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].comp >= 0 || ev[i].dur < thr)
			continue;
		out->rare_count++;
		insert_longest(out, &d[ev[i].orig]);
	}
	rc = 0;
out:
	free(ev);
	free(pool);
	free(scratch);
	free(comps);
	return rc;
}
