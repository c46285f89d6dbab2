/* Writing the job log at MPI_Finalize: every rank measures its block, offsets come from an
 * exclusive scan, every rank streams its block to its offset a chunk at a time, then rank 0
 * links the temporary file to a name that did not exist (never overwriting). */
#ifndef WRAPPERS_LOGWRITE_H
#define WRAPPERS_LOGWRITE_H

#include <stddef.h>
#include <stdint.h>

#include <noisetool/loss.h>

#include "runtime.h"

/* This rank's losses so far by kind (enum nt_loss), as its log block counts them. */
void nt_logwrite_losses(uint64_t lost[NT_LOSS_COUNT]);

/* Collective over rt->comm. On success rank 0 has the path in path (others get it too).
 * Returns 0 or -errno; on failure nothing is left behind. */
int nt_logwrite(const struct nt_runtime *rt, char *path, size_t size);

#endif /* WRAPPERS_LOGWRITE_H */
