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

struct nt_call {
	uint64_t t0_cyc, t1_cyc;
};

/* Per-thread state: the reentry guard and a one-entry site cache (a loop calls the same site
 * again and again, so the table lookup is skipped almost always). */
struct nt_thread {
	int depth;                /* > 0 while inside a wrapper: MPI calling MPI passes through */
	uintptr_t last_ret;
	unsigned last_fn;
	struct nt_site *last_site;
	uint64_t last_exit_cyc;   /* end of the previous MPI call: the phase starts here */
	MPI_Comm last_comm;       /* one-entry communicator cache */
	struct nt_comm *last_comm_state;
	unsigned comm_gen;        /* nt_comm_gen_ when the cache was filled */
	/* The interval since the previous blocking collective instance returned: where it
	 * ended (0: none yet) and the time spent in other MPI calls since (point-to-point
	 * waits, where a rank absorbs most of another's lateness in halo exchanges). */
	uint64_t coll_exit_cyc, p2p_cyc;
	/* The recording policy's state for this thread: when its probe read is due (read on
	 * every collective instance), what reads cost (only when one is done). */
	struct nt_rec_thread rec;
};

extern NT_TLS struct nt_thread nt_thread_;
extern int nt_active_; /* recording on: after init, not disabled, not paused (atomic) */

static inline bool nt_call_begin(struct nt_call *c)
{
	(void)c;
	if (!__atomic_load_n(&nt_active_, __ATOMIC_RELAXED) || nt_thread_.depth)
		return false;
	nt_thread_.depth = 1;
	return true;
}

/* The slow parts, out of line: a call site not in the one-entry cache, the every-call stack
 * walk of the benchmark mode. */
struct nt_site *nt_call_site_miss(struct nt_thread *t, enum nt_fn fn, void *ret);
/* A call through a language binding: the site of the program's own call, found on the stack
 * (~0.1 us; only for such calls). */
struct nt_site *nt_call_binding_site(enum nt_fn fn, struct nt_site *binding_site);
void nt_call_slow_extras(void);
extern int nt_slow_extras_;
extern uint64_t nt_unknown_comm_records_; /* records not kept: their communicator has no id */
extern unsigned nt_comm_gen_; /* bumped when a communicator is freed (atomic) */

/* Whether the thread's one-entry communicator cache holds comm's state. */
static inline __attribute__((always_inline)) bool nt_call_comm_cached(const struct nt_thread *t,
								      MPI_Comm comm)
{
	return comm == t->last_comm && t->last_comm_state != NULL &&
	       t->comm_gen == __atomic_load_n(&nt_comm_gen_, __ATOMIC_RELAXED);
}
struct nt_comm *nt_call_comm_miss(struct nt_thread *t, MPI_Comm comm);
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
	struct nt_comm *cs = t->last_comm_state;
	if (NT_UNLIKELY(!nt_call_comm_cached(t, comm)))
		cs = nt_call_comm_miss(t, comm);
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
	if (NT_UNLIKELY(nt_recpolicy_may_act(&t->rec, &s->rec, calls, c->t0_cyc, d, interval,
					     false))) {
		struct nt_rec_instance in = { .calls = calls, .t0_cyc = c->t0_cyc,
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
	struct nt_thread *t = &nt_thread_;
	struct nt_comm *cs = t->last_comm_state;
	if (*t0_cyc < nt_wait_spin_until_cyc_ && nt_call_comm_cached(t, comm) && !cs->wait_nb &&
	    cs->seq < cs->vote_at_seq)
		return true;
	return nt_mpiwait_coll_blocking(comm, t0_cyc);
}

/* Book-keeping after the real call: the phase boundary and the call site's aggregates (MPI time
 * per rank is their sum, application time the rest of the wall time). count elements of type
 * are the call's bytes. A persistent collective's creation (p_request) only registers it: its
 * starts are the site's calls. Clears the reentry guard. Inline: out of line it cost ~8 ns
 * per call here, most of the budget. */
static inline __attribute__((always_inline)) void
nt_call_end(const struct nt_call *c, enum nt_fn fn, void *ret, MPI_Comm comm,
	    MPI_Request *nb_request, MPI_Request *p_request, uint64_t count, MPI_Datatype type)
{
	struct nt_thread *t = &nt_thread_;
	uint64_t d = c->t1_cyc - c->t0_cyc;
	uint64_t phase = c->t0_cyc - t->last_exit_cyc;
	t->last_exit_cyc = c->t1_cyc; /* the next phase starts here */
	struct nt_site *s = t->last_site;
	if (NT_UNLIKELY((uintptr_t)ret != t->last_ret || (unsigned)fn != t->last_fn))
		s = nt_call_site_miss(t, fn, ret);
	if (NT_UNLIKELY(s != NULL && s->binding))
		s = nt_call_binding_site(fn, s);
	if (NT_LIKELY(s != NULL)) {
		/* MPI_COMM_NULL, NULL and MPI_DATATYPE_NULL are constants for every call that is
		 * not a collective instance, a persistent creation or a call with a buffer: the
		 * compiler drops these branches from their wrappers. */
		uint64_t bytes = nt_sites_bytes(s, count, type);
		if (p_request) {
			if (*p_request != MPI_REQUEST_NULL) {
				nt_call_comm_miss(t, comm); /* its communicator, known from here on */
				nt_persistent_add(*p_request, s, comm, bytes);
			}
		} else if (comm != MPI_COMM_NULL) {
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

#endif /* WRAPPERS_CALL_H */
