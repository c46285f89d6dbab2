/* The per-call paths every generated wrapper inlines: the generic one (nt_call_begin, then
 * nt_call_end after the real call) and the fast one (nt_fast_*), which keeps the same books
 * with the thread's caches and leaves the rest to call.c. Both book an instance's interval
 * with one helper, nt_call_interval. */
#ifndef WRAPPERS_CALL_H
#define WRAPPERS_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/clock.h>
#include <noisetool/common.h>

#include <mpi.h>

#include "comms.h"
#include "mpiwait.h"
#include "nbreqs.h"
#include "records.h"
#include "recpolicy.h"
#include "sites.h"
#include "thread.h"
#include NT_WRAPPER_IDS_FILE /* wrapper-ids-MPI.h, generated for this MPI (meson.build) */

struct nt_call {
	uint64_t t0_cyc, t1_cyc;
};

/* The generic path's entry: false when the call goes straight through (recording off, or MPI
 * calling MPI on this thread); else the reentry guard is set until nt_call_end. */
static inline bool nt_call_begin(struct nt_call *c)
{
	(void)c;
	if (!__atomic_load_n(&nt_active_, __ATOMIC_RELAXED) || nt_thread_.depth)
		return false;
	nt_thread_.depth = 1;
	return true;
}

/* The slow parts, out of line (call.c): a call site not in the thread's cache, a call through
 * a language binding (the site of the program's own call, found on the stack: ~0.1 us, only for
 * such calls), the every-call extras (the benchmark's stack walk, adaptive waits) of a call at
 * site s (NULL: none) after phase cycles of the program's own time, a poll (polled) or not: the
 * time a wait between polls takes is the poll's, at s and in the thread's interval. */
struct nt_site *nt_call_site_miss(struct nt_thread *t, unsigned fn, void *ret);
struct nt_site *nt_call_binding_site(unsigned fn, struct nt_site *binding_site);
void nt_call_slow_extras(struct nt_thread *t, struct nt_site *s, bool polled, uint64_t phase);
extern int nt_slow_extras_; /* what every call does besides its books (NT_EXTRA_*) */
#define NT_EXTRA_WAIT 1u    /* adaptive waits learn from each call (mpiwait.h) */
#define NT_EXTRA_WALK 2u    /* the benchmark's stack walk on every call (NOISETOOL_CALLSITE) */

/* Sampled test calls (NOISETOOL_POLL_SAMPLE=N, default 64: env.h): on the fast path one test call in
 * N at a site is timed, the untimed ones between are counted and given the last timed one's
 * duration (nt_fast_untimed). The gaps between timed calls are random, uniform in 0 .. 2N - 2
 * (nt_poll_span_ = 2N - 1; 1: every call timed), so that a loop's own period cannot choose
 * which calls are timed. */
extern NT_HIDDEN uint32_t nt_poll_span_;

/* The interval of a blocking collective instance of site s (its call counted), numbered seq on
 * its communicator, that spent d cycles in the call: interval, the time since the thread's
 * previous blocking collective instance returned (the compute phase before it when there is
 * none), joins the site's sum. Returns whether the recording policy has something to do (almost
 * never: a record, a probe read): then nt_call_interval_record, before nt_call_interval_done
 * starts the thread's next interval. The generic and the fast path both book an instance with
 * these, so that they keep the same books. */
static inline __attribute__((always_inline)) bool
nt_call_interval(struct nt_thread *t, struct nt_site *s, uint64_t seq, uint64_t d,
		 uint64_t interval, bool threaded)
{
	if (NT_UNLIKELY(threaded))
		__atomic_fetch_add(&s->phase_cyc, interval, __ATOMIC_RELAXED);
	else
		s->phase_cyc += interval;
	return nt_recpolicy_may_act(&t->rec, &s->rec, nt_sites_calls(s), seq, d, interval, false,
				    threaded);
}

/* The interval before a blocking collective instance that starts at t0 after a compute phase of
 * phase cycles: since the thread's previous one returned, else the phase. A late rank's interval
 * is long, and so are those of the ranks that waited for it in point-to-point calls, which a
 * phase (since the last MPI call) misses. */
static inline __attribute__((always_inline)) uint64_t
nt_call_interval_of(const struct nt_thread *t, uint64_t t0, uint64_t phase)
{
	return t->coll_exit_cyc ? t0 - t->coll_exit_cyc : phase;
}

/* What the recording policy decides for that instance (of comm_id; from t0 to t1, after a
 * compute phase of phase cycles), done: a probe read, a record (nt_records_instance). Out of
 * line (call.c). */
void nt_call_interval_record(struct nt_thread *t, struct nt_site *s, uint64_t comm_id,
			     uint64_t seq, uint64_t t0, uint64_t t1, uint64_t phase);

/* The thread's next interval starts at t1, the exit of a blocking collective instance. */
static inline __attribute__((always_inline)) void nt_call_interval_done(struct nt_thread *t,
									 uint64_t t1)
{
	t->coll_exit_cyc = t1;
	t->p2p_cyc = 0;
}

/* A collective instance: its (communicator id, sequence number), and a record when it matters;
 * a nonblocking one is timed later, from its start to its completion. */
static inline __attribute__((always_inline)) void
nt_call_instance(struct nt_thread *t, struct nt_site *s, MPI_Comm comm, MPI_Request *nb_request,
		 const struct nt_call *c, uint64_t d, uint64_t phase, uint64_t bytes)
{
	struct nt_comm *cs = nt_thread_comm(t, comm);
	if (cs && !nb_request && !nt_comms_threaded_)
		s->comm = cs; /* for the fast path's next call at s */
	uint64_t seq = cs ? nt_comms_next_seq(cs) : 0;
	uint64_t comm_id = cs ? cs->id : NT_COMM_ID_UNKNOWN;
	if (nb_request) {
		if (*nb_request != MPI_REQUEST_NULL)
			nt_nb_track(*nb_request, s, c->t0_cyc, comm_id, seq, phase, bytes);
		return;
	}
	nt_sites_add(s, d, bytes);
	if (NT_UNLIKELY(nt_call_interval(t, s, seq, d, nt_call_interval_of(t, c->t0_cyc, phase),
					 nt_sites_threaded_)))
		nt_call_interval_record(t, s, comm_id, seq, c->t0_cyc, c->t1_cyc, phase);
	nt_call_interval_done(t, c->t1_cyc);
}

/* NOISETOOL_WAIT: whether the blocking call about to start at t0 runs as it is (always, unless
 * adaptive waits are on). */
static inline __attribute__((always_inline)) bool nt_call_blocking(uint64_t t0_cyc)
{
	return NT_LIKELY(!nt_wait_mode_) || nt_mpiwait_blocking(t0_cyc);
}

/* The same for a collective on comm: all members start it the same way, as they voted on the
 * tool's own communicator (votes.h). The common case (free CPU, blocking agreed, no vote due on
 * the cached communicator) stays inline: out of line it cost ~4 % of an 8-byte allreduce. A
 * vote is tool work: *t0_cyc is read again after it, so that it stays outside the timed call. */
static inline __attribute__((always_inline)) bool nt_coll_blocking(MPI_Comm comm, uint64_t *t0_cyc)
{
	if (NT_LIKELY(!nt_wait_mode_))
		return true;
	struct nt_comm *cs = nt_thread_comm_cached(&nt_thread_, comm);
	if (*t0_cyc < nt_wait_spin_until_cyc_ && cs && !cs->wait_nb && cs->seq < cs->vote_at_seq)
		return true;
	return nt_mpiwait_coll_blocking(comm, t0_cyc);
}

/* The end of a call while recording is paused (MPI_Pcontrol(0)), out of line: what keeps the
 * collective path the same on every member -- a collective instance numbered, a persistent
 * collective registered -- and the thread's phase, but no aggregate, record or timed request.
 * Clears the reentry guard. */
void nt_call_paused_end(const struct nt_call *c, unsigned fn, void *ret, MPI_Comm comm,
			const MPI_Request *nb_request, const MPI_Request *p_request, uint64_t count,
			MPI_Datatype type, int rc);

/* Book-keeping after the real call, which returned rc: the phase boundary and the call site's
 * aggregates (MPI time per rank is their sum, application time the rest of the wall time).
 * count elements of type are the call's bytes. A persistent collective's creation (p_request)
 * only registers it: its starts are the site's calls. A refused call (rc not MPI_SUCCESS) is
 * MPI time at its site and nothing more: no bytes (its count may be anything), no collective
 * instance is numbered (the next one
 * matches what MPI matches it with), no request tracked or registered (*nb_request and
 * *p_request may hold anything). A test call that found nothing (polled) is a poll at its site
 * (nt_sites_add_poll). Clears the reentry guard. Inline: out of line it cost ~8 ns per call
 * here, most of the budget. */
static inline __attribute__((always_inline)) void
nt_call_end(const struct nt_call *c, unsigned fn, void *ret, MPI_Comm comm,
	    MPI_Request *nb_request, MPI_Request *p_request, uint64_t count, MPI_Datatype type,
	    int rc, bool polled)
{
	if (NT_UNLIKELY(__atomic_load_n(&nt_paused_, __ATOMIC_RELAXED))) {
		nt_call_paused_end(c, fn, ret, comm, nb_request, p_request, count, type, rc);
		return;
	}
	struct nt_thread *t = &nt_thread_;
	uint64_t d = c->t1_cyc - c->t0_cyc;
	uint64_t phase = c->t0_cyc - t->last_exit_cyc;
	t->last_exit_cyc = c->t1_cyc; /* the next phase starts here */
	unsigned i = nt_thread_site_index(ret);
	struct nt_site *s = t->sites[i];
	if (NT_UNLIKELY(t->site_keys[i] != (uintptr_t)ret || s->fn != fn))
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
				nt_thread_comm_miss(t, comm); /* its communicator, known from here on */
				nt_persistent_add(*p_request, s, comm, bytes);
			}
		} else if (comm != MPI_COMM_NULL && rc == MPI_SUCCESS) {
			nt_call_instance(t, s, comm, nb_request, c, d, phase, bytes);
		} else if (polled) {
			nt_sites_add_polled(s, d);
			t->p2p_cyc += d;
		} else {
			nt_sites_add(s, d, rc == MPI_SUCCESS ? bytes : 0);
			t->p2p_cyc += d;
		}
		if ((nb_request || p_request) && !s->nonblocking)
			__atomic_store_n(&s->nonblocking, 1, __ATOMIC_RELAXED);
	}
	if (NT_UNLIKELY(nt_slow_extras_)) /* the benchmark's stack walk, adaptive waits */
		nt_call_slow_extras(t, s, polled, phase);
	t->depth = 0;
}

/* The fast path, for a call whose wrapper is simple (a blocking collective, a point-to-point
 * call, a wait or test call), when the gate is 0 for it (waits: a wait or test call, which
 * also looks at outstanding requests), no wrapper is running on the thread (nt_fast_open) and the thread's caches hold what its
 * books need (nt_fast_find): its site, its communicator's state (a collective) and its
 * datatype's size (a call with a buffer). Then the call's bytes join the site, the real call
 * runs between two raw counter reads, and its books are kept (nt_fast_coll_end,
 * nt_fast_p2p_end), with what must outlive the real call held to the site, the communicator's
 * state and the first read. Anything else takes the generic path, which fills the caches; a
 * refused collective and the recording policy's rare acts go out of line (call.c). One thread
 * only (the gate). Its cost is counted in instructions (tests/mpi/test-insn.sh). */
static inline __attribute__((always_inline)) bool nt_fast_open(const struct nt_thread *t,
								bool waits)
{
	unsigned gate = waits ? __atomic_load_n(&nt_gate_.g.both, __ATOMIC_RELAXED)
			      : __atomic_load_n(&nt_gate_.g.b.generic, __ATOMIC_RELAXED);
	return NT_LIKELY(!(gate | (unsigned)t->depth));
}

/* The first counter read of a fast-path call, its entry. A collective's books, and a test
 * call's (polls; poll_at: its flag or count), need more registers after the real call than a
 * point-to-point call's: what they need from before it waits in the thread's state (a store,
 * and a load folded into its use), which saves pushes and pops (collective and polls are
 * constants). A test call's site waits in the thread's memo (nt_fast_find). */
static inline __attribute__((always_inline)) uint64_t
nt_fast_entry(struct nt_thread *t, bool collective, bool polls, const int *poll_at)
{
	uint64_t t0 = nt_clock_raw_cyc();
	if (collective || polls)
		t->t0_cyc = t0;
	if (polls)
		t->poll_at = poll_at;
	return t0;
}

/* The site of a fast-path call of (fn, ret) in the thread's memo (fast: fn's place there) or its
 * cache (then the memo's from here on: a test call's books find it there after the call), with, for a collective, the state of its communicator in the site's one-entry cache
 * (s->comm, where its books find it again), and for a call with a buffer (typed) its datatype's
 * size in the site's: then the call's bytes join the site, and its count waits in the thread's
 * state, where the end of a refused call finds it to take them back (nt_fast_refused_end).
 * NULL when a cache misses. A test call's site keeps its own sampling as the memo moves
 * (nt_fast_untimed). collective and typed are constants. A collective's site is in the thread's caches only once
 * the thread has an interval (nt_call_site_miss), so the books need not look whether a
 * blocking collective instance returned before. */
static inline __attribute__((always_inline)) struct nt_site *
nt_fast_find(struct nt_thread *t, unsigned fast, bool collective, bool typed, unsigned fn,
	     void *ret, MPI_Comm comm, uint64_t count, MPI_Datatype type)
{
	struct nt_site *s;
	if (NT_LIKELY(t->memo[fast].ret == (uintptr_t)ret)) {
		s = t->memo[fast].site;
		if (s == NULL) /* never: the memo holds a site with its return address */
			__builtin_unreachable();
	} else {
		unsigned i = nt_thread_site_index(ret);
		s = t->sites[i];
		if (NT_UNLIKELY(t->site_keys[i] != (uintptr_t)ret || s->fn != fn))
			return NULL;
		t->memo[fast].ret = (uintptr_t)ret; /* the memo keeps each function's last site */
		t->memo[fast].site = s;
	}
	if (NT_UNLIKELY(typed && type != s->type))
		return NULL;
	if (NT_UNLIKELY(collective && s->comm->handle != comm))
		return NULL;
	if (typed) {
		t->count = (int64_t)count;
		s->bytes += count * s->type_size;
	}
	return s;
}

/* The rare ends of a fast-path call, out of line (call.c), each returning rc: a refused call
 * with a buffer (typed) or a refused collective (MPI time at its site and in the thread's
 * interval, no bytes: those added before the call are taken back, no instance), and a
 * collective instance at which the recording policy acts (seq: its number on cs). They clear the reentry guard, and are the wrapper's
 * last act (a jump, not a call), so that the fast path keeps nothing in registers across
 * them. */
int nt_fast_refused_end(struct nt_site *s, bool typed, uint64_t t0, uint64_t t1, int rc);
int nt_fast_record_end(struct nt_site *s, struct nt_comm *cs, uint64_t seq, uint64_t t0,
		       uint64_t t1, int rc);

/* The books of a blocking collective that took the fast path, as nt_call_end keeps them: the
 * call's time at its site, the instance numbered, its interval (nt_call_interval). Its entry
 * and its communicator's state are read again from where they waited (nt_fast_entry,
 * nt_fast_find). */
static inline __attribute__((always_inline)) int
nt_fast_coll_end(struct nt_thread *t, struct nt_site *s, bool typed, uint64_t t1, int rc)
{
	uint64_t t0 = t->t0_cyc;
	struct nt_comm *cs = s->comm;
	if (NT_UNLIKELY(rc != MPI_SUCCESS))
		return nt_fast_refused_end(s, typed, t0, t1, rc);
	uint64_t d = t1 - t0;
	nt_sites_add_one(s, d);
	uint64_t seq = cs->seq++;
	if (NT_UNLIKELY(nt_call_interval(t, s, seq, d, t0 - t->coll_exit_cyc, false)))
		return nt_fast_record_end(s, cs, seq, t0, t1, rc);
	t->last_exit_cyc = t1;
	nt_call_interval_done(t, t1);
	t->depth = 0;
	return rc;
}

/* The books of a fast-path call that is not a collective instance at site s, from t0 to t1: its
 * time at its site (as a poll, polled: out of the site's minimum, maximum and histogram) and in
 * the thread's interval, the next phase starting at t1, the reentry guard cleared; returns rc,
 * the real call's. The phase's end is stored before the duration is computed: gcc then needs
 * no copy of t1 (one instruction a poll). */
static inline __attribute__((always_inline)) int
nt_fast_p2p_books(struct nt_thread *t, struct nt_site *s, uint64_t t0, uint64_t t1, int rc,
		  bool polled)
{
	t->last_exit_cyc = t1;
	uint64_t d = t1 - t0;
	if (polled)
		nt_sites_add_poll(s, d);
	else
		nt_sites_add_one(s, d);
	t->p2p_cyc += d;
	t->depth = 0;
	return rc;
}

/* The books of a call that is not a collective instance (a point-to-point, wait or test call)
 * that took the fast path: its time at its site and in the thread's interval. */
static inline __attribute__((always_inline)) int
nt_fast_p2p_end(struct nt_thread *t, struct nt_site *s, bool typed, uint64_t t0, uint64_t t1,
		int rc)
{
	if (typed && NT_UNLIKELY(rc != MPI_SUCCESS)) /* else a refused call costs no more */
		return nt_fast_refused_end(s, typed, t0, t1, rc);
	return nt_fast_p2p_books(t, s, t0, t1, rc, false);
}

/* Whether a test call found something: its flag or count at poll_at is not 0. On x86-64 one
 * compare with memory, where gcc loads and tests (one instruction more, on the path of every
 * poll: issue 37's budget). */
static inline __attribute__((always_inline)) bool nt_fast_found(const int *poll_at)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	bool found;
	__asm__("cmpl $0, %1" : "=@ccne"(found) : "m"(*poll_at));
	return found;
#else
	return *poll_at != 0;
#endif
}

/* Whether a fast-path test call at site s runs untimed: no counter read; its books the last
 * timed test call's at its site (nt_fast_untimed_books). A polling loop calls MPI_Test or
 * MPI_Iprobe millions of times, a few tens of nanoseconds each (HPCC's RandomAccess), and two
 * counter reads a call -- the floor of every timed wrapper -- cost it 17 % (doc/overhead.md);
 * sampled, every call is counted and their time is estimated from a random one in
 * NOISETOOL_POLL_SAMPLE: each untimed call is given the duration of the last timed one at its
 * site, an unbiased estimate of the site's total whatever the calls found. The countdown and
 * the sample are the site's (sites.h, line 10), so that a loop polling at several sites in
 * turn, whose memo (nt_fast_find) moves on every call, samples each of them: with the
 * thread's, every move timed the next call (two alternating MPI_Iprobe sites, Open MPI: 27 ns a
 * poll over no tool, now 5; doc/overhead.md). The site counts its untimed calls when the next
 * one is timed (nt_fast_poll_end) and at MPI_Finalize, not one by one; a live file's reader
 * adds those still pending. The first test call at a site is timed (its countdown is 0).
 * An untimed call's books need nothing from the real call, so they are kept before it, and the
 * real call is the wrapper's last act, a jump, with no reentry guard around it: nothing of the
 * tool's is in flight while it runs. A call that the application makes from inside it -- a
 * callback MPI runs there -- would then be counted where a timed call's guard hides it, so a
 * program that registers such a callback has every test call timed from then on
 * (nt_callbacks_registered). Counts the call down: one subtraction from memory. */
static inline __attribute__((always_inline)) bool nt_fast_untimed(struct nt_site *s)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	bool timed; /* the count was 0: it wraps, and the timed call's books set it again */
	__asm__("subl $1, %0" : "+m"(s->poll_skip), "=@ccc"(timed));
	return !timed;
#else
	if (s->poll_skip == 0) {
		s->poll_skip = UINT32_MAX; /* as the subtraction leaves it (nt_sites_polls_pending) */
		return false;
	}
	s->poll_skip--;
	return true;
#endif
}

/* The untimed test calls to come at a site after a timed one: uniform in 0 .. 2N - 2 for
 * NOISETOOL_POLL_SAMPLE=N (a linear congruential generator's high bits). */
static inline __attribute__((always_inline)) uint32_t nt_fast_poll_gap(struct nt_thread *t)
{
	t->poll_rng = t->poll_rng * 1664525u + 1013904223u;
	return (uint32_t)(((uint64_t)t->poll_rng * nt_poll_span_) >> 32);
}

/* The books of a timed test call that took the fast path (fast: its function's place in the
 * memo, which holds its site): the untimed calls since the last timed one there are counted at
 * the site with that one's duration (the thread has them: nt_fast_untimed_books); this call's becomes the
 * sample for those to come, and the next timed call is drawn. Then, a poll when MPI accepted
 * the call and it found nothing (its flag or count, t->poll_at, is 0): its time at its site
 * (nt_sites_add_poll) and in the thread's interval; else those of any other call
 * (nt_fast_p2p_end's), out of line, which leaves the poll's path fewer registers to save. */
static inline __attribute__((always_inline)) int
nt_fast_poll_end(struct nt_thread *t, unsigned fast, uint64_t t1, int rc)
{
	uint64_t t0 = t->t0_cyc;
	struct nt_site *s = t->memo[fast].site;
	s->calls += s->poll_gap; /* the countdown wrapped: all were made */
	s->total_cyc += s->poll_gap * s->poll_cyc;
	s->poll_cyc = t1 - t0;
	s->poll_gap = s->poll_skip = nt_fast_poll_gap(t);
	if (NT_UNLIKELY(rc != MPI_SUCCESS || nt_fast_found(t->poll_at)))
		return nt_fast_refused_end(s, false, t0, t1, rc); /* out of line: the books above */
	return nt_fast_p2p_books(t, s, t0, t1, rc, true);
}

/* The books of an untimed test call (nt_fast_untimed) in the thread, kept before its real call
 * (whatever it will return or find): the last timed test call's duration at its site s joins
 * the thread's interval and moves the phase's start past it (the phase after untimed calls is
 * the program's time since the last timed call, less their estimated time). Its site counts it
 * later (sites.h, line 10). */
static inline __attribute__((always_inline)) void nt_fast_untimed_books(struct nt_thread *t,
									const struct nt_site *s)
{
	uint64_t d = s->poll_cyc;
	t->p2p_cyc += d;
	t->last_exit_cyc += d;
}

/* Whether the program registered a callback that MPI may run inside a test call (a generalized
 * request's, an error handler, a data representation's conversion functions: callbacks.c);
 * from then on every test call is timed, inside the reentry guard, as NOISETOOL_POLL_SAMPLE=1
 * times them: the calls made from inside one are then never counted, as on every other path.
 * Idempotent; the sites' untimed calls so far are counted at once. */
void nt_callbacks_registered(void);
extern NT_HIDDEN int nt_callbacks_; /* set by it (atomic) */

/* Before a generic call's real call: when the thread's cache does not hold the site of
 * (fn, ret) -- a program going through more sites than the cache holds -- its cold lines are
 * asked for, out of line, and arrive while MPI works instead of after it (MPICH, 4,000 sites
 * in random order: ~62-78 -> ~37 ns a call over no tool, doc/bench-sites.md). */
static inline __attribute__((always_inline)) void nt_call_prefetch(struct nt_thread *t,
								    unsigned fn, void *ret)
{
	unsigned i = nt_thread_site_index(ret);
	if (NT_UNLIKELY(t->site_keys[i] != (uintptr_t)ret || t->sites[i]->fn != fn))
		nt_sites_prefetch(fn, (uintptr_t)ret);
}

#endif /* WRAPPERS_CALL_H */
