/* Writing the job log at MPI_Finalize: every rank encodes its block, offsets come from an
 * exclusive scan, one collective MPI-IO write, then rank 0 renames the temporary file to a
 * name that did not exist (never overwriting). */
#ifndef WRAPPERS_LOGWRITE_H
#define WRAPPERS_LOGWRITE_H

#include <stddef.h>

#include "runtime.h"

/* Collective over rt->comm. On success rank 0 has the path in path (others get it too).
 * Returns 0 or -errno; on failure nothing is left behind. */
int nt_logwrite(const struct nt_runtime *rt, char *path, size_t size);

#endif /* WRAPPERS_LOGWRITE_H */
