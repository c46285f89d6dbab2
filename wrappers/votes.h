/* The adaptive-wait votes (NOISETOOL_WAIT): an OR over a communicator's members that every
 * member learns alike, carried on the tool's own communicator -- never on the application's,
 * and without a communicator per application communicator: each communicator takes one of the
 * MPI's context ids, which the application's take too (MPICH 4.0.2: 2,046 for a program).
 *
 * Every communicator with a vote has a slot: MPI_COMM_WORLD slot 0, any other one agreed by its
 * parent's members in its constructor, free on every member (MPI_COMM_WORLD votes by
 * MPI_Iallreduce only where MPI_TAG_UB leaves no slot). Its votes are point-to-point messages on the tool's communicator between the
 * members' world ranks, tagged by slot, kind and parity, so that the votes of two
 * communicators never match each other. Up to DIRECT_MAX members, each member sends its vote
 * to every other at the start: the vote is done when every member has started it, as the
 * nonblocking allreduce on a twin was. Larger ones send along a binary tree, whose inner
 * members pass the votes on whenever they are in the tool (at their vote points, in any vote's
 * wait), at the latest at their next vote point: a vote there can wait for every member to
 * reach it, as a collective that synchronizes would. */
#ifndef WRAPPERS_VOTES_H
#define WRAPPERS_VOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/* What a vote's wait does between two tests: the wait loop's pause (mpiwait.c sets it to
 * nt_mpiwait_pause while its waits run, so that the votes need not know the waits: mpiwait
 * uses the communicators, which use the votes); NULL: spin. */
extern void (*nt_votes_pause_)(void);

/* Bytes n vote states take. */
size_t nt_votes_bytes(size_t n);

/* Keep n vote states at mem (nt_votes_bytes, zeroed). */
void nt_votes_init(void *mem, size_t n);

/* Votes from now on, on the tool's own communicator tool (a duplicate of MPI_COMM_WORLD, with
 * MPI_ERRORS_RETURN). Call once at init, on every rank alike. Returns MPI_COMM_WORLD's state,
 * or -1 (no room). */
int nt_votes_enable(MPI_Comm tool);

/* In a blocking constructor collective over parent (whose vote state is pv, >= 0), on every
 * member of parent: agree on a slot for the new communicator child (MPI_COMM_NULL on a rank
 * that is not a member; room: a member can keep its state). Returns the child's vote state, or
 * -1 on every member of child when any of them has no room or no slot is free on all of them;
 * a child of one member has none (its collectives need no vote). Blocking, collective over
 * parent's members, by messages on the tool's communicator. */
int nt_votes_agree(int pv, MPI_Comm parent, MPI_Comm child, bool room);

/* Start vote v on comm (its application communicator) with this rank's mine (0 or 1). The
 * previous vote of v is finished. */
void nt_votes_start(int v, MPI_Comm comm, int mine);

/* Whether v has a vote started and not yet finished by nt_votes_finish. */
bool nt_votes_pending(int v);

/* Pass on what has come for v's vote along its tree (never waits). */
void nt_votes_progress(int v);

/* Wait for v's vote (giving the CPU away, and passing on every other vote meanwhile): the OR of
 * every member's mine, the same on every member; 0 also when an MPI call failed. */
int nt_votes_finish(int v);

/* v's communicator was freed: its last vote finishes in the background (at later votes'
 * waits, at the latest at MPI_Finalize), then the state and its slot are free. Never waits. */
void nt_votes_drop(int v);

/* Finish every vote, dropped ones included (MPI_Finalize, on every rank). */
void nt_votes_finish_all(void);

/* Votes this rank finished at vote points so far: MPI_COMM_WORLD's, the other communicators'
 * sent directly and along a tree (telemetry). */
void nt_votes_counts(uint64_t *world, uint64_t *direct, uint64_t *tree);

#endif /* WRAPPERS_VOTES_H */
