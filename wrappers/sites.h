/* Call sites: (function, return address) -> aggregates, in a fixed table reserved at init.
 * Lookups are lock-free; inserts take a lock; updates are atomic only when several threads
 * may call MPI at once (MPI_THREAD_MULTIPLE). */
#ifndef WRAPPERS_SITES_H
#define WRAPPERS_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>

#include "stack.h"

#define NT_SITE_HIST 48 /* log2 bins of call duration in cycles */

struct nt_site {
	uintptr_t ret;        /* return address: the call site; 0 = free slot */
	unsigned fn;          /* enum nt_fn */
	uint64_t calls;
	uint64_t total_cyc;
	uint64_t min_cyc, max_cyc;
	uint64_t hist[NT_SITE_HIST];
	uint64_t slow_cyc;               /* a call longer than this is recorded (3x the mean) */
	int binding;                     /* ret is inside a language binding (Fortran) */
	int nonblocking;                 /* a nonblocking collective: times run to completion */
	int depth;                       /* frames in stack */
	uintptr_t stack[NT_STACK_DEPTH]; /* captured once, when the site was first seen */
};

/* Reserve and pre-fault a table of capacity sites (a power of two). 0 or -ENOMEM. */
int nt_sites_init(size_t capacity, bool threaded);

/* The site of (fn, ret), created on first sight; NULL when the table is full (counted). */
struct nt_site *nt_sites_lookup(unsigned fn, uintptr_t ret);

extern bool nt_sites_threaded_;
void nt_sites_add_atomic(struct nt_site *s, uint64_t d_cyc);

/* Add one call of d_cyc cycles (atomically when several threads may call MPI at once). */
static inline __attribute__((always_inline)) void nt_sites_add(struct nt_site *s, uint64_t d)
{
	if (NT_UNLIKELY(nt_sites_threaded_)) {
		nt_sites_add_atomic(s, d);
		return;
	}
	unsigned b = d < 2 ? 0 : 63u - (unsigned)__builtin_clzll(d);
	s->calls++;
	s->total_cyc += d;
	if (d < s->min_cyc)
		s->min_cyc = d;
	if (d > s->max_cyc)
		s->max_cyc = d;
	s->hist[b < NT_SITE_HIST ? b : NT_SITE_HIST - 1]++;
}

/* Forget every aggregate (MPI_Pcontrol(2)); sites stay known. */
void nt_sites_reset(void);

/* Iterate the sites in use: *i starts at 0; returns NULL at the end. */
struct nt_site *nt_sites_next(size_t *i);

/* Position of s in the table (for records). */
uint32_t nt_sites_index(const struct nt_site *s);

/* The site at a table position, or NULL. */
struct nt_site *nt_sites_at(uint32_t index);

/* Calls that found the table full. */
uint64_t nt_sites_overflow(void);

#endif /* WRAPPERS_SITES_H */
