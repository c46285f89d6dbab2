/* The per-call fast path shared by every generated wrapper: a reentry/enable check before the
 * real call, two counter reads around it, the book-keeping after it. */
#ifndef WRAPPERS_CALL_H
#define WRAPPERS_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/common.h>

#include "sites.h"
#include "wrapper-ids.h"

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
};

extern NT_TLS struct nt_thread nt_thread_;
extern volatile int nt_active_; /* recording on: after init, not disabled, not paused */

static inline bool nt_call_begin(struct nt_call *c)
{
	(void)c;
	if (!nt_active_ || nt_thread_.depth)
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

/* Book-keeping after the real call: the phase boundary and the call site's aggregates (MPI time
 * per rank is their sum, application time the rest of the wall time). Clears the
 * reentry guard. Inline: out of line it cost ~8 ns per call here, most of the budget. */
static inline void nt_call_end(const struct nt_call *c, enum nt_fn fn, void *ret)
{
	struct nt_thread *t = &nt_thread_;
	uint64_t d = c->t1_cyc - c->t0_cyc;
	t->last_exit_cyc = c->t1_cyc; /* the next phase starts here */
	struct nt_site *s = t->last_site;
	if (NT_UNLIKELY((uintptr_t)ret != t->last_ret || (unsigned)fn != t->last_fn))
		s = nt_call_site_miss(t, fn, ret);
	if (NT_UNLIKELY(s != NULL && s->binding))
		s = nt_call_binding_site(fn, s);
	if (NT_LIKELY(s != NULL))
		nt_sites_add(s, d);
	if (NT_UNLIKELY(nt_slow_extras_))
		nt_call_slow_extras();
	t->depth = 0;
}

#endif /* WRAPPERS_CALL_H */
