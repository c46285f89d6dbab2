/* Nonblocking collectives timed from start to completion: the start leaves its request in a
 * fixed table; wait and test calls look at their requests before and after the real call, and a
 * tracked request that became MPI_REQUEST_NULL completed then. Nothing is done in wait/test
 * calls while no tracked request is outstanding. */
#ifndef WRAPPERS_NBREQS_H
#define WRAPPERS_NBREQS_H

#include <stdint.h>

#include <mpi.h>

#include <noisetool/common.h>

#define NT_SNAP_MAX 64 /* requests of one wait/test call that are looked at */

struct nt_site;
struct nt_comm;

struct nt_reqsnap {
	int n;
	MPI_Request h[NT_SNAP_MAX];
	int idx[NT_SNAP_MAX]; /* position in the caller's array */
};

extern volatile int nt_nb_outstanding_;

/* Remember a started instance (request must be a valid, non-null request). */
void nt_nb_track(MPI_Request request, struct nt_site *s, uint64_t t0_cyc, struct nt_comm *comm,
		 uint64_t seq, uint64_t phase_cyc);

void nt_wait_snapshot(struct nt_reqsnap *snap, const MPI_Request *reqs, int n);
void nt_wait_complete(const struct nt_reqsnap *snap, const MPI_Request *reqs, uint64_t t1_cyc);

/* n is the constant 0 in every wrapper but the wait/test family: then these compile to nothing
 * (not even the snapshot's stack space). */
static inline __attribute__((always_inline)) void
nt_wait_before(struct nt_reqsnap *snap, const MPI_Request *reqs, int n)
{
	if (n <= 0)
		return;
	snap->n = 0;
	if (reqs && NT_UNLIKELY(nt_nb_outstanding_ > 0))
		nt_wait_snapshot(snap, reqs, n);
}

static inline __attribute__((always_inline)) void
nt_wait_after(const struct nt_reqsnap *snap, const MPI_Request *reqs, int n, uint64_t t1_cyc)
{
	if (n > 0 && NT_UNLIKELY(snap->n > 0))
		nt_wait_complete(snap, reqs, t1_cyc);
}

#endif /* WRAPPERS_NBREQS_H */
