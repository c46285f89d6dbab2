/* Communicators: ids that agree across their members, and the sequence number of each
 * collective instance on them, so that (comm id, seq) names one instance on every member.
 *
 * Ids are derived, never agreed by messages: a communicator's id is a hash of where it came
 * from, which every member knows alike. For a constructor that is collective over its parent
 * (dup, split, create, cart/graph, intercomm merge, ...): the parent's id, the number of
 * constructors called on the parent before it (collectives on one communicator come in the same
 * order on every member) and the hash of its members' world ranks (children of one split differ
 * there). For constructors collective over a group only (create_group, intercomm create, the
 * MPI-4 from_group ones): the members, the tag, and how many such communicators this rank made
 * with the same members and tag before. A communicator the tool did not see being made (spawn,
 * connect, a constructor it does not wrap) has no id: NT_COMM_ID_UNKNOWN. */
#ifndef WRAPPERS_COMMS_H
#define WRAPPERS_COMMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#define NT_COMM_ID_UNKNOWN UINT64_MAX /* not seen being made, or a table full */

struct nt_comm {
	MPI_Comm handle;
	bool used;
	uint64_t id;
	uint64_t seq;      /* collective instances so far */
	uint64_t children; /* constructors called on it so far (collective over it) */
	int vote;          /* its adaptive-wait vote state (votes.h), or -1 */
	/* NOISETOOL_WAIT: every member starts its collectives the same way (a blocking and a
	 * nonblocking collective never match), as agreed at the vote before the last one */
	bool wait_nb;
	uint64_t vote_at_seq; /* the instance at which the next vote is due */
	uint32_t vote_every;  /* instances between votes: 16, doubled while the vote stays the
			       * same, up to 1024 */
	uint64_t token;       /* this registration, unique in the process (0: a predefined
			       * communicator, never forgotten) */
};

/* What a free or disconnect must know of comm's entry before the real call, to forget that
 * entry, and only that one, after the call succeeded (another thread may register a new
 * communicator under the same handle in between). token 0: nothing to forget. */
struct nt_comm_ref {
	uint64_t token;
	int vote;
};

/* Bytes a table of n communicators (and their vote states) takes. */
size_t nt_comms_bytes(size_t n);

/* Keep a table of n communicators at mem (nt_comms_bytes, zeroed) and register MPI_COMM_WORLD
 * (id 0) and MPI_COMM_SELF. A communicator that finds the table full has no id: its records
 * are counted as lost, the rest of its calls as usual. */
void nt_comms_init(void *mem, size_t n, int world_rank, bool threaded);

/* Give the table back (the tool is off: the ranks did not agree). */
void nt_comms_fini(void);

/* Adaptive-wait votes (NOISETOOL_WAIT) for MPI_COMM_WORLD and the communicators made from now
 * on, carried on tool, the tool's own duplicate of MPI_COMM_WORLD (votes.h). Call once at
 * init, on every rank alike. */
void nt_comms_enable_votes(MPI_Comm tool);

/* The state of comm: known, or registered now without an id (one the tool did not see being
 * made). NULL when the table is full. Never communicates. */
struct nt_comm *nt_comms_get(MPI_Comm comm);

/* The state of a communicator already known, or NULL. */
struct nt_comm *nt_comms_find(MPI_Comm comm);

/* A constructor (function id fn, enum nt_fn) returned rc; refused, it made nothing and
 * nothing is done. parent: its communicator argument (MPI_COMM_NULL when it has none);
 * *newcomm: what it made (may be MPI_COMM_NULL on ranks that are not members); tag and
 * stringtag: its tag arguments (0 and NULL when it has none). Registers the new communicator
 * with its derived id. Collective only where the constructor itself is collective over the
 * parent and blocking, and only with votes enabled (the members of the parent agree on the
 * new communicator's vote slot, votes.h). */
void nt_comms_created(unsigned fn, MPI_Comm parent, const MPI_Comm *newcomm, int tag,
		      const char *stringtag, int rc);

/* Every pending vote finishes (at MPI_Finalize, on every rank). */
void nt_comms_votes_finish(void);

extern bool nt_comms_threaded_;

/* Next sequence number on c (atomic when several threads may use MPI). */
static inline __attribute__((always_inline)) uint64_t nt_comms_next_seq(struct nt_comm *c)
{
	if (__builtin_expect(nt_comms_threaded_, 0))
		return __atomic_fetch_add(&c->seq, 1, __ATOMIC_RELAXED);
	return c->seq++;
}

/* Before MPI_Comm_free or MPI_Comm_disconnect of comm: its entry's reference ({0, -1} when
 * the tool does not know it, or it is predefined). */
struct nt_comm_ref nt_comms_ref(MPI_Comm comm);

/* After MPI_Comm_free or MPI_Comm_disconnect of comm succeeded (collective over it): its entry
 * is forgotten if it is still ref's (its handle may be reused), and its vote state is dropped
 * (its pending vote finishes later, never here). Never called for a refused free: the
 * communicator lives on. */
void nt_comms_forget(MPI_Comm comm, struct nt_comm_ref ref);

#endif /* WRAPPERS_COMMS_H */
