/* Nonblocking and persistent collectives, timed from start to completion.
 *
 * A nonblocking start (MPI_Iallreduce ...) leaves its request in a table of outstanding
 * instances (both tables sit in the rank's fixed memory, arena.h). A persistent collective's MPI_X_init leaves its request in a second table, with
 * its call site, communicator and bytes; each MPI_Start/MPI_Startall of it numbers a new
 * instance on the communicator and puts it in the outstanding table. Wait and test calls look
 * at their requests before and after the real call: an outstanding request completed then if
 * the call set it to MPI_REQUEST_NULL or says it completed (persistent requests stay valid).
 * Nothing is done in wait/test calls while no instance is outstanding. */
#ifndef WRAPPERS_NBREQS_H
#define WRAPPERS_NBREQS_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <noisetool/common.h>

#define NT_SNAP_MAX 64 /* tracked requests of one wait/test call kept on the stack */

struct nt_site;

/* The tracked requests of one wait/test call, taken before it: the first NT_SNAP_MAX here; any
 * further ones are marked in the table with this call's token and their position (a slow path:
 * the table is scanned after the call), so that a call of any length loses no completion. */
struct nt_reqsnap {
	int n;
	int more;       /* tracked requests marked in the table beyond the first NT_SNAP_MAX */
	uint64_t token; /* this call's mark */
	MPI_Request h[NT_SNAP_MAX];
	int idx[NT_SNAP_MAX]; /* position in the caller's array */
};

/* What a wait or test call reports as completed, besides the requests it set to
 * MPI_REQUEST_NULL: all of its requests, the one at *index, or the *outcount at indices. */
struct nt_done {
	int all;
	const int *index;
	const int *outcount, *indices;
};

/* Entries in the two tables (changed under their lock, read without it: atomic). */
extern int nt_nb_outstanding_;
extern int nt_persistent_;

/* Requests the tables hold: 0 when wait, test and free calls have nothing to look at. */
static inline __attribute__((always_inline)) int nt_requests_tracked(void)
{
	return __atomic_load_n(&nt_nb_outstanding_, __ATOMIC_RELAXED) +
	       __atomic_load_n(&nt_persistent_, __ATOMIC_RELAXED);
}

/* Bytes two tables of n entries take. */
size_t nt_requests_bytes(size_t n);
/* Keep both tables, n entries each, at mem (nt_requests_bytes, zeroed); NULL: none (the tool
 * is off, or its memory was given back). */
void nt_requests_init(void *mem, size_t n);

/* A started instance (request must be a valid, non-null request). */
void nt_nb_track(MPI_Request request, struct nt_site *s, uint64_t t0_cyc, uint64_t comm_id,
		 uint64_t seq, uint64_t phase_cyc, uint64_t bytes);

/* A persistent collective was created: its starts are instances of site s on comm. */
void nt_persistent_add(MPI_Request request, struct nt_site *s, MPI_Comm comm, uint64_t bytes);

/* What MPI_Request_free must know of request's entries before the real call, to forget
 * them, and only them, after it succeeded (another thread may start a request with the same
 * handle in between): their serial numbers in each table, 0 where it has none. */
struct nt_request_ref {
	uint64_t outstanding, persistent;
};
struct nt_request_ref nt_requests_ref(MPI_Request request);

/* After MPI_Request_free of request succeeded: its entries are forgotten in both tables if
 * they are still ref's (its handle may be reused). */
void nt_requests_forget(MPI_Request request, struct nt_request_ref ref);

void nt_wait_snapshot(struct nt_reqsnap *snap, const MPI_Request *reqs, int n);
void nt_wait_complete(const struct nt_reqsnap *snap, const MPI_Request *reqs, uint64_t t1_cyc,
		      int rc, struct nt_done done);
void nt_start_persistent(const MPI_Request *reqs, int n, uint64_t t0_cyc, uint64_t phase_cyc);

/* n is the constant 0 in every wrapper but the wait/test family: then these compile to nothing
 * (not even the snapshot's stack space). */
static inline __attribute__((always_inline)) void
nt_wait_before(struct nt_reqsnap *snap, const MPI_Request *reqs, int n)
{
	if (n <= 0)
		return;
	snap->n = 0;
	snap->more = 0;
	if (reqs && NT_UNLIKELY(__atomic_load_n(&nt_nb_outstanding_, __ATOMIC_RELAXED) > 0))
		nt_wait_snapshot(snap, reqs, n);
}

static inline __attribute__((always_inline)) void
nt_wait_after(const struct nt_reqsnap *snap, const MPI_Request *reqs, int n, uint64_t t1_cyc,
	      int rc, struct nt_done done)
{
	if (n > 0 && NT_UNLIKELY(snap->n > 0 || snap->more > 0))
		nt_wait_complete(snap, reqs, t1_cyc, rc, done);
}

/* After MPI_Start/MPI_Startall (n is the constant 0 elsewhere): the persistent collectives
 * among reqs start an instance each. phase_cyc: the compute phase before the start. */
static inline __attribute__((always_inline)) void
nt_start_after(const MPI_Request *reqs, int n, uint64_t t0_cyc, uint64_t phase_cyc, int rc)
{
	if (n > 0 && rc == MPI_SUCCESS &&
	    NT_UNLIKELY(__atomic_load_n(&nt_persistent_, __ATOMIC_RELAXED) > 0))
		nt_start_persistent(reqs, n, t0_cyc, phase_cyc);
}

/* What the tables lost, as the log counts it: instances (nonblocking starts and persistent
 * starts) not timed because the outstanding table was full, and persistent collectives not
 * registered because theirs was. */
uint64_t nt_requests_untimed(void);
uint64_t nt_requests_unregistered(void);

#endif /* WRAPPERS_NBREQS_H */
