/* The summary rank 0 prints at MPI_Finalize: app and MPI time per rank, top call sites with
 * their spread across ranks. Merged by reductions over fixed-size arrays, never by sending
 * every rank's records to rank 0. */
#ifndef WRAPPERS_SUMMARY_H
#define WRAPPERS_SUMMARY_H

#include "rankstate.h"

/* Collective over rt->comm. Prints on rank 0's stderr. */
void nt_summary_write(const struct nt_runtime *rt);

#endif /* WRAPPERS_SUMMARY_H */
