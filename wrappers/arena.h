/* The rank's fixed memory (NOISETOOL_MEM): one reservation at MPI_Init, split once between the
 * tables that hold what the tool learns, so that nothing the tool keeps grows past it. A part
 * that is full drops and counts what does not fit (the log is then partial, naming it).
 *
 * Pages are not pre-faulted: each is touched first when a table entry on it is first used (a
 * new call site, communicator or request slot, and every 26th record), one minor fault of
 * ~0.25-1 us, charged to the probe window it lands in like any of the application's. Pre-faulting
 * 16 MiB took 5-15 ms of every job's start here, most of a 2-rank job's whole start cost. */
#ifndef WRAPPERS_ARENA_H
#define WRAPPERS_ARENA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The smallest and the largest NOISETOOL_MEM: the smallest holds the merged sites of every
 * wrapped function (a sixth of it) and a hundred call sites. */
#define NT_ARENA_MIN (1ull << 20)
#define NT_ARENA_MAX (4ull << 30)

/* Bytes an entry of each table takes (the plan is pure: the tables give their sizes). */
struct nt_arena_units {
	size_t site;        /* a call site (its slot, its place in the list of sites in use) */
	size_t fixed_sites; /* the merged sites, one per wrapped function */
	size_t comm;        /* a communicator and its vote state */
	size_t request;     /* an entry of a request table (two tables: outstanding, persistent) */
	size_t record;
};

/* How the memory is split. */
struct nt_arena_plan {
	size_t sites;    /* call-site slots: a power of two, up to a quarter of the memory */
	size_t comms;    /* communicator slots: a power of two, up to 1/32 */
	size_t requests; /* slots of each request table: a power of two, both up to 1/16 */
	size_t records;  /* the rest */
	size_t bytes;    /* the parts together (each 64-byte aligned): at most mem */
};

/* Split mem bytes. 0, or -EINVAL when mem is outside NT_ARENA_MIN..NT_ARENA_MAX. */
int nt_arena_plan(uint64_t mem, const struct nt_arena_units *u, struct nt_arena_plan *p);

/* The byte offset of each part in a reservation of the plan: sites, comms, requests (both
 * tables), records. */
struct nt_arena_layout {
	size_t sites, comms, requests, records;
};
void nt_arena_layout(const struct nt_arena_plan *p, const struct nt_arena_units *u,
		     struct nt_arena_layout *l);

#ifdef __cplusplus
}
#endif

#endif /* WRAPPERS_ARENA_H */
