/* The rank's CPUs over the job (the log's version-6 rank fields): its thread's affinity at
 * MPI_Init, and from MPI_Init to MPI_Finalize its process's CPU time, its thread's run delay
 * (runnable, waiting for a CPU) and the busy and steal time of its CPUs, from which the report
 * tells the share of them that other tasks took (doc/attribution.md, "Who shares the CPUs"). */
#ifndef WRAPPERS_CPUSHARE_H
#define WRAPPERS_CPUSHARE_H

#include <sched.h>
#include <stdint.h>

#define NT_CPUSHARE_UNKNOWN UINT64_MAX /* a time that could not be read (NT_LOG_UNKNOWN) */

struct nt_cpushare {
	char list[4096];      /* the CPU list ("0-3,8"; "" when the affinity is unknown) */
	int cpus[CPU_SETSIZE]; /* the same CPUs, ascending */
	int ncpus;
	/* At MPI_Init (nt_cpushare_begin), then over the job (nt_cpushare_end); each
	 * NT_CPUSHARE_UNKNOWN where a read failed. */
	uint64_t cpu_ns, run_delay_ns, busy_ns, steal_ns;
};

/* At MPI_Init, on the thread that calls it: the affinity and the first readings. Takes no
 * memory (4 KiB of stack for a moment). */
void nt_cpushare_begin(struct nt_cpushare *c);

/* At MPI_Finalize, on the same thread: the readings become the job's differences. */
void nt_cpushare_end(struct nt_cpushare *c);

#endif /* WRAPPERS_CPUSHARE_H */
