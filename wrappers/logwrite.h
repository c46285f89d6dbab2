/* Writing the job log at MPI_Finalize: every rank measures its block, offsets come from an
 * exclusive scan, every rank streams its block to its offset a chunk at a time, then rank 0
 * links the temporary file to a name that did not exist (never overwriting). */
#ifndef WRAPPERS_LOGWRITE_H
#define WRAPPERS_LOGWRITE_H

#include <stddef.h>
#include <stdint.h>

#include <noisetool/loss.h>

#include "rankstate.h"

/* This rank's losses so far by kind (enum nt_loss), as its log block counts them. */
void nt_logwrite_losses(uint64_t lost[NT_LOSS_COUNT]);

/* The longest reserved name (a path without its extension). */
#define NT_LOG_NAME_MAX 4096

/* Rank 0 at MPI_Init: reserve the job's name in out_dir, before any work: out_dir must be a
 * writable directory. name: OUT/PROG-YYYYmmdd-HHMMSS-ID[-N] without an extension, where ID is
 * job (NOISETOOL_JOB, which noisetool run sets) or rank 0's host and pid; the job's log is
 * NAME.ntlog, and NAME.live, a directory created here, holds the name while the job runs
 * (mkdir fails when it exists: two jobs in one directory never take one name). 0 or -errno:
 * -ENOENT, -ENOTDIR, -EACCES... for out_dir. */
int nt_logwrite_reserve(const char *out_dir, const char *job, char *name, size_t size);

/* Rank 0: give the name back (remove NAME.live). */
void nt_logwrite_unreserve(const char *name);

/* Collective over rt->comm: the log, NAME.ntlog with rt->log_name. On success every rank has
 * its path in path. Returns 0 or -errno; on failure nothing is left behind. */
int nt_logwrite(const struct nt_runtime *rt, char *path, size_t size);

#endif /* WRAPPERS_LOGWRITE_H */
