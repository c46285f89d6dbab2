/* This rank's live file (noisetool-private/live-file.h): its arena mapped from NAME.live/rank-R, so that
 * the measurement survives however the job ends; removed once the log is written. */
#ifndef WRAPPERS_LIVE_H
#define WRAPPERS_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include <noisetool/loss.h>
#include <noisetool-private/live-file.h>

/* Map arena_bytes of arena behind a live header from NAME.live/rank-RANK (name: the job's
 * reserved name, nt_logwrite_reserve). Returns the arena (after the header), or NULL with
 * errno set and path_out naming the file (then no file is left). */
void *nt_live_create(const char *name, int rank, int size, size_t arena_bytes, char *path_out,
		     size_t path_size);

/* The place of member in type, as a live file's header describes a field. */
#define NT_LIVE_FIELD(type, member)                                                            \
	(struct nt_live_field)                                                                 \
	{                                                                                      \
		(uint16_t)offsetof(type, member), (uint16_t)sizeof(((type *)0)->member)        \
	}

/* A table in the arena, for the header: where it is (its offset from the arena's start), its
 * slots, a slot's bytes and its fields' places (nt_sites_live_fields, nt_records_live_fields;
 * NT_LSF_COUNT or NT_LRF_COUNT of them). */
struct nt_live_part {
	size_t at, slots, bytes;
	const struct nt_live_field *fields;
};

/* The header's layout and settings once the tables are placed in the arena: the site table,
 * the records, the probe level, the wait mode (enum nt_log_wait_mode), the test calls' sampling
 * (one timed in poll_sample). */
void nt_live_describe(const struct nt_live_part *sites, const struct nt_live_part *records,
		      unsigned level, unsigned wait_mode, unsigned poll_sample);

/* The pool of Python call sites' names (pysite.h), when it lies in the live file, and the
 * places of a site's name and line in the pool (struct nt_site). */
void nt_live_python_names(const void *mem, size_t bytes, struct nt_live_field name,
			  struct nt_live_field line);

/* The job as this rank sees it (jobinfo.h), before nt_live_clock makes the file readable. */
void nt_live_job(const char *command, const char *mpi_library, const char *tool_version,
		 const struct nt_jobinfo_batch *batch);

/* After the clocks are synchronized: the rank's MPI_Init on its counter and on global time. */
void nt_live_clock(uint64_t init_cyc, int64_t init_global_ns, uint64_t clock_error_ns);

/* A new call site (return address ret, and the stack seen at its first call): its modules go
 * into the header (under the sites' insert lock). */
void nt_live_site(uintptr_t ret, const uintptr_t *stack, int depth);

/* n more losses of kind, into the header (any thread). */
void nt_live_lost(enum nt_loss kind, uint64_t n);

/* The latest activity (rate-limited callers: records, probe windows). */
void nt_live_beat(uint64_t cyc);

/* The rank calls MPI_Abort(code). */
void nt_live_abort(int code);

/* MPI_Finalize has begun writing the log (from the arena, which it leaves as it is). */
void nt_live_finalizing(void);

/* MPI_Finalize could not write the log (error: an errno): the file keeps the measurement, and
 * says why (the report of the live files names the ranks and the error). */
void nt_live_log_failed(int error);

/* Unmap; with remove, delete the file (the log holds everything now, on the disk). */
void nt_live_close(int remove);

#endif /* WRAPPERS_LIVE_H */
