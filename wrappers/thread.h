/* The calling thread's state in the wrappers -- the reentry guard, the caches of call sites and
 * communicators, where its phase and interval began -- and the fast path's gate, which says
 * whether a call may use those caches at all. */
#ifndef WRAPPERS_THREAD_H
#define WRAPPERS_THREAD_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/common.h>

#include <mpi.h>

#include "comms.h"
#include "recpolicy.h"
#include NT_WRAPPER_IDS_FILE /* wrapper-ids-MPI.h, generated for this MPI (meson.build) */

#define NT_TLS __thread __attribute__((tls_model("initial-exec")))

/* The library's own variables, declared hidden where they are used: the compiler then reads
 * them straight (rip-relative) instead of through the GOT, an instruction less a call. */
#define NT_HIDDEN __attribute__((visibility("hidden")))

/* The MPI entry points are the only exported symbols (with exports.map); everything else is
 * hidden, so calls inside the library are direct, not through the PLT. */
#define NT_MPI_API __attribute__((visibility("default")))

struct nt_site;

/* The thread's memo of sites: for each function with a fast path (nt_fn_fast), the return
 * address (0: none) and the site of the latest call to it that looked its site up, so that a
 * loop calling a function from one place (most hot loops) finds the site with one compare,
 * without hashing (seven instructions less a call). Behind it, the thread's site cache:
 * direct-mapped by return address, so that a loop over a few sites
 * (a halo exchange's sends, receives and waits, a solver's collectives) skips the table lookup
 * on every call, not only when one site repeats. Slot i holds a return address, site_keys[i]
 * (0: empty), and its site, sites[i], whose fn tells which function was called there: two
 * arrays of words, which the fast path indexes straight off the thread's base (a 16-byte slot
 * took three instructions more to address; a key of return address and function, two more and
 * a register). */
#define NT_SITE_CACHE_BITS 6

/* The thread's communicator cache, direct-mapped by handle: a slot holds a communicator's
 * state, or nt_comm_none_ (never NULL), whose handle (0) is never a communicator's, so every
 * check fails on it. */
#define NT_COMM_CACHE_BITS 3
extern NT_HIDDEN struct nt_comm nt_comm_none_;

/* Per-thread state. */
struct nt_thread {
	int depth;              /* > 0 while inside a wrapper: MPI calling MPI passes through */
	unsigned comm_gen;      /* nt_comm_gen_ when the communicator cache was checked */
	uint64_t last_exit_cyc; /* end of the previous MPI call: the phase starts here */
	/* The interval since the previous blocking collective instance returned: where it ended
	 * (0: none yet) and the time spent in other MPI calls since (point-to-point waits, where a
	 * rank absorbs most of another's lateness in halo exchanges). */
	uint64_t coll_exit_cyc, p2p_cyc;
	/* The recording policy's state for this thread: its grid of probe reads (read on every
	 * collective instance), what reads cost (only when one is done). */
	struct nt_rec_thread rec;
	/* What a fast-path call needs after the real call, where it waits (call.h: nt_fast_entry,
	 * nt_fast_find): a collective's or test call's entry, a test call's flag or count (its
	 * site waits in the memo), a call's count of elements (a refused call's bytes). */
	uint64_t t0_cyc;
	const int *poll_at;
	int64_t count;
	void *generic_ret; /* the return address of a call the fast path hands to the generic
			    * one (call.h) */
	struct nt_comm *comms[1u << NT_COMM_CACHE_BITS];
	uintptr_t site_keys[1u << NT_SITE_CACHE_BITS];
	struct nt_site *sites[1u << NT_SITE_CACHE_BITS];
	/* The memo: a return address and its site side by side, in one cache line (a constant
	 * offset off the thread's base, no instruction more than two arrays). */
	struct {
		uintptr_t ret;
		struct nt_site *site;
	} memo[NT_FAST_COUNT];
	/* Sampled test calls (call.h: nt_fast_untimed; their countdown is the site's): the
	 * generator of the random gaps between timed calls. */
	uint32_t poll_rng;
};

/* A thread's initial state (thread-local storage: no constructor runs). */
#define NT_THREAD_INIT                                                                          \
	{ .comms = { &nt_comm_none_, &nt_comm_none_, &nt_comm_none_, &nt_comm_none_,         \
		     &nt_comm_none_, &nt_comm_none_, &nt_comm_none_, &nt_comm_none_ },        \
	  .rec = NT_REC_THREAD_NONE }

extern NT_HIDDEN NT_TLS struct nt_thread nt_thread_;
extern NT_HIDDEN int nt_active_; /* the tool on: after init, not disabled, not finalized (atomic) */
/* Recording paused by MPI_Pcontrol(0) (atomic). A local call on some ranks only: calls still
 * take the generic path, which numbers collective instances, votes and waits as while
 * recording (the collective path must stay the same on every member), and keeps no aggregate
 * or record (nt_call_paused_end). */
extern NT_HIDDEN int nt_paused_;

/* The fast path's gate: 0 when a call may take the fast path (call.h): recording on and not paused, the
 * counter is the clock, no adaptive waits, no every-call extras, one thread calling MPI (the
 * byte generic), and, for wait and test calls, no nonblocking collective outstanding (the byte
 * requests). Two bytes: a wait or test call reads both as one 16-bit word, every other call the
 * first alone (a word with bits to mask took an instruction more a call). Read by every call,
 * changed only when one of those changes (nt_gate_update, nbreqs.c); atomic. */
union nt_gate_bytes {
	struct {
		uint8_t generic, requests;
	} b;
	uint16_t both;
};
/* The gate's cache line also holds the real test and probe calls (NT_POLL_REALS), set at load
 * (data relocations): an untimed poll (call.h: nt_fast_untimed) ends with a jump to its real
 * call through that slot, beside the gate it has just read, not through the PLT's stub, whose
 * jump is one instruction more on a path where each one counts (HPCC's MPIRandomAccess:
 * doc/overhead.md, "Fewer instructions on the untimed path"). */
#define NT_POLL_REAL_MEMBER(name, params) int(*name) params;
struct __attribute__((aligned(64))) nt_gate {
	union nt_gate_bytes g;
	struct {
		NT_POLL_REALS(NT_POLL_REAL_MEMBER)
	} real;
};
extern NT_HIDDEN struct nt_gate nt_gate_;
/* Recompute the generic byte from the runtime's state (after any of it changed). */
void nt_gate_update(void);

extern NT_HIDDEN unsigned nt_comm_gen_; /* bumped when a communicator is freed (atomic) */

/* The slot of return address ret in the thread's site cache (Fibonacci hashing: return
 * addresses a few bytes apart land far apart). */
static inline __attribute__((always_inline)) unsigned nt_thread_site_index(void *ret)
{
	return (unsigned)(((uintptr_t)ret * 0x9e3779b97f4a7c15ull) >> (64 - NT_SITE_CACHE_BITS));
}

/* The slot of comm in the thread's communicator cache. */
static inline __attribute__((always_inline)) unsigned nt_thread_comm_index(MPI_Comm comm)
{
	return (unsigned)(((uint64_t)(uintptr_t)comm * 0x9e3779b97f4a7c15ull) >>
			  (64 - NT_COMM_CACHE_BITS));
}

static inline __attribute__((always_inline)) struct nt_comm **
nt_thread_comm_slot(struct nt_thread *t, MPI_Comm comm)
{
	return &t->comms[nt_thread_comm_index(comm)];
}

/* comm's state when the thread's cache holds it and no communicator was freed since the cache
 * was checked (several threads: another one's free may move table entries), else NULL. */
static inline __attribute__((always_inline)) struct nt_comm *
nt_thread_comm_cached(struct nt_thread *t, MPI_Comm comm)
{
	struct nt_comm *cs = *nt_thread_comm_slot(t, comm);
	return cs->handle == comm && t->comm_gen == __atomic_load_n(&nt_comm_gen_, __ATOMIC_RELAXED)
		       ? cs
		       : NULL;
}

/* comm's state, looked up and cached (NULL: the table is full). */
struct nt_comm *nt_thread_comm_miss(struct nt_thread *t, MPI_Comm comm);

/* comm's state: cached, else looked up (NULL: the table is full). */
static inline __attribute__((always_inline)) struct nt_comm *nt_thread_comm(struct nt_thread *t,
									    MPI_Comm comm)
{
	struct nt_comm *cs = nt_thread_comm_cached(t, comm);
	return NT_LIKELY(cs != NULL) ? cs : nt_thread_comm_miss(t, comm);
}

#endif /* WRAPPERS_THREAD_H */
