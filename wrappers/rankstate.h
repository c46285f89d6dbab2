/* The rank's state in the tool: its settings, the tool's own communicator, the log's name,
 * the clock's points at init and finalize, the job's identity. Kept by the life cycle
 * (runtime.c), read by the writers of the log and the summary (logwrite.c, summary.c). */
#ifndef WRAPPERS_RANKSTATE_H
#define WRAPPERS_RANKSTATE_H

#include <stdint.h>

#include <mpi.h>

#include "clocksync.h"
#include "cpushare.h"
#include "env.h"
#include "jobinfo.h"

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
	struct nt_cpushare cpus;      /* its CPUs over the job */
};

#endif /* WRAPPERS_RANKSTATE_H */
