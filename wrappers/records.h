/* Per-instance records of the collective instances that matter (slow, after a long span, or a
 * sample: recpolicy.h decides), in their part of the rank's fixed memory (arena.h); when it is
 * full, records are dropped and counted and the log is marked partial; aggregates go on. */
#ifndef WRAPPERS_RECORDS_H
#define WRAPPERS_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/probe.h>
#include <noisetool-private/live-file.h>

#include "recpolicy.h"
#include "window.h"

struct nt_site;

struct nt_record {
	uint64_t comm_id;
	uint64_t seq;
	uint32_t site;      /* index in the site table */
	uint32_t flags;     /* NT_REC_* (recpolicy.h) */
	uint64_t t0_cyc;    /* entry */
	uint64_t d_cyc;     /* time in the call */
	uint64_t phase_cyc; /* the compute phase before it (since the previous MPI call's exit) */
	uint64_t interval_cyc; /* since the thread's previous blocking collective instance returned */
	uint64_t p2p_cyc;   /* time in other MPI calls within that interval */
	struct nt_window win;
};
/* The size of a record in the arena, which doc/environment.md (NOISETOOL_MEM) and the memory
 * test's count of the records' pages (tests/mpi/test-memory.sh) state: change them with it. */
#define NT_RECORD_BYTES 160 /* checked in records.c */

/* The layout of a record for a live file's readers (noisetool-private/live-file.h): the fields' places. */
void nt_records_live_fields(struct nt_live_field fields[NT_LRF_COUNT]);

/* Keep up to n records at mem (zeroed, not necessarily faulted in). */
void nt_records_init(void *mem, size_t n);
/* Forget the memory (the tool is off, or it is given back). */
void nt_records_fini(void);

/* Keep one record (thread-safe); dropped and counted when the arena is full. */
void nt_records_add(const struct nt_record *r);

size_t nt_records_count(void);

/* Forget the records kept so far (MPI_Pcontrol(2): they belong to the aggregates it resets).
 * Their flags are cleared, so that neither the log nor a live file's reader takes them; with
 * one thread calling MPI (threaded false) their places are reused, else (another thread may be
 * writing one) they stay taken. Losses counted so far stay counted. */
void nt_records_reset(bool threaded);

uint64_t nt_records_dropped(void);
const struct nt_record *nt_records_get(size_t i);

/* At MPI_Init: the rank's first reading of the node's tasks (cpushare.h), which
 * nt_records_instance makes at a grid read when it is due (NULL: none). */
struct nt_cpushare;
void nt_records_first_reading(struct nt_cpushare *c);

/* The recording policy's mechanism at instance in of site s (the instance comm_id, seq; phase:
 * the compute phase before it; p2p_cyc: the thread's other MPI time within its interval, 0
 * when unknown), on the calling thread: what nt_recpolicy_at_instance() decides, done -- the
 * site's thresholds refreshed, the probe window closed at the instance's exit, a record kept.
 * Only when nt_recpolicy_may_act(). */
void nt_records_instance(struct nt_site *s, uint64_t comm_id, uint64_t seq,
			 const struct nt_rec_instance *in, uint64_t phase_cyc, uint64_t p2p_cyc);

/* Records not kept because their communicator has no id (no other member can name them). */
uint64_t nt_records_unknown_comm(void);

/* Probe windows for the calling thread (the one that called MPI_Init) from now_cyc on, at
 * level (none at NT_PROBE_TIMING, or when the probe cannot open). */
void nt_records_windows_open(enum nt_probe_level level, uint64_t now_cyc);

#endif /* WRAPPERS_RECORDS_H */
