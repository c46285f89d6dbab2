/* Communicators: ids that agree across their members, and the sequence number of each
 * collective instance on them, so that (comm id, seq) names one instance on every member.
 * A communicator gets its id lazily, at its first collective: every member is then inside the
 * same collective's wrapper, so they can agree with two small allreduces on it. */
#ifndef WRAPPERS_COMMS_H
#define WRAPPERS_COMMS_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#define NT_COMM_ID_UNKNOWN UINT64_MAX /* table full, or an intercommunicator */

struct nt_comm {
	MPI_Comm handle;
	bool used;
	uint64_t id;
	uint64_t seq; /* collective instances so far */
	/* NOISETOOL_WAIT: every member starts its collectives the same way (a blocking and a
	 * nonblocking collective never match), as agreed at the last vote */
	bool wait_nb;
	uint64_t vote_at_seq; /* the instance at which the next vote is due */
	uint32_t vote_every;  /* instances between votes: 16, doubled while the vote stays the
			       * same, up to 1024 */
};

/* Reserve the table and register MPI_COMM_WORLD (id 0) and MPI_COMM_SELF. 0 or -ENOMEM. */
int nt_comms_init(int world_rank, bool threaded);

/* The state of comm, agreeing on its id first if it is new (collective over comm: call only
 * from a collective's wrapper, after the real call). NULL when the table is full. */
struct nt_comm *nt_comms_get(MPI_Comm comm);

/* The state of a communicator already known, or NULL (not collective). */
struct nt_comm *nt_comms_find(MPI_Comm comm);

extern bool nt_comms_threaded_;

/* Next sequence number on c (atomic when several threads may use MPI). */
static inline __attribute__((always_inline)) uint64_t nt_comms_next_seq(struct nt_comm *c)
{
	if (__builtin_expect(nt_comms_threaded_, 0))
		return __atomic_fetch_add(&c->seq, 1, __ATOMIC_RELAXED);
	return c->seq++;
}

/* comm is about to be freed: forget it (its handle may be reused). */
void nt_comms_forget(MPI_Comm comm);

#endif /* WRAPPERS_COMMS_H */
