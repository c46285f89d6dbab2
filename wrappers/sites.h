/* Call sites: (function, return address, key) -> aggregates, in a fixed table reserved at init
 * (the key tells apart the Python call sites behind one return address: pysite.h).
 * Lookups are lock-free; inserts take a lock; updates are atomic only when several threads
 * may call MPI at once (MPI_THREAD_MULTIPLE). */
#ifndef WRAPPERS_SITES_H
#define WRAPPERS_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>
#include <noisetool-private/live-file.h>

#include <mpi.h>

#include "recpolicy.h"
#include "stack.h"

struct nt_comm;

/* log2 bins of call duration in cycles: a bin for each bit of a 64-bit duration, so that the
 * bin is the duration's highest bit (no clamp on the fast path). The log keeps the first
 * NT_LOG_HIST_BINS (48), its last taking every longer one (logwrite.c); a call of 2^48 cycles
 * or more (over a day at 2.6 GHz) lands past them. */
#define NT_SITE_HIST 64

/* What a site's return address is inside (struct nt_site's binding): the program itself, a
 * Fortran binding (binding.h), a Python extension module (pysite.h). */
enum nt_site_caller {
	NT_SITE_CALLER_C = 0,
	NT_SITE_CALLER_FORTRAN = 1,
	NT_SITE_CALLER_PYTHON = 2,
};

/* The return address of a function's overflow site: the calls of every site the table had no
 * room for, merged (counted, timed, never lost). */
#define NT_SITE_OVERFLOW ((uintptr_t)1)

/* A call site. What a call reads or writes comes first, in the site's first two cache lines
 * (the struct is 64-byte aligned: 832 bytes), then the histogram, of which a call touches one
 * line (hist[b] of its duration's bin), then what only the first sight, the log and Python
 * sites read. A program that goes through thousands of sites misses the per-thread
 * site cache (call.h, 64 entries) on most calls and finds each site cold: 3 lines a call, where the
 * fields spread over the struct (the counts, min/max, the bin, then phase, thresholds and
 * binding after the histogram) made 5 (doc/bench-sites.md); collectives, receives and waits
 * ask for them before their real call (nt_sites_prefetch). */
#define NT_SITE_HOT_BYTES 128
struct __attribute__((aligned(64))) nt_site {
	/* Line 0: what the lookup compares (nt_sites_lookup) and what every call adds. */
	uintptr_t ret;        /* return address: the call site; 0 = a place not used yet */
	unsigned fn;          /* enum nt_fn */
	int binding;          /* ret is inside a language binding: enum nt_site_caller (Fortran,
			       * Python), else 0 */
	uint64_t calls;
	uint64_t total_cyc;
	uint64_t bytes;       /* sum over calls of count x datatype size (see nt_call_bytes) */
	uint64_t min_cyc;
	uint64_t max_cyc;
	MPI_Datatype type;    /* one-entry datatype size cache: the site's last datatype */
	/* Line 1: the datatype's size, the spans, the communicator cache, the recording
	 * thresholds. */
	uint64_t type_size;
	uint64_t phase_cyc;   /* sum of the spans (intervals since the previous collective
			       * instance; else phases) before its blocking calls */
	/* One-entry communicator cache of a collective's site, for the fast path (call.h): the
	 * state of the communicator of its last call, valid while its handle is that call's
	 * (comms.h: a table entry holds the state of the communicator its handle names); never
	 * NULL (nt_comm_none_). Written only while one thread calls MPI. */
	struct nt_comm *comm;
	struct nt_rec_thresholds rec; /* which of its instances are kept as records */
	/* Lines 2-9: the histogram; then the rest. */
	uint64_t hist[NT_SITE_HIST] __attribute__((aligned(64)));
	/* Line 10: a test call's sampling (call.h: nt_fast_untimed), where the untimed calls
	 * touch nothing else of the site. Each untimed call counts poll_skip down; the calls since
	 * the last timed one, poll_gap - poll_skip (nt_sites_polls_pending), are counted at the
	 * site (calls, total_cyc) with poll_cyc each at the next timed call here (call.h,
	 * nt_fast_poll_end) and at MPI_Finalize (nt_sites_settle_all_polls); a live file's reader
	 * adds them itself. Written by one thread: the fast path's. */
	uint64_t poll_cyc;    /* the last timed test call's duration here */
	uint32_t poll_gap;    /* the untimed calls drawn to follow it */
	uint32_t poll_skip;   /* of them, those still to come (wraps at the next timed one) */
	uintptr_t key;        /* 0, or a Python site's (code object, instruction) (pysite.c) */
	uint32_t py_name;     /* a Python site's name in the pool (pysite.c): offset + 1, else 0 */
	uint32_t py_line;     /* a Python site's line */
	int nonblocking;      /* a nonblocking collective: times run to completion */
	int depth;            /* frames in stack */
	uintptr_t stack[NT_STACK_DEPTH]; /* captured once, when the site was first seen */
};

/* Bytes a table of capacity sites takes, with the merged site of every function and the index
 * (2 x capacity entries of 4 bytes). */
size_t nt_sites_table_bytes(size_t capacity);

/* Keep a table of capacity sites (a power of two) at mem (nt_sites_table_bytes, zeroed); abs_cyc:
 * the recording policy's absolute floor in counter cycles; caller_of: what a new site's return
 * address lies in (enum nt_site_caller: a language binding's code, else the program's). */
void nt_sites_init(void *mem, size_t capacity, bool threaded, uint64_t abs_cyc,
		   unsigned (*caller_of)(uintptr_t ret));

/* Forget the table (the tool is off: the ranks did not agree). */
void nt_sites_fini(void);

/* The layout of a site for a live file's readers (noisetool-private/live-file.h): the fields' places. */
void nt_sites_live_fields(struct nt_live_field fields[NT_LSF_COUNT]);

/* The site of (fn, ret), created on first sight; when the table is full, fn's overflow site
 * (the calls that land there are counted: nt_sites_overflow). */
struct nt_site *nt_sites_lookup(unsigned fn, uintptr_t ret);

/* A Python site (key != 0) of fn called from ret, or NULL when it is not in the table yet.
 * Lock-free. */
struct nt_site *nt_sites_find(unsigned fn, uintptr_t ret, uintptr_t key);

/* The same, created on first sight with its name (pool offset + 1) and line; when the table is
 * full, fn's overflow site. */
struct nt_site *nt_sites_lookup_py(unsigned fn, uintptr_t ret, uintptr_t key, uint32_t py_name,
				   uint32_t py_line);

/* Ask for the lines a call of (fn, ret) will touch at its site (line 0, line 1, the usual
 * histogram line), without waiting for them: before the real call of a site that is not in the
 * thread's cache, so that they arrive while MPI works (call.h, nt_call_prefetch). Reads only
 * the index; a site not seen yet fetches nothing. Lock-free. */
void nt_sites_prefetch(unsigned fn, uintptr_t ret);

/* The histogram bin of a duration of d cycles: 0 for d < 2, else floor(log2 d) (the rule of
 * the core's nt_log2_bin below its last bin). */
static inline __attribute__((always_inline)) unsigned nt_sites_bin(uint64_t d)
{
	return 63u - (unsigned)__builtin_clzll(d | 1);
}

/* Add one call of d cycles to s (its bytes are added apart): count, total, min, max and the
 * histogram. One thread only. min and max are compared with branches, taken only while a
 * site's extremes still move: branch-free (cmov) they cost four instructions a call, here
 * two (doc/overhead.md, the instruction counts). */
static inline __attribute__((always_inline)) void nt_sites_add_one(struct nt_site *s, uint64_t d)
{
	s->calls++;
	s->total_cyc += d;
	if (NT_UNLIKELY(d < s->min_cyc))
		s->min_cyc = d;
	if (NT_UNLIKELY(d > s->max_cyc))
		s->max_cyc = d;
	s->hist[nt_sites_bin(d)]++;
}

/* Add a poll of d cycles to s: a test call that found nothing (call.h) counts and adds its
 * time, and stays out of the site's minimum, maximum and histogram, which describe its calls
 * that did something: a polling loop's millions of empty tests would bury the one that
 * completed, and each costs the tool no more than a few instructions (issue 37). One thread
 * only. */
static inline __attribute__((always_inline)) void nt_sites_add_poll(struct nt_site *s, uint64_t d)
{
	s->calls++;
	s->total_cyc += d;
}

/* The untimed test calls at s not counted yet (poll_skip wraps past 0 on the call that is
 * timed: then all poll_gap of them were made). */
static inline __attribute__((always_inline)) uint32_t
nt_sites_polls_pending(const struct nt_site *s)
{
	return s->poll_skip <= s->poll_gap ? s->poll_gap - s->poll_skip : s->poll_gap;
}

/* Count every site's untimed test calls made since its last timed one (calls, total_cyc),
 * each with its poll_cyc (line 10); the countdowns go on, none pending. At MPI_Finalize,
 * before the summary and the log, when no MPI call runs. */
void nt_sites_settle_all_polls(void);
/* The program gave MPI a callback (call.h: nt_callbacks_registered): every site's untimed test
 * calls so far are counted, as at MPI_Finalize, and its countdown is set to 0, so that its next
 * test call is timed (and, with nt_poll_span_ 1, every one after it). */
void nt_sites_time_all_polls(void);

extern bool nt_sites_threaded_;
void nt_sites_add_atomic(struct nt_site *s, uint64_t d_cyc, uint64_t bytes);
void nt_sites_add_poll_atomic(struct nt_site *s, uint64_t d_cyc);

/* Add one call of d_cyc cycles and bytes (atomically when several threads may call MPI at
 * once). */
static inline __attribute__((always_inline)) void nt_sites_add(struct nt_site *s, uint64_t d,
								 uint64_t bytes)
{
	if (NT_UNLIKELY(nt_sites_threaded_)) {
		nt_sites_add_atomic(s, d, bytes);
		return;
	}
	s->bytes += bytes;
	nt_sites_add_one(s, d);
}

/* Add one poll of d_cyc cycles (nt_sites_add_poll; atomically when several threads may call MPI
 * at once). */
static inline __attribute__((always_inline)) void nt_sites_add_polled(struct nt_site *s, uint64_t d)
{
	if (NT_UNLIKELY(nt_sites_threaded_))
		nt_sites_add_poll_atomic(s, d);
	else
		nt_sites_add_poll(s, d);
}

/* The site's calls so far (another thread of a shared site may be adding to them). */
static inline __attribute__((always_inline)) uint64_t nt_sites_calls(const struct nt_site *s)
{
	return __atomic_load_n(&s->calls, __ATOMIC_RELAXED);
}

/* The size of type, for a site's one-entry cache miss. The cache is filled only when one
 * thread calls MPI, so with several threads every call comes here. */
uint64_t nt_sites_type_size(struct nt_site *s, MPI_Datatype type);

/* A datatype is being freed: its handle may come back as another type, so every site's cache
 * forgets it. */
void nt_sites_forget_type(MPI_Datatype type);

/* count elements of type at site s, in bytes; type MPI_DATATYPE_NULL (a constant for calls
 * without a buffer) gives 0 at no cost. */
static inline __attribute__((always_inline)) uint64_t
nt_sites_bytes(struct nt_site *s, uint64_t count, MPI_Datatype type)
{
	if (type == MPI_DATATYPE_NULL)
		return 0;
	if (NT_UNLIKELY(type != s->type))
		return count * nt_sites_type_size(s, type);
	return count * s->type_size;
}

/* Forget every aggregate (MPI_Pcontrol(2)); sites stay known. */
void nt_sites_reset(void);

/* Iterate the sites in use, in the order they were first seen: *i starts at 0; returns NULL
 * at the end. */
struct nt_site *nt_sites_next(size_t *i);

/* The table's positions (nt_sites_index is below it), the merged sites included. */
size_t nt_sites_slots(void);

/* Position of s in the table (for records): the sites are kept in the order they were first
 * seen. */
uint32_t nt_sites_index(const struct nt_site *s);

/* Calls that found the table full (counted at the overflow sites). */
uint64_t nt_sites_overflow(void);

#endif /* WRAPPERS_SITES_H */
