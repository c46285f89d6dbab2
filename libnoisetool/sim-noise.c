/* The simulator's per-rank detour processes (periodic combs, partly hit combs of drawn lengths,
 * Poisson rare detours, renewal processes, looped traces) and advance(): when busy work started
 * at t ends, given the detours. Nothing is stored per rank: phases, offsets and every draw come
 * from splitmix64 of (seed, rank, source). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/signature.h>
#include <noisetool/sim.h>

/* Times past this are "never": advance() answers UINT64_MAX from there on, so that no sum of
 * a time below it and a source's lengths (periods up to 10^15 ns, windows and traces up to
 * 2^62 ns) wraps round to an earlier time. 2^62 ns is 146 years of simulated time. */
#define TIME_LIMIT_NS (1ull << 62)

#define RARE_KMAX 48 /* arrivals per Poisson window at most (lambda*W <= 8: P(more) < 1e-20) */

enum src_kind { SRC_COMB, SRC_RARE, SRC_TRACE, SRC_SCOMB, SRC_RENEWAL };

struct comb {
	uint64_t period_ns, duration_ns, phase_ns;
};

/* An empirical distribution: quantiles at k / (n - 1), drawn by linear interpolation. Draws
 * come from tab, its inverse distribution function at DIST_CELLS + 1 points (times a scale). */
#define DIST_BITS 10 /* 8 KiB a table: the tables of a model stay in the L1 cache */
#define DIST_CELLS (1u << DIST_BITS)
#define DIST_DRAW_BITS (DIST_BITS + 16) /* random bits a draw takes */
struct dist {
	double q[NT_SIG_QUANTILES];
	unsigned n;
	double mean;   /* of the interpolated distribution */
	uint64_t *tab; /* NULL until dist_tabulate() */
};

/* A comb whose teeth are each hit with probability p, each hit drawing its own length. */
struct scomb {
	uint64_t period_ns, phase_ns;
	uint64_t hit_below; /* a tooth is hit when the low 32 bits of its draw are below this */
	unsigned back;      /* teeth looked back for a detour still running (longer than P) */
	uint64_t max_ns;    /* lengths are capped at back x P */
	struct dist len;
};

/* Alternating gaps and detours of empirical lengths: one sequence per rank, detour i drawn from
 * (key, i). A run walks it forward once with a per-rank cursor (struct nt_sim_noise_state), so
 * a probe costs O(1) amortized whatever the lengths' tail. */
struct renewal {
	struct dist len, gap; /* gap.n == 0: exponential gaps of mean gap_mean */
	double gap_mean, gap_scale;
};

struct rare {
	uint64_t window_ns;   /* arrivals are drawn per window of this length */
	uint64_t max_ns;      /* longest duration */
	uint64_t *durations_ns;
	size_t ndurations;
	unsigned kmax;
	double cdf[RARE_KMAX + 1]; /* P(arrivals in a window <= k) */
};

struct trace {
	uint64_t *start_ns, *end_ns; /* merged, sorted intervals in [0, loop_ns] */
	size_t n;
	uint64_t loop_ns;
	uint64_t bucket_ns;          /* the index: bucket b holds the first interval ending after */
	uint32_t *bucket;            /* b * bucket_ns, so that a lookup scans O(1) intervals */
	size_t nbuckets;
};

struct source {
	enum src_kind kind;
	uint64_t salt; /* mix of the seed and the source's place, set by nt_sim_noise_set_sync */
	uint64_t sync_a; /* synchronized: a comb's phase or a trace's offset on the common axis */
	union {
		struct comb comb;
		struct rare rare;
		struct trace trace;
		struct scomb scomb;
		struct renewal renewal;
	} u;
};

struct model {
	struct source *src;
	size_t nsrc;
	double ratio;    /* long-run share of time in detours (the union of the sources) */
	double measured; /* the signature's own total_ns / elapsed_ns, NAN when not known */
	uint64_t horizon_ns; /* how far a probe looks for the next detour start (4 x the shortest
			      * mean spacing of a source's detours): the reach of a rank's quiet */
	uint64_t origin_ns;  /* where its time axis starts on the common one (sync only) */
};

struct nt_sim_noise {
	struct model *models;
	size_t nmodels;
	bool sync;
	uint64_t seed;
};

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define GOLDEN 0x9e3779b97f4a7c15ull

/* The random key of (rank, source): one splitmix64 step from the source's salt. Synchronized
 * noise uses the same key for every rank. */
static inline uint64_t rank_key(const struct nt_sim_noise *n, const struct source *s, uint64_t rank)
{
	return mix64(s->salt + GOLDEN * (n->sync ? 0 : rank + 1));
}

static void set_salts(struct nt_sim_noise *n)
{
	for (size_t m = 0; m < n->nmodels; m++)
		for (size_t i = 0; i < n->models[m].nsrc; i++)
			n->models[m].src[i].salt = mix64(n->seed ^ mix64(((uint64_t)m << 20) + i + 1));
}

int nt_sim_noise_new(struct nt_sim_noise **out)
{
	if (!out)
		return -EINVAL;
	*out = calloc(1, sizeof **out);
	if (!*out)
		return -ENOMEM;
	(*out)->seed = 1;
	return 0;
}

static void free_source(struct source *s)
{
	if (s->kind == SRC_SCOMB) {
		free(s->u.scomb.len.tab);
	} else if (s->kind == SRC_RENEWAL) {
		free(s->u.renewal.len.tab);
		free(s->u.renewal.gap.tab);
	} else if (s->kind == SRC_RARE) {
		free(s->u.rare.durations_ns);
	} else if (s->kind == SRC_TRACE) {
		free(s->u.trace.start_ns);
		free(s->u.trace.end_ns);
		free(s->u.trace.bucket);
	}
}

void nt_sim_noise_free(struct nt_sim_noise *n)
{
	if (!n)
		return;
	for (size_t m = 0; m < n->nmodels; m++) {
		for (size_t i = 0; i < n->models[m].nsrc; i++)
			free_source(&n->models[m].src[i]);
		free(n->models[m].src);
	}
	free(n->models);
	free(n);
}

int nt_sim_noise_add_model(struct nt_sim_noise *n)
{
	if (!n || n->nmodels >= (1u << 20))
		return -EINVAL;
	struct model *nm = realloc(n->models, (n->nmodels + 1) * sizeof *nm);
	if (!nm)
		return -ENOMEM;
	n->models = nm;
	nm[n->nmodels] = (struct model){ .measured = NAN };
	int idx = (int)n->nmodels++;
	set_salts(n);
	return idx;
}

/* Mean time from one detour start of s to the next. */
static double source_spacing(const struct source *s)
{
	switch (s->kind) {
	case SRC_COMB:
		return (double)s->u.comb.period_ns;
	case SRC_SCOMB:
		return (double)s->u.scomb.period_ns * 0x1p32 / (double)s->u.scomb.hit_below;
	case SRC_RARE: {
		/* arrivals per window: the mean of the Poisson law tabulated in cdf */
		double mean = 0, prev = 0;
		for (unsigned k = 0; k <= s->u.rare.kmax; k++) {
			mean += k * (s->u.rare.cdf[k] - prev);
			prev = s->u.rare.cdf[k];
		}
		return mean > 0 ? (double)s->u.rare.window_ns / mean : 0x1p62;
	}
	case SRC_TRACE:
		return (double)s->u.trace.loop_ns / (double)s->u.trace.n;
	case SRC_RENEWAL: {
		const struct renewal *r = &s->u.renewal;
		return r->len.mean + (r->gap.n ? r->gap.mean : r->gap_mean) * r->gap_scale;
	}
	}
	return 0x1p62;
}

/* The sources' synchronized phases and offsets on the common axis, the model's origin_ns on. */
static void set_sync_keys(struct model *m)
{
	for (size_t i = 0; i < m->nsrc; i++) {
		struct source *s = &m->src[i];
		uint64_t o = m->origin_ns;
		if (s->kind == SRC_COMB)
			s->sync_a = (s->u.comb.phase_ns + o % s->u.comb.period_ns) % s->u.comb.period_ns;
		else if (s->kind == SRC_SCOMB)
			s->sync_a = (s->u.scomb.phase_ns + o % s->u.scomb.period_ns) %
				    s->u.scomb.period_ns;
		else if (s->kind == SRC_TRACE) /* common time t is local time t - o */
			s->sync_a = (s->u.trace.loop_ns - o % s->u.trace.loop_ns) % s->u.trace.loop_ns;
	}
}

static void set_horizon(struct model *m)
{
	double h = 0x1p62;
	for (size_t i = 0; i < m->nsrc; i++)
		h = fmin(h, 4 * source_spacing(&m->src[i]));
	m->horizon_ns = (uint64_t)fmin(fmax(h, 1), 0x1p62);
}

/* Append a source to a model. Sources overlap where they meet (the time is lost once), so the
 * model's share is their union, 1 - prod(1 - ratio) for independent sources: only a source
 * that alone leaves no time for work is refused. */
static int push_source(struct nt_sim_noise *n, int model, const struct source *s, double ratio)
{
	struct model *m = &n->models[model];
	if (!(ratio >= 0) || ratio >= 1 || m->nsrc >= NT_SIM_MAX_SOURCES)
		return -EINVAL;
	struct source *ns = realloc(m->src, (m->nsrc + 1) * sizeof *ns);
	if (!ns)
		return -ENOMEM;
	m->src = ns;
	ns[m->nsrc++] = *s;
	m->ratio = 1 - (1 - m->ratio) * (1 - ratio);
	set_horizon(m);
	set_sync_keys(m);
	set_salts(n);
	return 0;
}

static bool bad_model(const struct nt_sim_noise *n, int model)
{
	return !n || model < 0 || (size_t)model >= n->nmodels;
}

int nt_sim_noise_add_comb(struct nt_sim_noise *n, int model, double freq_hz, uint64_t duration_ns,
			  uint64_t phase_ns)
{
	if (bad_model(n, model) || !(freq_hz > 0) || !isfinite(freq_hz) || duration_ns == 0)
		return -EINVAL;
	double p = 1e9 / freq_hz;
	if (p > 1e15 || p < 2)
		return -EINVAL;
	uint64_t period = (uint64_t)llround(p);
	if (duration_ns >= period || phase_ns >= period)
		return -EINVAL;
	struct source s = { .kind = SRC_COMB,
			    .u.comb = { .period_ns = period, .duration_ns = duration_ns,
					.phase_ns = phase_ns } };
	return push_source(n, model, &s, (double)duration_ns / (double)period);
}

int nt_sim_noise_add_rare(struct nt_sim_noise *n, int model, double rate_hz,
			  const uint64_t *durations_ns, size_t count)
{
	if (bad_model(n, model) || !(rate_hz > 0) || !isfinite(rate_hz) || !durations_ns || !count)
		return -EINVAL;
	uint64_t max = 0;
	double sum = 0;
	for (size_t i = 0; i < count; i++) {
		if (durations_ns[i] == 0 || durations_ns[i] > 3600000000000ull)
			return -EINVAL;
		max = durations_ns[i] > max ? durations_ns[i] : max;
		sum += (double)durations_ns[i];
	}
	double mean_gap_ns = 1e9 / rate_hz;
	if (mean_gap_ns < 1 || !(mean_gap_ns <= 0x1p62)) /* a window must fit a uint64_t */
		return -EINVAL;
	/* Window: about two arrivals' mean gap apart, at least the longest detour (so a cover
	 * check looks at two windows) unless that would put more than 8 arrivals in a window. */
	double w = mean_gap_ns / 2;
	if (w < (double)max)
		w = fmin((double)max, 8 * mean_gap_ns);
	struct rare r = { .window_ns = (uint64_t)ceil(w), .max_ns = max, .ndurations = count };
	double lw = (double)r.window_ns / mean_gap_ns;
	double pk = exp(-lw), c = pk;
	unsigned k = 0;
	r.cdf[0] = c;
	while (k < RARE_KMAX && c < 1 - 1e-16) {
		k++;
		pk *= lw / k;
		c += pk;
		r.cdf[k] = c;
	}
	r.kmax = k;
	r.cdf[k] = 1.0;
	r.durations_ns = malloc(count * sizeof *r.durations_ns);
	if (!r.durations_ns)
		return -ENOMEM;
	memcpy(r.durations_ns, durations_ns, count * sizeof *r.durations_ns);
	struct source s = { .kind = SRC_RARE, .u.rare = r };
	int rc = push_source(n, model, &s, rate_hz * sum / (double)count * 1e-9);
	if (rc)
		free(r.durations_ns);
	return rc;
}

static int cmp_detour(const void *a, const void *b)
{
	const struct nt_detour *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

int nt_sim_noise_add_trace(struct nt_sim_noise *n, int model, const struct nt_detour *d,
			   size_t count)
{
	return nt_sim_noise_add_trace_loop(n, model, d, count, 0);
}

int nt_sim_noise_add_trace_loop(struct nt_sim_noise *n, int model, const struct nt_detour *d,
				size_t count, uint64_t loop_ns)
{
	if (bad_model(n, model) || !d || !count || count > UINT32_MAX - 1)
		return -EINVAL;
	struct nt_detour *sorted = malloc(count * sizeof *sorted);
	struct trace t = { 0 };
	t.start_ns = malloc(count * sizeof *t.start_ns);
	t.end_ns = malloc(count * sizeof *t.end_ns);
	int rc = -ENOMEM;
	if (!sorted || !t.start_ns || !t.end_ns)
		goto fail;
	memcpy(sorted, d, count * sizeof *sorted);
	qsort(sorted, count, sizeof *sorted, cmp_detour);
	uint64_t busy = 0;
	rc = -EINVAL;
	for (size_t i = 0; i < count; i++) /* a trace within the time there is */
		if (sorted[i].start_ns > TIME_LIMIT_NS || sorted[i].duration_ns > TIME_LIMIT_NS)
			goto fail;
	for (size_t i = 0; i < count; i++) {
		uint64_t s = sorted[i].start_ns, e = s + sorted[i].duration_ns;
		if (sorted[i].duration_ns == 0)
			continue;
		if (t.n && s <= t.end_ns[t.n - 1]) { /* overlaps or touches: merge */
			if (e > t.end_ns[t.n - 1])
				t.end_ns[t.n - 1] = e;
			continue;
		}
		t.start_ns[t.n] = s;
		t.end_ns[t.n] = e;
		t.n++;
	}
	rc = -EINVAL;
	if (t.n == 0)
		goto fail;
	for (size_t i = 0; i < t.n; i++)
		busy += t.end_ns[i] - t.start_ns[i];
	t.loop_ns = t.end_ns[t.n - 1];
	if (loop_ns > TIME_LIMIT_NS)
		goto fail;
	if (loop_ns > t.loop_ns) /* the run went on after its last detour */
		t.loop_ns = loop_ns;
	if (busy >= t.loop_ns)
		goto fail; /* no time left for work */
	t.nbuckets = t.n;
	t.bucket_ns = (t.loop_ns + t.nbuckets - 1) / t.nbuckets;
	t.bucket = malloc(t.nbuckets * sizeof *t.bucket);
	rc = -ENOMEM;
	if (!t.bucket)
		goto fail;
	size_t i = 0;
	for (size_t b = 0; b < t.nbuckets; b++) {
		while (i < t.n && t.end_ns[i] <= b * t.bucket_ns)
			i++;
		t.bucket[b] = (uint32_t)i;
	}
	free(sorted);
	struct source s = { .kind = SRC_TRACE, .u.trace = t };
	rc = push_source(n, model, &s, (double)busy / (double)t.loop_ns);
	if (rc == 0)
		return 0;
	sorted = NULL;
fail:
	free(sorted);
	free(t.start_ns);
	free(t.end_ns);
	free(t.bucket);
	return rc;
}

/* The distribution of q[0..n) (ascending), its lengths multiplied by scale. */
static int dist_make(struct dist *d, const uint64_t *q, size_t n, double scale)
{
	if (!q || n == 0 || n > NT_SIG_QUANTILES || !(scale > 0) || !isfinite(scale))
		return -EINVAL;
	memset(d, 0, sizeof *d);
	d->n = (unsigned)n;
	for (size_t i = 0; i < n; i++) {
		if (i && q[i] < q[i - 1])
			return -EINVAL;
		d->q[i] = (double)q[i] * scale;
	}
	if (n == 1) {
		d->mean = d->q[0];
		return 0;
	}
	double sum = 0;
	for (size_t i = 0; i + 1 < n; i++)
		sum += (d->q[i] + d->q[i + 1]) / 2;
	d->mean = sum / (double)(n - 1);
	return 0;
}

/* d's value at probability p in [0, 1]. */
static double dist_at(const struct dist *d, double p)
{
	if (d->n == 1)
		return d->q[0];
	double x = p * (d->n - 1);
	unsigned i = x >= d->n - 1 ? d->n - 2 : (unsigned)x;
	return d->q[i] + (x - i) * (d->q[i + 1] - d->q[i]);
}

/* Fill d's table with its values times scale, rounded to ns and at most TIME_LIMIT_NS. */
static int dist_tabulate(struct dist *d, double scale)
{
	if (!d->tab && !(d->tab = malloc((DIST_CELLS + 1) * sizeof *d->tab)))
		return -ENOMEM;
	for (unsigned i = 0; i <= DIST_CELLS; i++) {
		double v = dist_at(d, (double)i / DIST_CELLS) * scale + 0.5;
		d->tab[i] = v >= (double)TIME_LIMIT_NS ? TIME_LIMIT_NS : (uint64_t)v;
	}
	return 0;
}

/* One draw from d's table with DIST_DRAW_BITS random bits u: a cell, and a place in it. */
static inline uint64_t dist_draw(const struct dist *d, uint64_t u)
{
	uint64_t i = u >> 16, f = u & 0xffff, a = d->tab[i], b = d->tab[i + 1];
	return a + (uint64_t)(((unsigned __int128)(b - a) * f) >> 16);
}

/* Scale of quantiles q[0..n) whose interpolated mean becomes mean_ns (1 when mean_ns is 0). */
static double mean_scale(const uint64_t *q, size_t n, double mean_ns)
{
	struct dist d;
	if (!(mean_ns > 0) || dist_make(&d, q, n, 1) || !(d.mean > 0))
		return 1;
	return mean_ns / d.mean;
}

int nt_sim_noise_add_periodic(struct nt_sim_noise *n, int model, double freq_hz, uint64_t phase_ns,
			      double hit_fraction, const uint64_t *quantiles_ns, size_t nq,
			      double mean_ns)
{
	if (bad_model(n, model) || !(freq_hz > 0) || !isfinite(freq_hz) || !(hit_fraction > 0) ||
	    hit_fraction > 1 || !(mean_ns >= 0))
		return -EINVAL;
	double p = 1e9 / freq_hz;
	if (p > 1e15 || p < 2)
		return -EINVAL;
	struct scomb c = { .period_ns = (uint64_t)llround(p) };
	if (phase_ns >= c.period_ns)
		return -EINVAL;
	c.phase_ns = phase_ns;
	if (dist_make(&c.len, quantiles_ns, nq, mean_scale(quantiles_ns, nq, mean_ns)))
		return -EINVAL;
	double max = c.len.q[c.len.n - 1];
	if (!(c.len.q[0] >= 0) || !(max >= 1) || max > 3.6e12)
		return -EINVAL;
	c.back = (unsigned)fmin(ceil(max / (double)c.period_ns), 64);
	c.max_ns = (uint64_t)c.back * c.period_ns;
	c.hit_below = (uint64_t)llround(hit_fraction * 0x1p32);
	if (dist_tabulate(&c.len, 1))
		return -ENOMEM;
	struct source s = { .kind = SRC_SCOMB, .u.scomb = c };
	double ratio = fmin(hit_fraction * c.len.mean / (double)c.period_ns, 1);
	int rc = push_source(n, model, &s, ratio);
	if (rc)
		free(c.len.tab);
	return rc;
}

static inline uint64_t model_advance(const struct nt_sim_noise *n, const struct model *m,
				     struct nt_sim_noise_state *st, uint64_t rank, uint64_t t_ns,
				     uint64_t work_ns);

/* The model's share of time in detours, measured: work pushed through its noise on 32
 * unsynchronized ranks (the same draws every time, so that a search over a scale is smooth). */
static double model_measure(const struct nt_sim_noise *n, int model, double span_ns)
{
	struct nt_sim_noise tmp = *n;
	tmp.sync = false;
	const struct model *m = &n->models[model];
	double work = 0, took = 0;
	for (uint64_t r = 0; r < 32; r++) {
		uint64_t w = (uint64_t)fmax(span_ns / 32, 1);
		struct nt_sim_noise_state st = { 0 };
		uint64_t end = model_advance(&tmp, m, &st, r + 0x5eed, 0, w);
		if (end == UINT64_MAX)
			return 1;
		work += (double)w;
		took += (double)end;
	}
	return took > 0 ? 1 - work / took : 0;
}

/* The gaps of r times scale (the table holds them scaled). */
static void renewal_scale(struct renewal *r, double scale)
{
	r->gap_scale = scale;
	if (r->gap.n)
		dist_tabulate(&r->gap, scale); /* the table exists: no allocation */
}

int nt_sim_noise_add_renewal(struct nt_sim_noise *n, int model, const uint64_t *len_q_ns,
			     size_t nlen, double len_mean_ns, const uint64_t *gap_q_ns, size_t ngap,
			     double gap_mean_ns, double target_ratio)
{
	if (bad_model(n, model) || !(len_mean_ns >= 0) || !(gap_mean_ns >= 0) ||
	    !(target_ratio >= 0) || !(target_ratio < 1))
		return -EINVAL;
	struct renewal r = { .gap_scale = 1 };
	for (size_t i = 0; !bad_model(n, model) && i < n->models[model].nsrc; i++)
		if (n->models[model].src[i].kind == SRC_RENEWAL)
			return -EINVAL; /* one per model: a rank's cursor follows one sequence */
	if (dist_make(&r.len, len_q_ns, nlen, mean_scale(len_q_ns, nlen, len_mean_ns)))
		return -EINVAL;
	if (!(r.len.q[0] >= 0) || !(r.len.q[r.len.n - 1] >= 1) || r.len.q[r.len.n - 1] > 3.6e12)
		return -EINVAL;
	if (ngap) {
		if (dist_make(&r.gap, gap_q_ns, ngap, mean_scale(gap_q_ns, ngap, gap_mean_ns)))
			return -EINVAL;
	} else {
		r.gap_mean = gap_mean_ns;
	}
	double gmean = ngap ? r.gap.mean : r.gap_mean;
	if (!(gmean > 0) && !(target_ratio > 0))
		return -EINVAL; /* detours back to back, nothing to scale: no time for work */
	if (!(gmean > 0)) { /* every gap 0: the target makes them */
		r.gap = (struct dist){ .n = 0 };
		r.gap_mean = gmean = r.len.mean;
	}
	if (dist_tabulate(&r.len, 1) || (r.gap.n && dist_tabulate(&r.gap, 1))) {
		free(r.len.tab);
		free(r.gap.tab);
		return -ENOMEM;
	}
	struct source s = { .kind = SRC_RENEWAL, .u.renewal = r };
	double own = r.len.mean / (r.len.mean + gmean);
	int rc = push_source(n, model, &s, own >= 1 ? 0.999999 : own);
	if (rc) {
		free(r.len.tab);
		free(r.gap.tab);
	}
	if (rc || !(target_ratio > 0))
		return rc;
	/* Scale the gaps until the model's measured share is the target: the gaps were measured
	 * between this process's detours with the other sources' detours in them, and sources
	 * overlap in the model. The share falls as the gaps grow; about 200000 cycles a step. */
	struct model *m = &n->models[model];
	struct renewal *rr = &m->src[m->nsrc - 1].u.renewal;
	double lo = 0, hi = INFINITY, scale = 1, ratio = 0, best = 1, best_ratio = -1;
	double prev_scale = 1, prev_ratio = -1;
	for (int it = 0; it < 16; it++) {
		renewal_scale(rr, scale);
		set_horizon(m);
		double cycle = rr->len.mean + gmean * scale;
		ratio = model_measure(n, model, fmin(30000 * cycle, 1e14));
		if (fabs(ratio - target_ratio) < fabs(best_ratio - target_ratio)) {
			best = scale;
			best_ratio = ratio;
		}
		if (fabs(ratio - target_ratio) < 0.002)
			break;
		if (ratio > target_ratio)
			lo = scale;
		else
			hi = scale;
		/* odds of the renewal's share go as 1 / scale: step by that (the first time), then by
		 * the secant through the last two points, kept in the bracket */
		double want = target_ratio / (1 - target_ratio), got = ratio / fmax(1 - ratio, 1e-9);
		double next = scale * fmax(fmin(got / want, 16), 1.0 / 16);
		if (it > 0 && ratio != prev_ratio)
			next = scale + (target_ratio - ratio) * (scale - prev_scale) / (ratio - prev_ratio);
		prev_scale = scale;
		prev_ratio = ratio;
		if (!(next > lo && next < hi))
			next = isfinite(hi) ? (lo + hi) / 2 : scale * 16;
		if (next < 1e-6 || next > 1e9)
			break;
		scale = next;
	}
	renewal_scale(rr, best);
	set_horizon(m);
	ratio = best_ratio;
	m->ratio = ratio;
	return 0;
}

void nt_sim_noise_set_measured(struct nt_sim_noise *n, int model, double ratio)
{
	if (!bad_model(n, model))
		n->models[model].measured = ratio;
}

double nt_sim_noise_measured_ratio(const struct nt_sim_noise *n, int model)
{
	return bad_model(n, model) ? NAN : n->models[model].measured;
}

void nt_sim_noise_set_origin(struct nt_sim_noise *n, int model, uint64_t offset_ns)
{
	if (bad_model(n, model))
		return;
	n->models[model].origin_ns = offset_ns < TIME_LIMIT_NS ? offset_ns : 0;
	set_sync_keys(&n->models[model]);
}

void nt_sim_noise_set_sync(struct nt_sim_noise *n, bool sync, uint64_t seed)
{
	if (!n)
		return;
	n->sync = sync;
	n->seed = seed;
	set_salts(n);
}

size_t nt_sim_noise_models(const struct nt_sim_noise *n)
{
	return n ? n->nmodels : 0;
}

double nt_sim_noise_ratio(const struct nt_sim_noise *n, int model)
{
	return bad_model(n, model) ? 0 : n->models[model].ratio;
}

/* --- combs --- */

static inline uint64_t comb_phase(const struct nt_sim_noise *n, const struct source *s, uint64_t rank)
{
	return n->sync ? s->sync_a : rank_key(n, s, rank) % s->u.comb.period_ns;
}

/* t + w, or UINT64_MAX when that passes TIME_LIMIT_NS. */
static uint64_t time_after(uint64_t t, uint64_t w)
{
	return t < TIME_LIMIT_NS && w < TIME_LIMIT_NS - t ? t + w : UINT64_MAX;
}

/* Closed form for a model that is one comb: skip whole periods at once. */
static uint64_t comb_advance(const struct comb *c, uint64_t phase, uint64_t t, uint64_t w)
{
	if (time_after(t, w) == UINT64_MAX)
		return UINT64_MAX;
	uint64_t P = c->period_ns, D = c->duration_ns;
	uint64_t x = (t + P - phase) % P; /* position in the period, teeth at 0 */
	if (x < D) {
		t += D - x;
		x = D;
	}
	uint64_t gap = P - x;
	if (w <= gap)
		return t + w;
	w -= gap;
	t += gap + D;
	uint64_t G = P - D, k = (w - 1) / G, whole;
	if (__builtin_mul_overflow(k, P, &whole)) /* 2^64 ns of periods: never */
		return UINT64_MAX;
	return time_after(time_after(t, whole), w - k * G);
}

/* --- the generic union of sources. probe(): the end of a detour of this source that covers
 * t (t if none) and the next detour start after t (UINT64_MAX if none by limit). key: the
 * source's per-rank draw (a comb's phase, a trace's offset, the Poisson stream). --- */

static void comb_probe(const struct comb *c, uint64_t phase, uint64_t t, uint64_t *cover,
		       uint64_t *next)
{
	uint64_t x = (t + c->period_ns - phase) % c->period_ns;
	*cover = x < c->duration_ns ? t + c->duration_ns - x : t;
	*next = t - x + c->period_ns;
}

/* The arrivals of Poisson window j: count, start and duration of each. */
static unsigned rare_window(const struct rare *r, uint64_t key, uint64_t j, uint64_t *start,
			    uint64_t *dur)
{
	uint64_t h = mix64(key + GOLDEN * (j + 1));
	double u = (double)(h >> 11) * 0x1p-53;
	unsigned k = 0;
	while (k < r->kmax && u >= r->cdf[k])
		k++;
	for (unsigned i = 0; i < k; i++) {
		uint64_t hi = mix64(h + GOLDEN * (i + 1));
		start[i] = j * r->window_ns + hi % r->window_ns;
		dur[i] = r->durations_ns[(hi >> 40) % r->ndurations];
	}
	return k;
}

static void rare_probe(const struct rare *r, uint64_t key, uint64_t t, uint64_t limit,
		       uint64_t *cover, uint64_t *next)
{
	uint64_t st[RARE_KMAX], du[RARE_KMAX], end = t, best = UINT64_MAX;
	uint64_t j = (t > r->max_ns ? t - r->max_ns : 0) / r->window_ns, jt = t / r->window_ns;
	uint64_t jl = limit / r->window_ns;
	for (; j <= jt || (best == UINT64_MAX && j <= jl); j++) {
		unsigned k = rare_window(r, key, j, st, du);
		for (unsigned i = 0; i < k; i++) {
			if (st[i] <= t && st[i] + du[i] > end)
				end = st[i] + du[i];
			if (st[i] > t && st[i] < best)
				best = st[i];
		}
	}
	*cover = end;
	*next = best;
}

/* The first merged interval of the trace that ends after local time u. */
static size_t trace_find(const struct trace *tr, uint64_t u)
{
	size_t i = tr->bucket[u / tr->bucket_ns];
	while (i < tr->n && tr->end_ns[i] <= u)
		i++;
	return i;
}

static void trace_probe(const struct trace *tr, uint64_t off, uint64_t t, uint64_t *cover,
			uint64_t *next)
{
	uint64_t u = (t + off) % tr->loop_ns;
	size_t i = trace_find(tr, u);
	*cover = t;
	if (i < tr->n && tr->start_ns[i] <= u) {
		*cover = t - u + tr->end_ns[i];
		i++; /* inside: the next one */
	}
	*next = i < tr->n ? t - u + tr->start_ns[i] : t - u + tr->loop_ns + tr->start_ns[0];
}

/* Partly hit comb: tooth k (at phase + k P) is hit when its draw says so, for a drawn length. */
static inline bool scomb_tooth(const struct scomb *c, uint64_t key, uint64_t k, uint64_t *len)
{
	uint64_t h = mix64(key + GOLDEN * (k + 1));
	if ((uint32_t)h >= c->hit_below)
		return false;
	uint64_t x = dist_draw(&c->len, h >> (64 - DIST_DRAW_BITS));
	*len = x < 1 ? 1 : x > c->max_ns ? c->max_ns : x;
	return true;
}

static void scomb_probe(const struct scomb *c, uint64_t phase, uint64_t salt, uint64_t t,
			uint64_t limit, uint64_t *cover, uint64_t *next)
{
	uint64_t P = c->period_ns;
	/* tooth numbers count from the first tooth at or before 0 (phase - P) */
	uint64_t k = (t + P - phase) / P; /* tooth k sits at phase + (k - 1) P <= t */
	uint64_t end = t, len;
	for (uint64_t j = 0; j <= c->back && j < k; j++) {
		uint64_t kk = k - j, at = phase + (kk - 1) * P;
		if (at + c->max_ns > t && scomb_tooth(c, salt, kk, &len) && at + len > end)
			end = at + len;
		if (at + c->max_ns <= t)
			break;
	}
	*cover = end;
	*next = UINT64_MAX;
	for (uint64_t kk = k + 1;; kk++) {
		uint64_t at = phase + (kk - 1) * P;
		if (at > limit || at >= TIME_LIMIT_NS)
			break;
		if (scomb_tooth(c, salt, kk, &len)) {
			*next = at;
			break;
		}
	}
}

/* Detour i of a rank's sequence and the gap before it, both from h_i = mix64(key + (i + 1)
 * GOLDEN): the length from its top bits, the gap from bits 4 and up (32 bits: no overlap). */
static inline uint64_t renewal_len(const struct renewal *r, uint64_t h)
{
	uint64_t x = dist_draw(&r->len, h >> (64 - DIST_DRAW_BITS));
	return x < 1 ? 1 : x;
}

static inline uint64_t renewal_gap(const struct renewal *r, uint64_t h)
{
	if (r->gap.n)
		return dist_draw(&r->gap, (h >> 4) & ((1u << DIST_DRAW_BITS) - 1));
	double u = ((double)((h >> 4) & 0xfffffff) + 0.5) * 0x1p-28;
	return (uint64_t)(-log(u) * r->gap_mean * r->gap_scale + 0.5);
}

/* The cursor on detour 0: the run opens at a uniform point of the gap before it. */
static void renewal_start(const struct renewal *r, uint64_t key, struct nt_sim_noise_state *c)
{
	uint64_t h = mix64(key + GOLDEN);
	double u = (double)(mix64(key ^ GOLDEN) >> 11) * 0x1p-53;
	c->start = (uint64_t)(u * (double)renewal_gap(r, h) + 0.5);
	c->end = time_after(c->start, renewal_len(r, h));
	c->count = 1;
}

/* The cursor rests on the first detour that ends after the last time probed; a probe walks on
 * from there (a run's times for a rank never decrease). */
static void renewal_probe(const struct renewal *r, uint64_t key, struct nt_sim_noise_state *c,
			  uint64_t t, uint64_t *cover, uint64_t *next)
{
	if (c->count == 0)
		renewal_start(r, key, c);
	if (c->end <= t) { /* on to the first detour that ends after t, in registers */
		uint64_t count = c->count, start, end = c->end;
		do {
			uint64_t h = mix64(key + GOLDEN * ++count);
			start = time_after(end, renewal_gap(r, h));
			end = time_after(start, renewal_len(r, h));
		} while (end <= t);
		c->count = count;
		c->start = start;
		c->end = end;
	}
	*cover = c->start <= t ? c->end : t;
	*next = c->start > t ? c->start : UINT64_MAX;
}

/* A source's per-rank draws: a comb's phase, a trace's offset, the Poisson or renewal stream's
 * key; a partly hit comb's phase and the salt of its teeth. */
struct skey {
	uint64_t a, b;
};

static struct skey source_key(const struct nt_sim_noise *n, const struct source *s, uint64_t rank)
{
	uint64_t k = rank_key(n, s, rank);
	switch (s->kind) {
	case SRC_COMB:
		return (struct skey){ comb_phase(n, s, rank), 0 };
	case SRC_TRACE:
		return (struct skey){ n->sync ? s->sync_a : k % s->u.trace.loop_ns, 0 };
	case SRC_SCOMB:
		return (struct skey){ n->sync ? s->sync_a : k % s->u.scomb.period_ns,
				      mix64(k) };
	case SRC_RARE:
	case SRC_RENEWAL:
		break;
	}
	return (struct skey){ k, 0 };
}

static void source_probe(const struct source *s, const struct skey *key,
			 struct nt_sim_noise_state *st, uint64_t t, uint64_t limit, uint64_t *cover,
			 uint64_t *next)
{
	switch (s->kind) {
	case SRC_COMB:
		comb_probe(&s->u.comb, key->a, t, cover, next);
		return;
	case SRC_RARE:
		rare_probe(&s->u.rare, key->a, t, limit, cover, next);
		return;
	case SRC_TRACE:
		trace_probe(&s->u.trace, key->a, t, cover, next);
		return;
	case SRC_SCOMB:
		scomb_probe(&s->u.scomb, key->a, key->b, t, limit, cover, next);
		return;
	case SRC_RENEWAL:
		renewal_probe(&s->u.renewal, key->a, st, t, cover, next);
		return;
	}
	*cover = t;
	*next = UINT64_MAX;
}

bool nt_sim_noise_stateful(const struct nt_sim_noise *n)
{
	for (size_t m = 0; n && m < n->nmodels; m++)
		if (n->models[m].nsrc > 1 ||
		    (n->models[m].nsrc == 1 && n->models[m].src[0].kind != SRC_COMB))
			return true;
	return false;
}

uint64_t nt_sim_noise_advance_state(const struct nt_sim_noise *n, struct nt_sim_noise_state *st,
				    uint64_t rank, uint64_t t_ns, uint64_t work_ns)
{
	if (!n || n->nmodels == 0 || work_ns == 0)
		return time_after(t_ns, work_ns);
	return model_advance(n, &n->models[n->nmodels == 1 ? 0 : rank % n->nmodels], st, rank,
			     t_ns, work_ns);
}

uint64_t nt_sim_noise_advance(const struct nt_sim_noise *n, uint64_t rank, uint64_t t_ns,
			      uint64_t work_ns)
{
	return nt_sim_noise_advance_state(n, NULL, rank, t_ns, work_ns);
}

static uint64_t model_walk(const struct nt_sim_noise *n, const struct model *m,
			   struct nt_sim_noise_state *st, uint64_t rank, uint64_t t_ns,
			   uint64_t work_ns);

/* The fast ways first: no noise, one comb in closed form, time known to be free of detours. */
static inline uint64_t model_advance(const struct nt_sim_noise *n, const struct model *m,
				     struct nt_sim_noise_state *st, uint64_t rank, uint64_t t_ns,
				     uint64_t work_ns)
{
	if (m->nsrc == 0 || time_after(t_ns, work_ns) == UINT64_MAX)
		return time_after(t_ns, work_ns);
	if (m->nsrc == 1 && m->src[0].kind == SRC_COMB) {
		const struct source *s = &m->src[0];
		return comb_advance(&s->u.comb, comb_phase(n, s, rank), t_ns, work_ns);
	}
	if (st && t_ns + work_ns <= st->quiet) /* no detour until then: known from the last call */
		return t_ns + work_ns;
	struct nt_sim_noise_state none = { 0 };
	return model_walk(n, m, st ? st : &none, rank, t_ns, work_ns); /* none: from time 0 */
}

/* The union of the sources, walked detour by detour from t_ns. */
static uint64_t model_walk(const struct nt_sim_noise *n, const struct model *m,
			   struct nt_sim_noise_state *st, uint64_t rank, uint64_t t_ns,
			   uint64_t work_ns)
{
	/* Each source's answer at its last probe: the end of its detours started by then (cov;
	 * not above t: none covers) and a time before which none of its detours starts (nxt: the
	 * next start, the end of the cover, or the probe's limit). It holds until t reaches nxt,
	 * so only the sources whose nxt has come are probed again. */
	struct skey key[NT_SIM_MAX_SOURCES];
	uint64_t cov[NT_SIM_MAX_SOURCES], nxt[NT_SIM_MAX_SOURCES];
	for (size_t i = 0; i < m->nsrc; i++) {
		key[i] = source_key(n, &m->src[i], rank);
		nxt[i] = 0;
	}
	uint64_t t = t_ns, w = work_ns;
	for (;;) {
		uint64_t limit = time_after(t, w > m->horizon_ns ? w : m->horizon_ns);
		uint64_t end = t, next = UINT64_MAX;
		for (size_t i = 0; i < m->nsrc; i++) {
			if (nxt[i] <= t) {
				uint64_t s;
				source_probe(&m->src[i], &key[i], st, t, limit, &cov[i], &s);
				nxt[i] = cov[i] > t ? cov[i] : s < limit ? s : limit;
			}
			end = cov[i] > end ? cov[i] : end;
			next = nxt[i] < next ? nxt[i] : next;
		}
		if (end > t) { /* past the detours that cover t */
			t = end;
			/* Noise that leaves almost no time for work (a trace of 99.9999 %) can push
			 * the end past any time there is. */
			if (time_after(t, w) == UINT64_MAX)
				return UINT64_MAX;
			continue;
		}
		if (t + w <= next) {
			st->quiet = next; /* [t, next) is free of detours */
			return t + w;
		}
		w -= next - t;
		t = next;
	}
}
