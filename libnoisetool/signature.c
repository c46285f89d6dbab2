/* Signature analysis: periodic components (a comb of one period fits their arrivals) found
 * per duration octave, then rare long detours among the rest. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/noise.h>
#include <noisetool/signature.h>

#include "log2-bin.h"
#include "percentile.h"

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
/* A real source's arrivals sit far closer to its comb than the 3 % tolerance (ticks and timer
 * wake-ups here: 50 ns to 2 us on 4-10 ms periods); chance coincidences in random noise spread
 * over the whole window (median ~1.5 % of a period; 0.8 % for a chance chain of 9 seen in
 * Poisson noise). */
static const double MAX_JITTER = 0.004;

/* A comb: teeth at t0 + k * period (absolute times, so that pieces of one train compare
 * exactly, whatever the period's rounding). */
struct comb {
	double period;
	double t0;
	double jitter;  /* median distance of members from their tooth */
	double typical; /* median duration */
	size_t count;
	int id;         /* the members' comp id (the array is sorted before it is listed) */
};

struct ev {
	double t;     /* start, ns */
	double dur;   /* duration, ns */
	size_t orig;  /* index in the caller's array */
	int comp;     /* component id, -1 = none */
	bool preempted; /* NT_DETOUR_PREEMPTED */
	uint32_t softirqs; /* the kinds that ran in it, when not preempted (bit k: kind k) */
};

/* A detour's softirq time, in total and by kind. */
static void add_softirqs(const struct ev *e, uint64_t *total, uint64_t *kind_ns)
{
	if (!e->softirqs)
		return;
	*total += (uint64_t)e->dur;
	for (unsigned k = 0; k < NT_DETOUR_SOFTIRQ_KINDS; k++)
		if (e->softirqs & 1u << k)
			kind_ns[k] += (uint64_t)e->dur;
}

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
	 * period itself: prefer the fundamental when it is nearly as well supported. A train that
	 * misses every k-th tooth (those detours fell in another duration octave) has every
	 * arrival's (k-1)-th successor k periods away, which makes k periods the mode up to
	 * k = GAP_REACH + 1 (a 500 Hz ticker missing every fifth came out as four 100 Hz
	 * components and no 500 Hz one). */
	for (int div = GAP_REACH + 1; div >= 2; div--) {
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

/* Signed distance of t from the nearest tooth of the comb (t0, period). */
static double residual(double t, double t0, double period)
{
	double x = (t - t0) / period;
	return (x - round(x)) * period;
}

/* Try to find one periodic component among pool[0..n) (sorted by time). On success marks its
 * members with id, fills *out (without typical_ns) and returns true. */
static bool find_component(struct ev **pool, size_t n, int id, struct comb *out,
			   double *gaps)
{
	if (n < MIN_MEMBERS)
		return false;
	/* Gaps to the next GAP_REACH arrivals, so that unrelated detours interleaved with a
	 * train do not hide its period. (Reaching further, to every arrival within 25 ms, was
	 * tried: it made multiples of the tick period win and split the tick train.) */
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
	memset(out, 0, sizeof *out);
	out->period = period;
	out->t0 = (f.st - period * f.sk) / (double)f.n;
	out->count = f.n;
	if (ok && period > 0) {
		/* Jitter of the members against the fitted comb. */
		size_t m = 0;
		for (size_t i = 0; i < n; i++)
			if (pool[i]->comp == id)
				gaps[m++] = fabs(residual(pool[i]->t, out->t0, period));
		nt_sort_double(gaps, m);
		out->jitter = gaps[m / 2];
		ok = out->jitter <= MAX_JITTER * period;
		/* Significance: how many members would chance put within +-2 jitters of the teeth,
		 * at this pool's arrival rate? A real train must beat that well. */
		double span = pool[n - 1]->t - pool[0]->t;
		double rate = span > 0 ? (double)n / span : 0;
		double hit = 1 - exp(-rate * (4 * out->jitter + 200));
		double chance = hit * slots;
		ok = ok && (double)f.n >= 3 * chance + 3 * sqrt(chance);
	}
	if (!ok || !(period > 0)) {
		for (size_t i = 0; i < n; i++)
			if (pool[i]->comp == id)
				pool[i]->comp = -1;
		return false;
	}
	return true;
}

static double median_of(double *v, size_t n)
{
	if (n == 0)
		return 0;
	nt_sort_double(v, n);
	return (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* One member per tooth: after a merge or an extension two arrivals may claim the same tooth;
 * the one nearer to it stays. ev is sorted by time, so claimants of a tooth are adjacent. */
static void one_per_tooth(struct ev *ev, size_t n, int id, const struct comb *c)
{
	size_t prev = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].comp != id)
			continue;
		if (prev != SIZE_MAX && lround((ev[i].t - c->t0) / c->period) ==
					    lround((ev[prev].t - c->t0) / c->period)) {
			bool keep_new = fabs(residual(ev[i].t, c->t0, c->period)) <
					fabs(residual(ev[prev].t, c->t0, c->period));
			size_t drop = keep_new ? prev : i;
			ev[drop].comp = -1;
			if (drop == prev)
				prev = i;
			continue;
		}
		prev = i;
	}
}

/* Refit comb id over its members, robustly: least squares (tooth numbers from the current comb),
 * then members further than 4x the median distance (at least 1 us) from their tooth are let go
 * and the fit is done again, so that a few chance arrivals caught by a loose first walk do not
 * skew the period. Then count, typical duration and jitter. */
static void refit(struct ev *ev, size_t n, int id, struct comb *c, double *scratch)
{
	for (int pass = 0; pass < 3; pass++) {
		one_per_tooth(ev, n, id, c);
		struct fit f = { .kmin = 0, .kmax = 0 };
		for (size_t i = 0; i < n; i++)
			if (ev[i].comp == id)
				fit_add(&f, lround((ev[i].t - c->t0) / c->period), ev[i].t);
		c->count = f.n;
		if (f.n == 0)
			return;
		c->period = fit_slope(&f, c->period);
		c->t0 = (f.st - c->period * f.sk) / (double)f.n;
		size_t m = 0;
		for (size_t i = 0; i < n; i++)
			if (ev[i].comp == id)
				scratch[m++] = fabs(residual(ev[i].t, c->t0, c->period));
		c->jitter = median_of(scratch, m);
		double limit = fmax(4 * c->jitter, 1000);
		size_t let_go = 0;
		for (size_t i = 0; i < n; i++) {
			if (ev[i].comp == id && fabs(residual(ev[i].t, c->t0, c->period)) > limit) {
				ev[i].comp = -1;
				let_go++;
			}
		}
		if (!let_go)
			break;
	}
	size_t m = 0;
	c->count = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].comp == id) {
			scratch[m++] = ev[i].dur;
			c->count++;
		}
	}
	c->typical = median_of(scratch, m);
}

/* Median distance of comb j's members from the comb (t0 + shift, period). */
static double members_off(const struct ev *ev, size_t n, int j, double t0, double period,
			  double *scratch)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (ev[i].comp == j)
			scratch[m++] = fabs(residual(ev[i].t, t0, period));
	return median_of(scratch, m);
}

static void relabel(struct ev *ev, size_t n, int from, int to)
{
	for (size_t k = 0; k < n; k++)
		if (ev[k].comp == from)
			ev[k].comp = to;
}

/* One train split over duration octaves, or broken by a long gap, shows up as several combs:
 *  - period m x P whose members sit on the teeth of a comb of period P (any m >= 1; e.g. every
 *    other burst lengthened by a coinciding tick lands in another octave, or every tenth where
 *    the train and the tick beat at 10 Hz): one comb. The periods must agree within
 *    MERGE_REL of P (not of m x P, which would let any slow comb pass for large m): fitted
 *    over a run, real pieces agree far closer;
 *  - two alike combs of period P whose teeth interleave at P/2: one comb of period P/2.
 * Members must sit within 4 x the larger jitter + 1 us of the other comb's teeth (at most the
 * 3 % tolerance). Repeats until nothing merges. */
static void merge_combs(struct ev *ev, size_t n, struct comb *c, int ncomb, double *scratch)
{
	bool merged = true;
	while (merged) {
		merged = false;
		for (int i = 0; i < ncomb; i++) {
			for (int j = 0; j < ncomb; j++) {
				if (i == j || c[i].count == 0 || c[j].count == 0)
					continue;
				double pi = c[i].period, pj = c[j].period;
				double m = round(pj / pi);
				double tol = fmin(4 * fmax(c[i].jitter, c[j].jitter) + 1000, TOLERANCE * pi);
				bool on_teeth = m >= 1 && fabs(pj - m * pi) <= MERGE_REL * pi &&
						members_off(ev, n, j, c[i].t0, pi, scratch) <= tol;
				/* Interleaving halves of one train look alike: similar counts and
				 * durations (two sources at the same rate usually differ). */
				bool alike = c[i].count <= 2 * c[j].count && c[j].count <= 2 * c[i].count &&
					     c[i].typical <= 1.5 * c[j].typical &&
					     c[j].typical <= 1.5 * c[i].typical;
				bool interleaved = !on_teeth && alike && m == 1 &&
						   fabs(pj - pi) <= MERGE_REL * pi &&
						   members_off(ev, n, j, c[i].t0 + pi / 2, pi, scratch) <= tol;
				if (!on_teeth && !interleaved)
					continue;
				relabel(ev, n, j, i);
				c[j].count = 0;
				if (interleaved)
					c[i].period = pi / 2;
				refit(ev, n, i, &c[i], scratch);
				merged = true;
			}
		}
	}
}

/* How far from a tooth an arrival may be to join by extension: as close as the members sit
 * (4 x jitter + 1 us), but at least 0.2 % of the period, because a fragment found in a quiet
 * stretch can have a smaller jitter than the same source shows under load. */
static double extend_tolerance(const struct comb *c)
{
	return fmin(fmax(4 * c->jitter + 1000, 0.002 * c->period), TOLERANCE * c->period);
}

/* A train whose arrivals spread over several duration octaves (e.g. bursts lengthened by other
 * load) can leave many of them outside its comb. Give every comb the unassigned arrivals that
 * sit as close to one of its teeth as its members do (extend_tolerance), over the whole run:
 * its least-squares period is precise enough to extrapolate (here ~0.01 ns error per period).
 * refit then keeps one arrival per tooth. */
static void extend_combs(struct ev *ev, size_t n, struct comb *c, int ncomb, double *scratch)
{
	for (int i = 0; i < ncomb; i++) {
		if (c[i].count < MIN_MEMBERS)
			continue;
		double tol = extend_tolerance(&c[i]);
		size_t added = 0;
		for (size_t k = 0; k < n; k++) {
			if (ev[k].comp < 0 && fabs(residual(ev[k].t, c[i].t0, c[i].period)) <= tol) {
				ev[k].comp = i;
				added++;
			}
		}
		if (added)
			refit(ev, n, i, &c[i], scratch);
	}
}

static int cmp_comb(const void *a, const void *b)
{
	const struct comb *x = a, *y = b;
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

void nt_quantiles_of(uint64_t *v, size_t n, struct nt_quantiles *out)
{
	memset(out, 0, sizeof *out);
	if (!v || n == 0)
		return;
	nt_sort_u64(v, n);
	size_t k = n < NT_SIG_QUANTILES ? n : NT_SIG_QUANTILES;
	out->n = k;
	for (size_t i = 0; i < k; i++)
		out->ns[i] = v[k == 1 ? 0 : (size_t)llround((double)i * (double)(n - 1) / (double)(k - 1))];
}

/* The simulator's inputs: each listed component's hit fraction and durations, and the detours
 * of no listed component (their durations, and gaps from one's end to the next one's start). */
static void model_inputs(const struct ev *ev, size_t n, const int *listed, uint64_t elapsed_ns,
			 struct nt_signature *out, uint64_t *v)
{
	for (size_t c = 0; c < out->nperiodic; c++) {
		struct nt_periodic *p = &out->periodic[c];
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			if (ev[i].comp >= 0 && listed[ev[i].comp] == (int)c) {
				v[m++] = (uint64_t)ev[i].dur;
				p->total_ns += (uint64_t)ev[i].dur;
				p->preempted_ns += ev[i].preempted ? (uint64_t)ev[i].dur : 0;
				add_softirqs(&ev[i], &p->softirq_ns, p->softirq_kind_ns);
			}
		}
		double teeth = (double)elapsed_ns * 1e-9 * p->freq_hz;
		p->hit_fraction = teeth >= 1 ? fmin(1.0, (double)p->count / teeth) : 1.0;
		nt_quantiles_of(v, m, &p->durations);
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].comp >= 0 && listed[ev[i].comp] >= 0)
			continue;
		v[m++] = (uint64_t)ev[i].dur;
		out->other_total_ns += (uint64_t)ev[i].dur;
		out->other_preempted_ns += ev[i].preempted ? (uint64_t)ev[i].dur : 0;
		add_softirqs(&ev[i], &out->other_softirq_ns, out->other_softirq_kind_ns);
	}
	out->other_count = m;
	nt_quantiles_of(v, m, &out->other_durations);
	m = 0;
	double end = -1;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].comp >= 0 && listed[ev[i].comp] >= 0)
			continue;
		if (end >= 0)
			v[m++] = ev[i].t > end ? (uint64_t)(ev[i].t - end) : 0;
		end = fmax(end, ev[i].t + ev[i].dur);
	}
	nt_quantiles_of(v, m, &out->other_gaps);
}

int nt_signature_analyze(const struct nt_detour *d, size_t n, uint64_t elapsed_ns,
			 struct nt_signature *out)
{
	if (!out || (!d && n > 0))
		return -EINVAL;
	memset(out, 0, sizeof *out);
	if (n == 0)
		return 0;

	int rc = -ENOMEM;
	struct ev *ev = malloc(n * sizeof *ev);
	struct ev **pool = malloc(n * sizeof *pool);
	double *scratch = malloc(n * GAP_REACH * sizeof *scratch);
	struct comb *comps = calloc(MAX_COMPONENTS, sizeof *comps);
	uint64_t *v = malloc(n * sizeof *v);
	int listed[MAX_COMPONENTS];
	if (!ev || !pool || !scratch || !comps || !v)
		goto out;
	for (size_t i = 0; i < n; i++) {
		bool preempted = (d[i].flags & NT_DETOUR_PREEMPTED) != 0;
		bool read = (d[i].flags & NT_DETOUR_SOFTIRQS_READ) != 0;
		ev[i] = (struct ev){ (double)d[i].start_ns, (double)d[i].duration_ns, i, -1, preempted,
				     read && !preempted ? d[i].flags >> NT_DETOUR_SOFTIRQ_SHIFT : 0 };
		out->softirqs_read += read;
	}
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
		refit(ev, n, i, &comps[i], scratch);
	merge_combs(ev, n, comps, ncomp, scratch);
	for (int pass = 0; pass < 2; pass++)
		extend_combs(ev, n, comps, ncomp, scratch);
	size_t periodic = 0;
	for (int i = 0; i < ncomp; i++) {
		periodic += comps[i].count;
		comps[i].id = i;
		listed[i] = -1;
	}
	qsort(comps, (size_t)ncomp, sizeof *comps, cmp_comb);
	for (int i = 0; i < ncomp && out->nperiodic < NT_SIG_MAX_PERIODIC; i++) {
		const struct comb *c = &comps[i];
		if (c->count == 0)
			continue;
		double phase = fmod(c->t0, c->period);
		listed[c->id] = (int)out->nperiodic;
		out->periodic[out->nperiodic++] = (struct nt_periodic){
			.freq_hz = 1e9 / c->period,
			.typical_ns = c->typical,
			.count = c->count,
			.jitter_ns = c->jitter,
			.phase_ns = phase < 0 ? phase + c->period : phase,
		};
	}
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
	model_inputs(ev, n, listed, elapsed_ns, out, v);
	rc = 0;
out:
	free(ev);
	free(pool);
	free(scratch);
	free(comps);
	free(v);
	return rc;
}

int nt_cpu_noise_analyze(struct nt_cpu_noise *c)
{
	if (!c)
		return -EINVAL;
	int rc = nt_detour_stats_compute(c->detours, c->ndetours, c->elapsed_ns, &c->stats);
	if (rc == 0)
		rc = nt_signature_analyze(c->detours, c->ndetours, c->elapsed_ns, &c->sig);
	return rc;
}
