/* Process-wide state of the wrapper library. */
#ifndef WRAPPERS_RUNTIME_H
#define WRAPPERS_RUNTIME_H

#include <stdint.h>

#include <mpi.h>

#include "env.h"

struct nt_runtime {
	struct nt_env env;
	int started;        /* init done, recording possible */
	int threaded;       /* MPI_THREAD_MULTIPLE provided */
	int rank, size;
	MPI_Comm comm;      /* the tool's own duplicate of MPI_COMM_WORLD */
	uint64_t init_cyc, finalize_cyc;
	volatile uintptr_t walk_sink; /* keeps the every-call stack walk from being optimised out */
};

extern struct nt_runtime nt_rt;

#endif /* WRAPPERS_RUNTIME_H */
