/* The simulator's engine: LogGP messages and the collective algorithms, simulated round by
 * round over three flat per-rank arrays (no event queue, no per-message allocation). A round's
 * ranks depend only on times from before the round, so its rank ranges run on threads (the
 * shards), with the same answers whatever their number. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>
#include <noisetool/sim.h>

#include "errmsg.h"

struct run;

/* A loop body over items [lo, hi) of a round, and its arguments. */
typedef void (*range_fn)(struct run *r, const uint64_t *arg, uint64_t lo, uint64_t hi);

/* Threads that take the shards of a round: the caller takes the first, each worker one more. */
struct pool {
	pthread_t tid[NT_SIM_MAX_THREADS];
	struct pool_worker {
		struct pool *pl;
		unsigned k; /* its shard: 1.. (the caller takes 0) */
	} w[NT_SIM_MAX_THREADS];
	unsigned workers;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned long gen; /* bumped for every round handed out */
	unsigned pending;  /* workers still on the current round */
	bool quit;
	struct run *r; /* the current round: */
	range_fn fn;
	const uint64_t *arg;
	uint64_t count;
};

/* One simulated run. Per rank: t (when it is free next), aux (a send's end or a message's
 * arrival, per algorithm) and next_send (the earliest start of its next send: g). */
struct run {
	const struct nt_sim_noise *noise; /* NULL: noise-free */
	struct nt_sim_noise_state *state; /* per rank, for renewal noise; NULL: none */
	uint64_t P;
	uint64_t L_ns, o_ns, g_ns;
	double G_ns_per_byte;
	uint64_t *t_ns, *aux_ns, *next_send_ns;
	uint64_t events;
	struct pool *pool; /* NULL: every round on the calling thread */
	/* progress */
	nt_sim_progress_fn progress;
	void *progress_ctx;
	double done, total, base; /* rounds done and per run; base: fraction before this run */
};

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Rounds of fewer items than this run on the calling thread: a shard should be worth waking
 * a thread for (tens of microseconds of work at least). */
#define SHARD_MIN_ITEMS 16384

/* Items [lo, hi) of shard k of n. */
static void shard(uint64_t count, unsigned k, unsigned n, uint64_t *lo, uint64_t *hi)
{
	*lo = count / n * k + (k < count % n ? k : count % n);
	*hi = *lo + count / n + (k < count % n);
}

static void *worker(void *p)
{
	struct pool *pl = ((struct pool_worker *)p)->pl;
	unsigned k = ((struct pool_worker *)p)->k;
	unsigned long seen = 0;
	pthread_mutex_lock(&pl->mu);
	for (;;) {
		while (pl->gen == seen && !pl->quit)
			pthread_cond_wait(&pl->go, &pl->mu);
		if (pl->quit)
			break;
		seen = pl->gen;
		pthread_mutex_unlock(&pl->mu);
		uint64_t lo, hi;
		shard(pl->count, k, pl->workers + 1, &lo, &hi);
		pl->fn(pl->r, pl->arg, lo, hi);
		pthread_mutex_lock(&pl->mu);
		if (--pl->pending == 0)
			pthread_cond_signal(&pl->done);
	}
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

/* Threads for a run of P ranks: the number asked (0: the CPUs this process may run on), at most
 * NT_SIM_MAX_THREADS; NULL when one thread is all it gets (or threads cannot be made). */
static struct pool *pool_start(unsigned threads, uint64_t P)
{
	if (threads == 0) {
		cpu_set_t set;
		threads = sched_getaffinity(0, sizeof set, &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
	}
	if (threads > NT_SIM_MAX_THREADS)
		threads = NT_SIM_MAX_THREADS;
	if (threads < 2 || P < 2 * SHARD_MIN_ITEMS)
		return NULL;
	struct pool *pl = calloc(1, sizeof *pl);
	if (!pl)
		return NULL;
	pthread_mutex_init(&pl->mu, NULL);
	pthread_cond_init(&pl->go, NULL);
	pthread_cond_init(&pl->done, NULL);
	pthread_mutex_lock(&pl->mu); /* workers wait for a round once the pool is complete */
	for (unsigned i = 0; i + 1 < threads; i++) {
		pl->w[i] = (struct pool_worker){ pl, i + 1 };
		if (pthread_create(&pl->tid[i], NULL, worker, &pl->w[i]))
			break;
		pl->workers++;
	}
	pthread_mutex_unlock(&pl->mu);
	return pl;
}

static void pool_stop(struct pool *pl)
{
	if (!pl)
		return;
	pthread_mutex_lock(&pl->mu);
	pl->quit = true;
	pthread_cond_broadcast(&pl->go);
	pthread_mutex_unlock(&pl->mu);
	for (unsigned i = 0; i < pl->workers; i++)
		pthread_join(pl->tid[i], NULL);
	pthread_mutex_destroy(&pl->mu);
	pthread_cond_destroy(&pl->go);
	pthread_cond_destroy(&pl->done);
	free(pl);
}

/* fn over items [0, count) of one round, split in shards over the pool's threads; returns when
 * every shard is done. */
static void each(struct run *r, uint64_t count, range_fn fn, const uint64_t *arg)
{
	struct pool *pl = r->pool;
	if (!pl || pl->workers == 0 || count < SHARD_MIN_ITEMS) {
		fn(r, arg, 0, count);
		return;
	}
	pthread_mutex_lock(&pl->mu);
	pl->r = r;
	pl->fn = fn;
	pl->arg = arg;
	pl->count = count;
	pl->pending = pl->workers;
	pl->gen++;
	pthread_cond_broadcast(&pl->go);
	pthread_mutex_unlock(&pl->mu);
	uint64_t lo, hi;
	shard(count, 0, pl->workers + 1, &lo, &hi);
	fn(r, arg, lo, hi);
	pthread_mutex_lock(&pl->mu);
	while (pl->pending)
		pthread_cond_wait(&pl->done, &pl->mu);
	pthread_mutex_unlock(&pl->mu);
}

static inline uint64_t busy(const struct run *r, uint64_t rank, uint64_t t_ns, uint64_t w_ns)
{
	if (!r->noise)
		return t_ns + w_ns;
	return nt_sim_noise_advance_state(r->noise, r->state ? &r->state[rank] : NULL, rank, t_ns,
					  w_ns);
}

/* Wire time of a k-byte message: L + (k - 1) G. */
static uint64_t xfer_ns(const struct run *r, uint64_t bytes)
{
	return r->L_ns + (uint64_t)llround((double)(bytes ? bytes - 1 : 0) * r->G_ns_per_byte);
}

/* rank starts a send when it is free at t and g has passed since its last send start; the
 * send overhead o keeps it busy. Returns when the overhead ends. */
static inline uint64_t send_end(struct run *r, uint64_t rank, uint64_t t_ns)
{
	uint64_t s = max_u64(t_ns, r->next_send_ns[rank]);
	r->next_send_ns[rank] = s + r->g_ns;
	return busy(r, rank, s, r->o_ns);
}

/* rank, free at t, receives a message that arrives at arrival: o once both hold. */
static inline uint64_t recv_end(const struct run *r, uint64_t rank, uint64_t t_ns, uint64_t arrival_ns)
{
	return busy(r, rank, max_u64(t_ns, arrival_ns), r->o_ns);
}

static void round_done(struct run *r)
{
	r->done += 1;
	if (r->progress)
		r->progress(r->progress_ctx, r->base + 0.5 * r->done / r->total);
}

/* One round of a shift pattern: every rank sends `bytes` to (rank + d) mod P, then receives
 * from (rank - d) mod P (dissemination, Bruck, ring, pairwise exchange). */
static void shift_sends(struct run *r, const uint64_t *arg, uint64_t lo, uint64_t hi)
{
	uint64_t *t = r->t_ns, *se = r->aux_ns;
	for (uint64_t i = lo; i < hi; i++)
		se[i] = send_end(r, i, t[i]);
}

/* arg: d, the wire time */
static void shift_recvs(struct run *r, const uint64_t *arg, uint64_t lo, uint64_t hi)
{
	uint64_t P = r->P, d = arg[0], x = arg[1], *t = r->t_ns, *se = r->aux_ns;
	for (uint64_t i = lo; i < hi; i++) {
		uint64_t src = i >= d ? i - d : i + P - d;
		t[i] = recv_end(r, i, se[i], se[src] + x);
	}
}

static void shift_round(struct run *r, uint64_t d, uint64_t bytes)
{
	const uint64_t arg[2] = { d, xfer_ns(r, bytes) };
	each(r, r->P, shift_sends, NULL);
	each(r, r->P, shift_recvs, arg);
	r->events += 2 * r->P;
	round_done(r);
}

static void barrier_dissemination(struct run *r)
{
	for (uint64_t d = 1; d < r->P; d <<= 1)
		shift_round(r, d, 0);
}

/* MPICH's recursive doubling: with P = 2^k + rem, the first 2*rem ranks fold pairwise (the
 * even one sends to the odd one and sits out), 2^k ranks exchange in k rounds, then the odd
 * ones send the result back. */
/* Pairs [lo, hi) of the fold (arg[1] 0: even rank i sends to odd rank i + 1) or the unfold
 * (arg[1] 1: back). arg[0]: the wire time. */
static void rd_fold(struct run *r, const uint64_t *arg, uint64_t lo, uint64_t hi)
{
	uint64_t x = arg[0], *t = r->t_ns;
	for (uint64_t i = lo; i < hi; i++) {
		uint64_t from = 2 * i + arg[1], to = 2 * i + 1 - arg[1];
		t[from] = send_end(r, from, t[from]);
		t[to] = recv_end(r, to, t[to], t[from] + x);
	}
}

/* Pairs [lo, hi) of an exchange round: pair q is (nr, nr | mask), nr being q with a 0 bit put
 * in at mask. arg: mask, rem, the wire time. */
static void rd_exchange(struct run *r, const uint64_t *arg, uint64_t lo, uint64_t hi)
{
	uint64_t mask = arg[0], rem = arg[1], x = arg[2], *t = r->t_ns;
	for (uint64_t q = lo; q < hi; q++) {
		uint64_t nr = ((q & ~(mask - 1)) << 1) | (q & (mask - 1)), nb = nr | mask;
		uint64_t a = nr < rem ? 2 * nr + 1 : nr + rem;
		uint64_t b = nb < rem ? 2 * nb + 1 : nb + rem;
		uint64_t sa = send_end(r, a, t[a]), sb = send_end(r, b, t[b]);
		t[a] = recv_end(r, a, sa, sb + x);
		t[b] = recv_end(r, b, sb, sa + x);
	}
}

static void allreduce_recursive_doubling(struct run *r, uint64_t bytes)
{
	uint64_t P = r->P, pof2 = 1, x = xfer_ns(r, bytes);
	while (pof2 * 2 <= P)
		pof2 *= 2;
	uint64_t rem = P - pof2;
	each(r, rem, rd_fold, (const uint64_t[]){ x, 0 });
	r->events += 2 * rem;
	for (uint64_t mask = 1; mask < pof2; mask <<= 1) {
		each(r, pof2 / 2, rd_exchange, (const uint64_t[]){ mask, rem, x });
		r->events += 2 * pof2;
		round_done(r);
	}
	each(r, rem, rd_fold, (const uint64_t[]){ x, 1 });
	r->events += 2 * rem;
}

/* MPICH's binomial broadcast from rank 0: rank i receives from i - lowbit(i), then sends to
 * i + m for m = lowbit(i)/2 .. 1 (the root: from the largest power of two below P). Parents
 * have lower ranks, so one ascending sweep sees every arrival before its receive. */
static void bcast_binomial(struct run *r, uint64_t bytes)
{
	uint64_t P = r->P, x = xfer_ns(r, bytes), top = 1;
	uint64_t *t = r->t_ns, *arr = r->aux_ns;
	while (top < P)
		top <<= 1;
	for (uint64_t i = 0; i < P; i++) {
		uint64_t low = i ? i & -i : top;
		if (i)
			t[i] = recv_end(r, i, t[i], arr[i]);
		for (uint64_t m = low >> 1; m; m >>= 1) {
			if (i + m >= P)
				continue;
			t[i] = send_end(r, i, t[i]);
			arr[i + m] = t[i] + x;
		}
	}
	r->events += 2 * (P - 1);
	round_done(r);
}

/* MPICH's binomial reduce to rank 0: rank i receives from i + m for m = 1, 2, .. < lowbit(i)
 * in that order, then sends to i - lowbit(i). Children have higher ranks: one descending
 * sweep. aux holds each rank's message arrival at its parent. */
static void reduce_binomial(struct run *r, uint64_t bytes)
{
	uint64_t P = r->P, x = xfer_ns(r, bytes), top = 1;
	uint64_t *t = r->t_ns, *arr = r->aux_ns;
	while (top < P)
		top <<= 1;
	for (uint64_t i = P; i-- > 0;) {
		uint64_t low = i ? i & -i : top;
		for (uint64_t m = 1; m < low && i + m < P; m <<= 1)
			t[i] = recv_end(r, i, t[i], arr[i + m]);
		if (i) {
			t[i] = send_end(r, i, t[i]);
			arr[i] = t[i] + x;
		}
	}
	r->events += 2 * (P - 1);
	round_done(r);
}

/* Bruck allgather: round k sends min(2^k, P - 2^k) blocks to rank - 2^k. */
static void allgather_bruck(struct run *r, uint64_t bytes)
{
	for (uint64_t d = 1; d < r->P; d <<= 1) {
		uint64_t blocks = d < r->P - d ? d : r->P - d;
		shift_round(r, r->P - d, blocks * bytes);
	}
}

/* Bruck alltoall: round k sends the blocks whose index has bit k set to rank + 2^k. */
static void alltoall_bruck(struct run *r, uint64_t bytes)
{
	uint64_t P = r->P;
	for (uint64_t d = 1; d < P; d <<= 1) {
		uint64_t blocks = (P / (2 * d)) * d + (P % (2 * d) > d ? P % (2 * d) - d : 0);
		shift_round(r, d, blocks * bytes);
	}
}

/* Ring allgather (P - 1 rounds to rank + 1) or pairwise-exchange alltoall (round i: to
 * rank + i). */
static void ring(struct run *r, uint64_t bytes, bool alltoall)
{
	for (uint64_t i = 1; i < r->P; i++)
		shift_round(r, alltoall ? i : 1, bytes);
}

/* Rounds per iteration, for the progress fraction. */
static double rounds_per_iteration(enum nt_sim_collective c, enum nt_sim_algorithm a, uint64_t P)
{
	double lg = 0;
	for (uint64_t d = 1; d < P; d <<= 1)
		lg++;
	if (c == NT_SIM_BCAST || c == NT_SIM_REDUCE)
		return 1;
	if (a == NT_SIM_RING)
		return (double)(P - 1);
	if (c == NT_SIM_ALLREDUCE)
		return lg > 0 && (P & (P - 1)) ? lg - 1 : lg;
	return lg;
}

enum nt_sim_algorithm nt_sim_default_algorithm(enum nt_sim_collective c)
{
	switch (c) {
	case NT_SIM_BARRIER:
		return NT_SIM_DISSEMINATION;
	case NT_SIM_BCAST:
	case NT_SIM_REDUCE:
		return NT_SIM_BINOMIAL;
	case NT_SIM_ALLREDUCE:
		return NT_SIM_RECURSIVE_DOUBLING;
	case NT_SIM_ALLGATHER:
	case NT_SIM_ALLTOALL:
		return NT_SIM_BRUCK;
	}
	return NT_SIM_ALG_DEFAULT;
}

int nt_sim_check(const struct nt_sim_config *cfg, uint64_t ranks, char *err, size_t errsz)
{
	if (!cfg)
		return -EINVAL;
	enum nt_sim_collective c = cfg->collective;
	enum nt_sim_algorithm a = cfg->algorithm ? cfg->algorithm : nt_sim_default_algorithm(c);
	bool ok;
	switch (c) {
	case NT_SIM_BARRIER:
		ok = a == NT_SIM_DISSEMINATION;
		break;
	case NT_SIM_BCAST:
	case NT_SIM_REDUCE:
		ok = a == NT_SIM_BINOMIAL;
		break;
	case NT_SIM_ALLREDUCE:
		ok = a == NT_SIM_RECURSIVE_DOUBLING;
		break;
	case NT_SIM_ALLGATHER:
	case NT_SIM_ALLTOALL:
		ok = a == NT_SIM_RING || a == NT_SIM_BRUCK;
		break;
	default:
		return nt_err_invalid(err, errsz, "unknown collective");
	}
	if (!ok)
		return nt_err_invalid(err, errsz, "%s has no algorithm '%s' (it has: %s)",
				  nt_sim_collective_name(c), nt_sim_algorithm_name(a),
				  c == NT_SIM_BARRIER ? "dissemination"
				  : c == NT_SIM_BCAST || c == NT_SIM_REDUCE ? "binomial"
				  : c == NT_SIM_ALLREDUCE ? "recursive-doubling" : "ring, bruck");
	if (ranks < 1 || ranks > NT_SIM_MAX_RANKS)
		return nt_err_invalid(err, errsz, "%llu ranks: the simulator takes 1 to 2^30",
				  (unsigned long long)ranks);
	if (a == NT_SIM_RING && ranks > NT_SIM_RING_MAX_RANKS)
		return nt_err_invalid(err, errsz, "the ring algorithm sends O(P^2) messages: at most %u "
				  "ranks (use bruck)", NT_SIM_RING_MAX_RANKS);
	const struct nt_sim_loggp *p = &cfg->loggp;
	double v[4] = { p->L_ns, p->o_ns, p->g_ns, p->G_ns_per_byte };
	for (int i = 0; i < 4; i++)
		if (!(v[i] >= 0) || v[i] > 1e12)
			return nt_err_invalid(err, errsz, "LogGP parameters must be finite and >= 0");
	if (cfg->iterations < 1)
		return nt_err_invalid(err, errsz, "at least one iteration");
	return 0;
}

/* Every rank's compute of an iteration: arg[0] ns. */
static void compute(struct run *r, const uint64_t *arg, uint64_t lo, uint64_t hi)
{
	for (uint64_t i = lo; i < hi; i++)
		r->t_ns[i] = busy(r, i, r->t_ns[i], arg[0]);
}

/* One run: the bulk-synchronous loop, noise from r->noise. Returns the last rank's finish. */
static uint64_t simulate(struct run *r, const struct nt_sim_config *cfg, enum nt_sim_algorithm a)
{
	uint64_t P = r->P;
	memset(r->t_ns, 0, P * sizeof *r->t_ns);
	memset(r->aux_ns, 0, P * sizeof *r->aux_ns);
	memset(r->next_send_ns, 0, P * sizeof *r->next_send_ns);
	r->events = 0;
	r->done = 0;
	for (uint64_t it = 0; it < cfg->iterations; it++) {
		if (cfg->compute_ns) {
			each(r, P, compute, &cfg->compute_ns);
			r->events += P;
		}
		switch (cfg->collective) {
		case NT_SIM_BARRIER:
			barrier_dissemination(r);
			break;
		case NT_SIM_BCAST:
			bcast_binomial(r, cfg->bytes);
			break;
		case NT_SIM_REDUCE:
			reduce_binomial(r, cfg->bytes);
			break;
		case NT_SIM_ALLREDUCE:
			allreduce_recursive_doubling(r, cfg->bytes);
			break;
		case NT_SIM_ALLGATHER:
			if (a == NT_SIM_RING)
				ring(r, cfg->bytes, false);
			else
				allgather_bruck(r, cfg->bytes);
			break;
		case NT_SIM_ALLTOALL:
			if (a == NT_SIM_RING)
				ring(r, cfg->bytes, true);
			else
				alltoall_bruck(r, cfg->bytes);
			break;
		}
	}
	uint64_t end = 0;
	for (uint64_t i = 0; i < P; i++)
		end = max_u64(end, r->t_ns[i]);
	return end;
}

int nt_sim_run(const struct nt_sim_config *cfg, uint64_t ranks, struct nt_sim_result *out)
{
	if (!cfg || !out || nt_sim_check(cfg, ranks, NULL, 0) != 0)
		return -EINVAL;
	enum nt_sim_algorithm a = cfg->algorithm ? cfg->algorithm
						 : nt_sim_default_algorithm(cfg->collective);
	struct run r = {
		.P = ranks,
		.L_ns = (uint64_t)llround(cfg->loggp.L_ns),
		.o_ns = (uint64_t)llround(cfg->loggp.o_ns),
		.g_ns = (uint64_t)llround(cfg->loggp.g_ns),
		.G_ns_per_byte = cfg->loggp.G_ns_per_byte,
		.progress = cfg->progress,
		.progress_ctx = cfg->progress_ctx,
	};
	r.total = (double)cfg->iterations * fmax(1, rounds_per_iteration(cfg->collective, a, ranks));
	r.t_ns = malloc(ranks * sizeof *r.t_ns);
	r.aux_ns = malloc(ranks * sizeof *r.aux_ns);
	r.next_send_ns = malloc(ranks * sizeof *r.next_send_ns);
	if (cfg->noise && nt_sim_noise_stateful(cfg->noise))
		r.state = calloc(ranks, sizeof *r.state);
	if (!r.t_ns || !r.aux_ns || !r.next_send_ns ||
	    (cfg->noise && nt_sim_noise_stateful(cfg->noise) && !r.state)) {
		free(r.t_ns);
		free(r.aux_ns);
		free(r.next_send_ns);
		free(r.state);
		return -ENOMEM;
	}
	uint64_t t0 = nt_clock_monotonic_ns();
	*out = (struct nt_sim_result){ .ranks = ranks };
	r.pool = pool_start(cfg->threads, ranks);
	out->threads = r.pool ? r.pool->workers + 1 : 1;
	out->time_ns_noise_free = simulate(&r, cfg, a);
	uint64_t events = r.events;
	r.base = 0.5;
	if (cfg->noise) {
		r.noise = cfg->noise;
		out->time_ns_noisy = simulate(&r, cfg, a);
		events += r.events;
	} else {
		out->time_ns_noisy = out->time_ns_noise_free;
	}
	pool_stop(r.pool);
	uint64_t t1 = nt_clock_monotonic_ns();
	out->events = r.events;
	out->seconds = (double)(t1 - t0) * 1e-9;
	out->events_per_s = out->seconds > 0 ? (double)events / out->seconds : 0;
	out->magnification = out->time_ns_noise_free
				     ? (double)out->time_ns_noisy / (double)out->time_ns_noise_free
				     : 1.0;
	free(r.t_ns);
	free(r.aux_ns);
	free(r.next_send_ns);
	free(r.state);
	return 0;
}
