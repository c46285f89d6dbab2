/* The simulator's per-rank detour processes (periodic combs, Poisson rare detours, looped
 * traces) and advance(): when busy work started at t ends, given the detours. Nothing is stored
 * per rank: phases, offsets and Poisson draws come from splitmix64 of (seed, rank, source). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/sim.h>

/* Times past this are "never": advance() answers UINT64_MAX from there on, so that no sum of
 * a time below it and a source's lengths (periods up to 10^15 ns, windows and traces up to
 * 2^62 ns) wraps round to an earlier time. 2^62 ns is 146 years of simulated time. */
#define TIME_LIMIT_NS (1ull << 62)

#define RARE_KMAX 48 /* arrivals per Poisson window at most (lambda*W <= 8: P(more) < 1e-20) */

enum src_kind { SRC_COMB, SRC_RARE, SRC_TRACE };

struct comb {
	uint64_t period_ns, duration_ns, phase_ns;
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
	union {
		struct comb comb;
		struct rare rare;
		struct trace trace;
	} u;
};

struct model {
	struct source *src;
	size_t nsrc;
	double ratio;
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
	if (s->kind == SRC_RARE) {
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
	nm[n->nmodels] = (struct model){ 0 };
	int idx = (int)n->nmodels++;
	set_salts(n);
	return idx;
}

/* Append a source to a model whose noise ratio stays below 1. */
static int push_source(struct nt_sim_noise *n, int model, const struct source *s, double ratio)
{
	struct model *m = &n->models[model];
	if (!(ratio >= 0) || m->ratio + ratio >= 1 || m->nsrc >= NT_SIM_MAX_SOURCES)
		return -EINVAL;
	struct source *ns = realloc(m->src, (m->nsrc + 1) * sizeof *ns);
	if (!ns)
		return -ENOMEM;
	m->src = ns;
	ns[m->nsrc++] = *s;
	m->ratio += ratio;
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
	return n->sync ? s->u.comb.phase_ns : rank_key(n, s, rank) % s->u.comb.period_ns;
}

/* t + w, or UINT64_MAX when that passes TIME_LIMIT_NS. */
static uint64_t time_after(uint64_t t, uint64_t w)
{
	return t < TIME_LIMIT_NS && w < TIME_LIMIT_NS - t ? t + w : UINT64_MAX;
}

/* Closed form for a model that is one comb: skip whole periods at once. */
static uint64_t comb_advance(uint64_t P, uint64_t D, uint64_t phase, uint64_t t, uint64_t w)
{
	if (time_after(t, w) == UINT64_MAX)
		return UINT64_MAX;
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

static uint64_t source_key(const struct nt_sim_noise *n, const struct source *s, uint64_t rank)
{
	switch (s->kind) {
	case SRC_COMB:
		return comb_phase(n, s, rank);
	case SRC_TRACE:
		return n->sync ? 0 : rank_key(n, s, rank) % s->u.trace.loop_ns;
	case SRC_RARE:
		break;
	}
	return rank_key(n, s, rank);
}

static void source_probe(const struct source *s, uint64_t key, uint64_t t, uint64_t limit,
			 uint64_t *cover, uint64_t *next)
{
	switch (s->kind) {
	case SRC_COMB:
		comb_probe(&s->u.comb, key, t, cover, next);
		return;
	case SRC_RARE:
		rare_probe(&s->u.rare, key, t, limit, cover, next);
		return;
	case SRC_TRACE:
		trace_probe(&s->u.trace, key, t, cover, next);
		return;
	}
	*cover = t;
	*next = UINT64_MAX;
}

uint64_t nt_sim_noise_advance(const struct nt_sim_noise *n, uint64_t rank, uint64_t t_ns,
			      uint64_t work_ns)
{
	if (!n || n->nmodels == 0 || work_ns == 0)
		return time_after(t_ns, work_ns);
	const struct model *m = &n->models[n->nmodels == 1 ? 0 : rank % n->nmodels];
	if (m->nsrc == 0 || time_after(t_ns, work_ns) == UINT64_MAX)
		return time_after(t_ns, work_ns);
	if (m->nsrc == 1 && m->src[0].kind == SRC_COMB) {
		const struct source *s = &m->src[0];
		return comb_advance(s->u.comb.period_ns, s->u.comb.duration_ns,
				    comb_phase(n, s, rank), t_ns, work_ns);
	}
	uint64_t key[NT_SIM_MAX_SOURCES];
	for (size_t i = 0; i < m->nsrc; i++)
		key[i] = source_key(n, &m->src[i], rank);
	uint64_t t = t_ns, w = work_ns;
	for (;;) {
		uint64_t next = UINT64_MAX;
		bool moved = false;
		for (size_t i = 0; i < m->nsrc; i++) {
			uint64_t cover, s;
			source_probe(&m->src[i], key[i], t, t + w, &cover, &s);
			if (cover > t) {
				t = cover; /* past this detour; probe every source again */
				moved = true;
			} else if (s > t && s < next) {
				next = s;
			}
		}
		/* Noise that leaves almost no time for work (a trace of 99.9999 %) can push the
		 * end past any time there is. */
		if (time_after(t, w) == UINT64_MAX)
			return UINT64_MAX;
		if (moved)
			continue;
		if (next == UINT64_MAX || t + w <= next)
			return t + w;
		w -= next - t;
		t = next;
	}
}
