/* The out-of-line half of the per-call paths (call.h): the thread's state and the gate, the
 * caches' misses, language bindings' sites, the fast path's rare ends. */
#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include <noisetool/clock.h>

#include "binding.h"
#include "call.h"
#include "env.h"
#include "pysite.h"
#include "stack.h"

struct nt_comm nt_comm_none_ = { .id = NT_COMM_ID_UNKNOWN, .vote = -1 };
NT_TLS struct nt_thread nt_thread_ = NT_THREAD_INIT;
int nt_active_;
int nt_paused_;
#define NT_POLL_REAL_INIT(name, params) .name = P##name,
struct nt_gate nt_gate_ = { .g = { .b = { .generic = 1 } },
			    .real = { NT_POLL_REALS(NT_POLL_REAL_INIT) } };
_Static_assert(sizeof nt_gate_ == 64, "the gate and the polls' real calls: one cache line");
int nt_slow_extras_;
uint32_t nt_poll_span_ = 2 * NT_ENV_POLL_SAMPLE_DEFAULT - 1;
int nt_callbacks_;
unsigned nt_comm_gen_;
static volatile uintptr_t walk_sink; /* keeps the every-call stack walk from being optimised out */

void nt_gate_update(void)
{
	bool generic = !__atomic_load_n(&nt_active_, __ATOMIC_RELAXED) ||
		       __atomic_load_n(&nt_paused_, __ATOMIC_RELAXED) ||
		       !nt_clock_use_counter_ || nt_wait_mode_ || nt_slow_extras_ ||
		       nt_sites_threaded_ || nt_comms_threaded_;
	__atomic_store_n(&nt_gate_.g.b.generic, generic, __ATOMIC_RELAXED);
}

void nt_callbacks_registered(void)
{
	if (__atomic_exchange_n(&nt_callbacks_, 1, __ATOMIC_RELAXED))
		return;
	/* Every test call timed from here on (MPI_Init keeps it so: runtime.c), every site's next
	 * one too: its untimed calls so far are counted now. */
	__atomic_store_n(&nt_poll_span_, 1, __ATOMIC_RELAXED);
	nt_sites_time_all_polls();
}

struct nt_comm *nt_thread_comm_miss(struct nt_thread *t, MPI_Comm comm)
{
	unsigned gen = __atomic_load_n(&nt_comm_gen_, __ATOMIC_ACQUIRE);
	if (gen != t->comm_gen) { /* a communicator was freed: entries may have moved */
		for (size_t i = 0; i < sizeof t->comms / sizeof t->comms[0]; i++)
			t->comms[i] = &nt_comm_none_;
		t->comm_gen = gen;
	}
	struct nt_comm *cs = nt_comms_get(comm);
	*nt_thread_comm_slot(t, comm) = cs ? cs : &nt_comm_none_; /* full: tried again later */
	return cs;
}

struct nt_site *nt_call_site_miss(struct nt_thread *t, unsigned fn, void *ret)
{
	struct nt_site *s = nt_sites_lookup(fn, (uintptr_t)ret);
	/* A language binding's site is never cached: its calls find the program's own site on
	 * the stack every time, and the fast path need not look. Nor is a collective's before
	 * the thread has an interval (a blocking collective instance returned): the fast path's
	 * books take one for granted (nt_fast_find). */
	if (s && !s->binding &&
	    (t->coll_exit_cyc || fn >= NT_FN_COUNT || nt_fn_kind[fn] != NT_KIND_COLLECTIVE)) {
		unsigned i = nt_thread_site_index(ret);
		t->site_keys[i] = (uintptr_t)ret;
		t->sites[i] = s;
		if (fn < NT_FN_COUNT && nt_fn_fast[fn] >= 0) {
			t->memo[nt_fn_fast[fn]].ret = (uintptr_t)ret;
			t->memo[nt_fn_fast[fn]].site = s;
		}
	}
	return s;
}

struct nt_site *nt_call_binding_site(unsigned fn, struct nt_site *binding_site)
{
	if (binding_site->binding == NT_SITE_CALLER_PYTHON)
		return nt_pysite_site(fn, binding_site);
	uintptr_t caller = nt_binding_caller();
	if (!caller)
		return binding_site;
	struct nt_site *s = nt_sites_lookup(fn, caller);
	return s ? s : binding_site;
}

void nt_call_slow_extras(struct nt_thread *t, struct nt_site *s, bool polled, uint64_t phase)
{
	if (nt_wait_mode_) {
		if (!polled)
			nt_mpiwait_after();
		uint64_t waited = nt_mpiwait_polled(polled, phase);
		if (waited && s) {
			if (nt_sites_threaded_)
				__atomic_fetch_add(&s->total_cyc, waited, __ATOMIC_RELAXED);
			else
				s->total_cyc += waited;
			t->p2p_cyc += waited;
			t->last_exit_cyc += waited;
		}
	}
	if (nt_slow_extras_ & NT_EXTRA_WALK) {
		/* The mpiP way, for the overhead comparison: a stack walk on every call. */
		uintptr_t ips[NT_STACK_DEPTH];
		walk_sink += (uintptr_t)nt_stack_walk(ips, 4);
	}
}

void nt_call_paused_end(const struct nt_call *c, unsigned fn, void *ret, MPI_Comm comm,
			const MPI_Request *nb_request, const MPI_Request *p_request, uint64_t count,
			MPI_Datatype type, int rc)
{
	struct nt_thread *t = &nt_thread_;
	t->last_exit_cyc = c->t1_cyc; /* the phase after a resume is the program's own */
	if (p_request) {
		/* Registered all the same: its starts after a resume are numbered (and timed). */
		if (rc == MPI_SUCCESS && *p_request != MPI_REQUEST_NULL) {
			struct nt_site *s = nt_call_site_miss(t, fn, ret);
			if (s != NULL && s->binding)
				s = nt_call_binding_site(fn, s);
			if (s != NULL) {
				nt_thread_comm_miss(t, comm);
				nt_persistent_add(*p_request, s, comm, nt_sites_bytes(s, count, type));
			}
		}
	} else if (comm != MPI_COMM_NULL && rc == MPI_SUCCESS) {
		/* Numbered as on every member, so that (comm id, seq) still names one instance
		 * after a resume; a nonblocking one is not tracked (nothing times it). */
		struct nt_comm *cs = nt_thread_comm(t, comm);
		if (cs)
			nt_comms_next_seq(cs);
		if (!nb_request)
			nt_call_interval_done(t, c->t1_cyc);
	}
	if (nt_slow_extras_)
		nt_call_slow_extras(t, NULL, false, 0);
	t->depth = 0;
}

void nt_call_interval_record(struct nt_thread *t, struct nt_site *s, uint64_t comm_id,
			     uint64_t seq, uint64_t t0, uint64_t t1, uint64_t phase)
{
	uint64_t interval = nt_call_interval_of(t, t0, phase);
	struct nt_rec_instance in = { .calls = nt_sites_calls(s), .seq = seq, .t0_cyc = t0,
				      .t1_cyc = t1, .span_cyc = interval,
				      .interval = t->coll_exit_cyc != 0 };
	nt_records_instance(s, comm_id, seq, &in, phase, t->p2p_cyc);
}

int nt_fast_refused_end(struct nt_site *s, bool typed, uint64_t t0, uint64_t t1, int rc)
{
	struct nt_thread *t = &nt_thread_;
	uint64_t d = t1 - t0;
	if (typed)
		s->bytes -= (uint64_t)t->count * s->type_size;
	nt_sites_add_one(s, d);
	t->p2p_cyc += d;
	t->last_exit_cyc = t1;
	t->depth = 0;
	return rc;
}

int nt_fast_record_end(struct nt_site *s, struct nt_comm *cs, uint64_t seq, uint64_t t0,
		       uint64_t t1, int rc)
{
	struct nt_thread *t = &nt_thread_;
	nt_call_interval_record(t, s, cs->id, seq, t0, t1, t0 - t->last_exit_cyc);
	t->last_exit_cyc = t1;
	nt_call_interval_done(t, t1);
	t->depth = 0;
	return rc;
}
