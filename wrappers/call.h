/* The per-call fast path shared by every generated wrapper: a reentry/enable check before the
 * real call, two counter reads around it, the book-keeping after it. */
#ifndef WRAPPERS_CALL_H
#define WRAPPERS_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/common.h>

#include <mpi.h>

#include "comms.h"
#include "mpiwait.h"
#include "nbreqs.h"
#include "recpolicy.h"
#include "sites.h"
#include "window.h"
#include NT_WRAPPER_IDS_FILE /* wrapper-ids-MPI.h, generated for this MPI (meson.build) */

#define NT_TLS __thread __attribute__((tls_model("initial-exec")))

/* The MPI entry points are the only exported symbols (with exports.map); everything else is
 * hidden, so calls inside the library are direct, not through the PLT. */
#define NT_MPI_API __attribute__((visibility("default")))

/* The communicator state a thread's cache holds when it holds none: its handle (0) is never a
 * communicator's, so every check fails on it. */
extern struct nt_comm nt_comm_none_;

struct nt_call {
	uint64_t t0_cyc, t1_cyc;
};

/* The thread's site cache: direct-mapped by (function, return address), so that a loop over
 * a few sites (a halo exchange's sends, receives and waits, a solver's collectives) skips the
 * table lookup on every call, not only when one site repeats. */
#define NT_SITE_CACHE_BITS 6
struct nt_site_slot {
	uintptr_t key; /* nt_call_site_key(fn, ret); 0: empty */
	struct nt_site *site;
};
/* The thread's communicator cache, direct-mapped by handle: a slot holds a communicator's
 * state, or nt_comm_none_ (never NULL). */
#define NT_COMM_CACHE_BITS 3

/* Per-thread state: the reentry guard, the caches, the phase and interval. */
struct nt_thread {
	int depth;                /* > 0 while inside a wrapper: MPI calling MPI passes through */
	unsigned comm_gen;        /* nt_comm_gen_ when the communicator cache was checked */
	uint64_t last_exit_cyc;   /* end of the previous MPI call: the phase starts here */
	/* The interval since the previous blocking collective instance returned: where it
	 * ended (0: none yet) and the time spent in other MPI calls since (point-to-point
	 * waits, where a rank absorbs most of another's lateness in halo exchanges). */
	uint64_t coll_exit_cyc, p2p_cyc;
	/* The recording policy's state for this thread: its grid of probe reads (read on
	 * every collective instance), what reads cost (only when one is done). */
	struct nt_rec_thread rec;
	struct nt_call slow; /* a fast-path call's counter reads, for its end out of line */
	struct nt_comm *comms[1u << NT_COMM_CACHE_BITS];
	struct nt_site_slot sites[1u << NT_SITE_CACHE_BITS];
};

/* A thread's initial state (thread-local storage: no constructor runs). */
#define NT_THREAD_INIT                                                                          \
	{ .comms = { &nt_comm_none_, &nt_comm_none_, &nt_comm_none_, &nt_comm_none_,         \
		     &nt_comm_none_, &nt_comm_none_, &nt_comm_none_, &nt_comm_none_ },        \
	  .rec = NT_REC_THREAD_NONE }

extern NT_TLS struct nt_thread nt_thread_;
extern int nt_active_; /* recording on: after init, not disabled, not paused (atomic) */

/* The fast path's gate (atomic): 0 when a call may take the fast path (nt_fast_begin): recording
 * on, the counter is the clock, no adaptive waits, no every-call extras, one thread calling MPI,
 * and (for wait and test calls) no nonblocking collective outstanding. One word, read by every
 * call; changed only when one of those changes (nt_gate_update, nt_gate_requests). */
#define NT_GATE_GENERIC 1u  /* one of the first five does not hold: the generic path */
#define NT_GATE_REQUESTS 2u /* nonblocking collectives outstanding: wait and test calls look */
extern unsigned nt_gate_;
/* Recompute NT_GATE_GENERIC from the runtime's state (after any of it changed). */
void nt_gate_update(void);

static inline bool nt_call_begin(struct nt_call *c)
{
	(void)c;
	if (!__atomic_load_n(&nt_active_, __ATOMIC_RELAXED) || nt_thread_.depth)
		return false;
	nt_thread_.depth = 1;
	return true;
}

/* The fast path of a call whose wrapper is simple (a blocking collective, a point-to-point
 * call, a wait or test call), taken when the gate is 0 for it (mask: the gate bits that
 * matter to it) and no wrapper is running on the thread: then the real call runs between two
 * raw counter reads and nt_fast_end keeps the books. Otherwise the generic path below. */
static inline __attribute__((always_inline)) bool nt_fast_begin(struct nt_thread *t, unsigned mask)
{
	if (NT_LIKELY(!((__atomic_load_n(&nt_gate_, __ATOMIC_RELAXED) & mask) |
			(unsigned)t->depth))) {
		t->depth = 1;
		return true;
	}
	return false;
}

/* The slow parts, out of line: a call site not in the thread's cache, the every-call stack
 * walk of the benchmark mode. */
struct nt_site *nt_call_site_miss(struct nt_thread *t, enum nt_fn fn, void *ret);
/* A call through a language binding: the site of the program's own call, found on the stack
 * (~0.1 us; only for such calls). */
struct nt_site *nt_call_binding_site(enum nt_fn fn, struct nt_site *binding_site);
void nt_call_slow_extras(void);
extern int nt_slow_extras_;
extern uint64_t nt_unknown_comm_records_; /* records not kept: their communicator has no id */
extern unsigned nt_comm_gen_; /* bumped when a communicator is freed (atomic) */

/* The site cache's key of (fn, ret): a return address is below 2^48. */
static inline __attribute__((always_inline)) uintptr_t nt_call_site_key(enum nt_fn fn, void *ret)
{
	return (uintptr_t)ret ^ ((uintptr_t)fn << 48);
}

static inline __attribute__((always_inline)) struct nt_site_slot *
nt_call_site_slot(struct nt_thread *t, uintptr_t key)
{
	return &t->sites[(key * 0x9e3779b97f4a7c15ull) >> (64 - NT_SITE_CACHE_BITS)];
}

/* The slot of comm in the thread's communicator cache. */
static inline __attribute__((always_inline)) struct nt_comm **
nt_call_comm_slot(struct nt_thread *t, MPI_Comm comm)
{
	return &t->comms[((uint64_t)(uintptr_t)comm * 0x9e3779b97f4a7c15ull) >>
			 (64 - NT_COMM_CACHE_BITS)];
}

/* comm's state when the thread's cache holds it and no communicator was freed since the
 * cache was checked (several threads: another one's free may move table entries), else NULL. */
static inline __attribute__((always_inline)) struct nt_comm *
nt_call_comm_cached(struct nt_thread *t, MPI_Comm comm)
{
	struct nt_comm *cs = *nt_call_comm_slot(t, comm);
	return cs->handle == comm && t->comm_gen == __atomic_load_n(&nt_comm_gen_, __ATOMIC_RELAXED)
		       ? cs
		       : NULL;
}
/* comm's state, looked up and cached (NULL: the table is full). */
struct nt_comm *nt_call_comm_miss(struct nt_thread *t, MPI_Comm comm);

/* comm's state: cached, else looked up (NULL: the table is full). */
static inline __attribute__((always_inline)) struct nt_comm *nt_call_comm(struct nt_thread *t,
									  MPI_Comm comm)
{
	struct nt_comm *cs = nt_call_comm_cached(t, comm);
	return NT_LIKELY(cs != NULL) ? cs : nt_call_comm_miss(t, comm);
}
/* The recording policy's slow path for instance in of site s, on the calling thread: what
 * nt_recpolicy_at_instance() decides, done -- the site's thresholds refreshed, the probe
 * window closed at the instance's exit, a record kept (comm_id, seq: the instance's name;
 * phase_cyc: the compute phase before it; p2p_cyc: the thread's other MPI time within its
 * interval, 0 when unknown). Only when nt_recpolicy_may_act(). */
void nt_call_record(struct nt_site *s, uint64_t comm_id, uint64_t seq,
		    const struct nt_rec_instance *in, uint64_t phase_cyc, uint64_t p2p_cyc);

/* Probe windows for the calling thread (the one that called MPI_Init) from now_cyc on, at
 * level (none at NT_PROBE_TIMING, or when the probe cannot open). */
void nt_call_windows_open(enum nt_probe_level level, uint64_t now_cyc);

/* A collective instance: its (communicator id, sequence number), and a record when it matters;
 * a nonblocking one is timed later, from its start to its completion. */
static inline __attribute__((always_inline)) void
nt_call_instance(struct nt_thread *t, struct nt_site *s, MPI_Comm comm, MPI_Request *nb_request,
		 const struct nt_call *c, uint64_t d, uint64_t phase, uint64_t bytes)
{
	struct nt_comm *cs = nt_call_comm(t, comm);
	uint64_t seq = cs ? nt_comms_next_seq(cs) : 0;
	uint64_t comm_id = cs ? cs->id : NT_COMM_ID_UNKNOWN;
	if (nb_request) {
		if (*nb_request != MPI_REQUEST_NULL)
			nt_nb_track(*nb_request, s, c->t0_cyc, comm_id, seq, phase, bytes);
		return;
	}
	nt_sites_add(s, d, bytes);
	/* The interval since the previous collective instance (the phase when there is none):
	 * a late rank's interval is long, and so are those of the ranks that waited for it in
	 * point-to-point calls, which a phase (since the last MPI call) misses. */
	uint64_t interval = t->coll_exit_cyc ? c->t0_cyc - t->coll_exit_cyc : phase;
	if (NT_UNLIKELY(nt_sites_threaded_))
		__atomic_fetch_add(&s->phase_cyc, interval, __ATOMIC_RELAXED);
	else
		s->phase_cyc += interval;
	/* The recording policy: almost always nothing to do (a probe read due, a record). */
	uint64_t calls = nt_sites_calls(s);
	if (NT_UNLIKELY(nt_recpolicy_may_act(&t->rec, &s->rec, calls, seq, d, interval, false))) {
		struct nt_rec_instance in = { .calls = calls, .seq = seq, .t0_cyc = c->t0_cyc,
					      .t1_cyc = c->t1_cyc, .span_cyc = interval,
					      .interval = t->coll_exit_cyc != 0 };
		nt_call_record(s, comm_id, seq, &in, phase, t->p2p_cyc);
	}
	t->coll_exit_cyc = c->t1_cyc;
	t->p2p_cyc = 0;
}

/* NOISETOOL_WAIT: whether the blocking call about to start at t0 runs as it is (always, unless
 * adaptive waits are on). */
static inline __attribute__((always_inline)) bool nt_call_blocking(uint64_t t0_cyc)
{
	return NT_LIKELY(!nt_wait_mode_) || nt_mpiwait_blocking(t0_cyc);
}

/* The same for a collective on comm: all members start it the same way, as voted on the tool's
 * twin of comm. The common case (free CPU, blocking agreed, no vote due on the cached
 * communicator) stays inline: out of line it cost ~4 % of an 8-byte allreduce. A vote is tool
 * work: *t0_cyc is read again after it, so that it stays outside the timed call. */
static inline __attribute__((always_inline)) bool nt_coll_blocking(MPI_Comm comm, uint64_t *t0_cyc)
{
	if (NT_LIKELY(!nt_wait_mode_))
		return true;
	struct nt_comm *cs = nt_call_comm_cached(&nt_thread_, comm);
	if (*t0_cyc < nt_wait_spin_until_cyc_ && cs && !cs->wait_nb && cs->seq < cs->vote_at_seq)
		return true;
	return nt_mpiwait_coll_blocking(comm, t0_cyc);
}

/* Book-keeping after the real call, which returned rc: the phase boundary and the call site's
 * aggregates (MPI time per rank is their sum, application time the rest of the wall time).
 * count elements of type are the call's bytes. A persistent collective's creation (p_request)
 * only registers it: its starts are the site's calls. A refused call (rc not MPI_SUCCESS) is
 * MPI time at its site and nothing more: no collective instance is numbered (the next one
 * matches what MPI matches it with), no request tracked or registered (*nb_request and
 * *p_request may hold anything). Clears the reentry guard. Inline: out of line it cost ~8 ns
 * per call here, most of the budget. */
static inline __attribute__((always_inline)) void
nt_call_end(const struct nt_call *c, enum nt_fn fn, void *ret, MPI_Comm comm,
	    MPI_Request *nb_request, MPI_Request *p_request, uint64_t count, MPI_Datatype type,
	    int rc)
{
	struct nt_thread *t = &nt_thread_;
	uint64_t d = c->t1_cyc - c->t0_cyc;
	uint64_t phase = c->t0_cyc - t->last_exit_cyc;
	t->last_exit_cyc = c->t1_cyc; /* the next phase starts here */
	uintptr_t key = nt_call_site_key(fn, ret);
	struct nt_site_slot *slot = nt_call_site_slot(t, key);
	struct nt_site *s = slot->site;
	if (NT_UNLIKELY(slot->key != key))
		s = nt_call_site_miss(t, fn, ret);
	if (NT_UNLIKELY(s != NULL && s->binding))
		s = nt_call_binding_site(fn, s);
	if (NT_LIKELY(s != NULL)) {
		/* MPI_COMM_NULL, NULL and MPI_DATATYPE_NULL are constants for every call that is
		 * not a collective instance, a persistent creation or a call with a buffer: the
		 * compiler drops these branches from their wrappers. */
		uint64_t bytes = nt_sites_bytes(s, count, type);
		if (p_request) {
			if (rc == MPI_SUCCESS && *p_request != MPI_REQUEST_NULL) {
				nt_call_comm_miss(t, comm); /* its communicator, known from here on */
				nt_persistent_add(*p_request, s, comm, bytes);
			}
		} else if (comm != MPI_COMM_NULL && rc == MPI_SUCCESS) {
			nt_call_instance(t, s, comm, nb_request, c, d, phase, bytes);
		} else {
			nt_sites_add(s, d, bytes);
			t->p2p_cyc += d;
		}
		if ((nb_request || p_request) && !s->nonblocking)
			__atomic_store_n(&s->nonblocking, 1, __ATOMIC_RELAXED);
	}
	if (NT_UNLIKELY(nt_slow_extras_)) /* the benchmark's stack walk, adaptive waits */
		nt_call_slow_extras();
	t->depth = 0;
}

/* The rest of a fast-path call, out of line, returning rc (the real call's): when the
 * thread's caches miss (the site looked up: the books kept as below, or by nt_call_end when
 * the site is a binding's, its datatype or communicator not cached), and when the recording
 * policy acts on a collective instance (seq: its number on cs; calls: the site's count with
 * it; phase: the compute phase before it). The call's counter reads wait in t->slow. Called
 * as the wrapper's last act (a jump, not a call), so that the fast path keeps nothing in
 * registers across them: it saves only what must outlive the real call. */
int nt_fast_end_slow(enum nt_fn fn, void *ret, MPI_Comm comm, uint64_t count, MPI_Datatype type,
		     int rc);
int nt_fast_end_record(struct nt_site *s, struct nt_comm *cs, uint64_t seq, uint64_t calls,
		       uint64_t phase, int rc);

/* The books of a fast-path call whose site s (and communicator state cs, for a collective)
 * the caches gave: what nt_call_end does for a blocking collective (collective) or a call that
 * is not one, with count elements of the site's cached datatype when typed; fold: the site's
 * previous duration is still pending (not folded by nt_fast_early). Single-threaded. Clears
 * the reentry guard; returns rc. */
static inline __attribute__((always_inline)) int
nt_fast_books(struct nt_thread *t, struct nt_site *s, struct nt_comm *cs, uint64_t t0,
	      uint64_t t1, bool collective, bool typed, uint64_t count, bool fold, int rc)
{
	uint64_t d = t1 - t0;
	uint64_t phase = t0 - t->last_exit_cyc;
	t->last_exit_cyc = t1;
	uint64_t prev = fold ? s->pending_cyc : NT_SITE_NONE;
	uint64_t calls = s->calls + 1;
	s->pending_cyc = d;
	s->calls = calls;
	s->total_cyc += d;
	if (typed)
		s->bytes += count * s->type_size;
	if (fold && NT_LIKELY(prev != NT_SITE_NONE))
		nt_sites_fold(s, prev);
	if (!collective) {
		t->p2p_cyc += d;
		t->depth = 0;
		return rc;
	}
	uint64_t seq = cs->seq++;
	uint64_t interval = t->coll_exit_cyc ? t0 - t->coll_exit_cyc : phase;
	s->phase_cyc += interval;
	if (NT_UNLIKELY(nt_recpolicy_may_act(&t->rec, &s->rec, calls, seq, d, interval, false))) {
		t->slow = (struct nt_call){ t0, t1 };
		return nt_fast_end_record(s, cs, seq, calls, phase, rc);
	}
	t->coll_exit_cyc = t1;
	t->p2p_cyc = 0;
	t->depth = 0;
	return rc;
}

/* The site of a fast-path call in the thread's caches, with its communicator's state (*csp)
 * for a collective, or NULL when a cache misses (then nt_fast_late goes the slow way). */
static inline __attribute__((always_inline)) struct nt_site *
nt_fast_site(struct nt_thread *t, bool collective, bool typed, enum nt_fn fn, void *ret,
	     MPI_Comm comm, MPI_Datatype type, struct nt_comm **csp)
{
	uintptr_t key = nt_call_site_key(fn, ret);
	struct nt_site_slot *slot = nt_call_site_slot(t, key);
	struct nt_site *s = slot->site;
	struct nt_comm *cs = collective ? *nt_call_comm_slot(t, comm) : NULL;
	*csp = cs;
	if (NT_UNLIKELY(slot->key != key || (typed && type != s->type) ||
			(collective && cs->handle != comm)))
		return NULL;
	return s;
}

/* Before the real call of a collective's fast path, and of a wait-only call's whose early
 * lookup missed (nt_fast_early): when the thread's cache does not hold the site of (fn, ret) --
 * a program going through more sites than the cache holds -- its cold lines are asked for, out
 * of line, and arrive while MPI works instead of after it (MPICH, 4,000 sites in random order: ~62-78 -> ~37 ns a call over no tool,
 * doc/bench-sites.md).
 * On a hit it is a compare of the slot that the books read after the call: 0.5 ns on one rank,
 * and no cost on two (doc/overhead.md). */
static inline __attribute__((always_inline)) void nt_fast_prefetch(struct nt_thread *t,
								    enum nt_fn fn, void *ret)
{
	uintptr_t key = nt_call_site_key(fn, ret);
	if (NT_UNLIKELY(nt_call_site_slot(t, key)->key != key))
		nt_sites_prefetch((unsigned)fn, (uintptr_t)ret);
}

/* The end of a fast-path call that read t0 and t1 around the real call, which returned rc, with
 * its site s from nt_fast_site (NULL: a cache missed; then the slow way, out of line, as for a
 * refused collective, which is no instance); fold: the site's previous duration is still
 * pending. */
static inline __attribute__((always_inline)) int
nt_fast_finish(struct nt_thread *t, struct nt_site *s, struct nt_comm *cs, uint64_t t0,
	       uint64_t t1, bool collective, bool typed, enum nt_fn fn, void *ret, MPI_Comm comm,
	       uint64_t count, MPI_Datatype type, bool fold, int rc)
{
	if (NT_UNLIKELY(!s || (collective && rc != MPI_SUCCESS))) {
		t->slow = (struct nt_call){ t0, t1 };
		return nt_fast_end_slow(fn, ret, collective ? comm : MPI_COMM_NULL, count,
					typed ? type : MPI_DATATYPE_NULL, rc);
	}
	return nt_fast_books(t, s, cs, t0, t1, collective, typed, count, fold, rc);
}

/* A fast-path call's end when nothing was done before the real call (a send: what follows
 * it is off the critical path, the reply being a round trip away): the call (nt_fast_begin)
 * read t0 and t1 around the real call, which returned rc; a blocking collective (collective, a
 * constant) on comm or a call that is not one (comm MPI_COMM_NULL), with count elements of
 * type when typed (a constant: whether the call has a buffer; a site's cached datatype is never
 * MPI_DATATYPE_NULL, so a call that passes it goes the slow way). Its books are kept here when
 * the thread's caches hold its site (never a language binding's: nt_call_site_miss), its
 * datatype's size and its communicator (by handle alone: one thread, and a vacated table
 * entry's handle is cleared); any miss goes the slow way, out of line. Returns rc. */
static inline __attribute__((always_inline)) int
nt_fast_end(struct nt_thread *t, uint64_t t0, uint64_t t1, bool collective, bool typed,
	    enum nt_fn fn, void *ret, MPI_Comm comm, uint64_t count, MPI_Datatype type, int rc)
{
	struct nt_comm *cs;
	struct nt_site *s = nt_fast_site(t, collective, typed, fn, ret, comm, type, &cs);
	return nt_fast_finish(t, s, cs, t0, t1, collective, typed, fn, ret, comm, count, type,
			      true, rc);
}

/* The same split in two for a call that only waits for others (a receive, a wait or test):
 * what does not depend on the call's own times -- finding the site, folding its previous
 * duration -- is done before the real call, while the rank would wait anyway, so that what
 * runs between the message's arrival and the application's next step is only the books of the
 * call's own times (nt_fast_late). NULL: a cache missed. */
static inline __attribute__((always_inline)) struct nt_site *
nt_fast_early(struct nt_thread *t, bool collective, bool typed, enum nt_fn fn, void *ret,
	      MPI_Comm comm, MPI_Datatype type, struct nt_comm **csp)
{
	struct nt_site *s = nt_fast_site(t, collective, typed, fn, ret, comm, type, csp);
	if (NT_LIKELY(s != NULL)) {
		uint64_t prev = s->pending_cyc;
		if (NT_LIKELY(prev != NT_SITE_NONE)) {
			nt_sites_fold(s, prev);
			s->pending_cyc = NT_SITE_NONE;
		}
	} else {
		nt_fast_prefetch(t, fn, ret); /* looked up after the call: fetched meanwhile */
	}
	return s;
}

static inline __attribute__((always_inline)) int
nt_fast_late(struct nt_thread *t, struct nt_site *s, struct nt_comm *cs, uint64_t t0,
	     uint64_t t1, bool collective, bool typed, enum nt_fn fn, void *ret, MPI_Comm comm,
	     uint64_t count, MPI_Datatype type, int rc)
{
	return nt_fast_finish(t, s, cs, t0, t1, collective, typed, fn, ret, comm, count, type,
			      false, rc);
}

#endif /* WRAPPERS_CALL_H */
