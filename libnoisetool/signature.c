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
	GAP_REACH = 4,        /* gaps are taken to the next 4 arrivals */
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

/* Index of the first sorted value >= x. */
static size_t lower_index(const double *v, size_t n, double x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The densest window [g, g * (1 + 2 TOLERANCE)] of the sorted gaps: its median is the period
 * candidate. Returns 0 when the window holds fewer than max(4, MIN_MODE_SHARE * nev) gaps. */
static double modal_gap(double *gaps, size_t n, size_t nev)
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
	if (best_n < 4 || (double)best_n < MIN_MODE_SHARE * (double)nev)
		return 0;
	double mode = gaps[best_lo + best_n / 2];
	/* Gaps to several following arrivals make multiples of the period as common as the
	 * period itself: prefer the fundamental when it is nearly as well supported. */
	for (int div = 4; div >= 2; div--) {
		double c = mode / div;
		size_t lo = lower_index(gaps, n, c * (1 - TOLERANCE));
		size_t hi = lower_index(gaps, n, c * (1 + TOLERANCE));
		if (hi - lo >= 4 && (double)(hi - lo) >= 0.5 * (double)best_n)
			return gaps[lo + (hi - lo) / 2];
	}
	return mode;
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

static double fit_slope(const struct fit *f, double fallback)
{
	double denom = (double)f->n * f->skk - f->sk * f->sk;
	if (f->n < 3 || denom <= 0)
		return fallback;
	double p = ((double)f->n * f->skt - f->sk * f->st) / denom;
	return p > 0 ? p : fallback;
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
		double err = fabs(dt - (double)k * p);
		if (err > TOLERANCE * p)
			continue;
		/* Of the arrivals in this slot's window, take the one closest to the tooth. */
		size_t best = j;
		for (size_t m = j; dir > 0 ? m + 1 < n : m > 0;) {
			m = dir > 0 ? m + 1 : m - 1;
			double dm = (pool[m]->t - last_t) * dir;
			if (dm > (double)k * p + TOLERANCE * p)
				break;
			double em = fabs(dm - (double)k * p);
			if (em < err) {
				err = em;
				best = m;
			}
		}
		j = best;
		pool[j]->comp = id;
		last_t = pool[j]->t;
		last_k += dir * k;
		fit_add(f, last_k, last_t);
		/* The least-squares period so far, so that drift does not lose the train. */
		p = fit_slope(f, p);
	}
}

/* Try to find one periodic component among pool[0..n) (sorted by time). On success marks its
 * members with id, fills *out (without typical_ns) and returns true. */
static bool find_component(struct ev **pool, size_t n, int id, struct nt_periodic *out,
			   double *gaps)
{
	if (n < MIN_MEMBERS)
		return false;
	/* Gaps to the next GAP_REACH arrivals, so that unrelated detours interleaved with a
	 * train do not hide its period. */
	size_t ng = 0;
	for (size_t i = 0; i + 1 < n; i++)
		for (size_t k = i + 1; k < n && k <= i + GAP_REACH; k++)
			gaps[ng++] = pool[k]->t - pool[i]->t;
	double p0 = modal_gap(gaps, ng, n);
	if (p0 <= 0)
		return false;
	/* Anchor: the first arrival followed by another one modal gap later. */
	size_t anchor = 0;
	bool anchored = false;
	for (size_t i = 0; i + 1 < n && !anchored; i++) {
		for (size_t k = i + 1; k < n && k <= i + GAP_REACH; k++) {
			if (fabs(pool[k]->t - pool[i]->t - p0) <= TOLERANCE * p0) {
				anchor = i;
				anchored = true;
				break;
			}
		}
	}
	struct fit f = { .kmin = 0, .kmax = 0 };
	pool[anchor]->comp = id;
	fit_add(&f, 0, pool[anchor]->t);
	walk(pool, n, anchor, +1, p0, id, &f);
	walk(pool, n, anchor, -1, p0, id, &f);

	double slots = (double)(f.kmax - f.kmin + 1);
	bool ok = f.n >= MIN_MEMBERS && (double)f.n >= MIN_COVERAGE * slots;
	double period = fit_slope(&f, p0);
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

/* Distance of x from the nearest multiple of period. */
static double off_comb(double x, double period)
{
	double r = fmod(fabs(x), period);
	return fmin(r, period - r);
}

static void relabel(struct ev *ev, size_t n, int from, int to)
{
	for (size_t k = 0; k < n; k++)
		if (ev[k].comp == from)
			ev[k].comp = to;
}

/* One train split over duration octaves shows up as several components:
 *  - period m x P on the teeth of a component of period P (some of its arrivals landed in
 *    another octave, e.g. every other burst lengthened by a coinciding tick): one component;
 *  - two components of period P whose teeth interleave at P/2: one component of period P/2.
 * Repeats until nothing merges. */
static void merge_components(struct ev *ev, size_t n, struct nt_periodic *comps, int ncomp)
{
	bool merged = true;
	while (merged) {
		merged = false;
		for (int i = 0; i < ncomp; i++) {
			for (int j = 0; j < ncomp; j++) {
				if (i == j || comps[i].count == 0 || comps[j].count == 0)
					continue;
				double pi = 1e9 / comps[i].freq_hz, pj = 1e9 / comps[j].freq_hz;
				double m = round(pj / pi);
				double dphase = comps[j].phase_ns - comps[i].phase_ns;
				/* The teeth must coincide as closely as each comb fits its own arrivals. */
				double tol = 4 * fmax(comps[i].jitter_ns, comps[j].jitter_ns) + 1000;
				if (tol > TOLERANCE * pi)
					tol = TOLERANCE * pi;
				if (m >= 1 && m <= MAX_GAP_PERIODS && fabs(pj - m * pi) <= MERGE_REL * pj &&
				    off_comb(dphase, pi) <= tol) {
					relabel(ev, n, j, i);
					comps[i].count += comps[j].count;
					comps[j].count = 0;
					merged = true;
				} else if (m == 1 && fabs(pj - pi) <= MERGE_REL * pi &&
					   fabs(off_comb(dphase, pi) - pi / 2) <= tol) {
					relabel(ev, n, j, i);
					comps[i].count += comps[j].count;
					comps[j].count = 0;
					comps[i].freq_hz *= 2;
					comps[i].phase_ns = fmod(fmin(comps[i].phase_ns, comps[j].phase_ns), pi / 2);
					merged = true;
				}
			}
		}
	}
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
	double *scratch = malloc(n * GAP_REACH * sizeof *scratch);
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

	for (int i = 0; i < ncomp; i++)
		describe(ev, n, i, &comps[i], scratch);
	merge_components(ev, n, comps, ncomp);
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
