/* The wrapper library's life cycle: MPI_Init starts it, MPI_Finalize writes the log and the
 * summary, MPI_Abort and MPI_Pcontrol steer it; the frees of handles. */
#ifndef WRAPPERS_RUNTIME_H
#define WRAPPERS_RUNTIME_H

#include <stdint.h>

#include <mpi.h>

#include "comms.h"
#include "nbreqs.h"
#include "rankstate.h"

extern struct nt_runtime nt_rt;

/* The tool's part of the calls written by hand, shared by the C wrappers (runtime.c) and the
 * Fortran ones (fortran.c): before the MPI's init and after it (its return code, the thread
 * level provided); before its finalize; MPI_Abort, MPI_Pcontrol. */
void nt_init_begin(void);
void nt_init_end(int rc, int provided);
void nt_finalize_begin(void);
void nt_abort_begin(int code);
void nt_pcontrol(int level);

/* The frees of handles: what the tool must know before the real call (..._freeing), and what it
 * does after it (..._freed, given the call's return code): it forgets the handle only when MPI
 * freed it. Communicators: MPI_Comm_free and MPI_Comm_disconnect. */
void nt_type_freed(MPI_Datatype type, int rc);
struct nt_request_ref nt_request_freeing(MPI_Request request);
void nt_request_freed(MPI_Request request, struct nt_request_ref ref, int rc);
struct nt_comm_ref nt_comm_freeing(MPI_Comm comm);
void nt_comm_freed(MPI_Comm comm, struct nt_comm_ref ref, int rc);

#endif /* WRAPPERS_RUNTIME_H */
