/* The per-call fast path shared by every generated wrapper: a reentry/enable check before the
 * real call, two counter reads around it, the book-keeping after it. */
#ifndef WRAPPERS_CALL_H
#define WRAPPERS_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/common.h>

#include "wrapper-ids.h"

#define NT_TLS __thread __attribute__((tls_model("initial-exec")))

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
	uint64_t app_cyc, mpi_cyc;
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

/* Book-keeping after the real call: phase and MPI time, the call site's aggregates.
 * Clears the reentry guard. */
void nt_call_end(const struct nt_call *c, enum nt_fn fn, void *ret);

#endif /* WRAPPERS_CALL_H */
