/* Process-wide state of the wrapper library. */
#ifndef WRAPPERS_RUNTIME_H
#define WRAPPERS_RUNTIME_H

#include <stdint.h>

#include <mpi.h>

#include "clocksync.h"
#include "comms.h"
#include "env.h"
#include "jobinfo.h"
#include "nbreqs.h"

struct nt_runtime {
	struct nt_env env;
	int started;        /* init done, recording possible */
	int threaded;       /* MPI_THREAD_MULTIPLE provided */
	int rank, size;
	MPI_Comm comm;      /* the tool's own duplicate of MPI_COMM_WORLD (when has_comm) */
	int has_comm;
	char log_name[4096];          /* the job's log and live files without their extension,
				       * reserved by rank 0 at init (nt_logwrite_reserve) */
	uint64_t init_cyc, finalize_cyc;
	struct nt_clocksync_point sync_init, sync_fin; /* offsets to rank 0 at init and finalize */
	double origin_ns;             /* rank 0's local clock at its MPI_Init: global time 0 */
	struct nt_clock_params rank0; /* rank 0's clock, for NOISETOOL_TEST_CLOCK's truth */
	int clock_hook;               /* NOISETOOL_TEST_CLOCK is set */
	struct nt_job job;            /* this rank's command line, MPI library, tool version */
};

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
