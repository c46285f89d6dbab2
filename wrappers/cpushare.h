/* The rank's CPUs over the job (the log's version-6 and -7 rank fields): its thread's affinity
 * at MPI_Init, and from MPI_Init to MPI_Finalize its process's CPU time, its thread's run delay
 * (runnable, waiting for a CPU) and the busy and steal time of its CPUs, from which the report
 * tells the share of them that other tasks took (doc/attribution.md, "Who shares the CPUs"),
 * and which other processes those were. */
#ifndef WRAPPERS_CPUSHARE_H
#define WRAPPERS_CPUSHARE_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include <noisetool-private/irqlines.h>
#include <noisetool-private/tasks.h>

#define NT_CPUSHARE_UNKNOWN UINT64_MAX /* a time that could not be read (NT_LOG_UNKNOWN) */
#define NT_CPUSHARE_IRQ_LINES 160 /* /proc/interrupts lines followed (64 bytes each) */
#define NT_CPUSHARE_SOFTIRQS 16   /* /proc/softirqs kinds (10 in Linux 6) */
#define NT_CPUSHARE_IRQ_TOP 6     /* NT_LOG_IRQS_MAX */

struct nt_cpushare {
	char list[4096];      /* the CPU list ("0-3,8"; "" when the affinity is unknown) */
	int cpus[CPU_SETSIZE]; /* the same CPUs, ascending */
	int ncpus;
	/* At MPI_Init (nt_cpushare_begin), then over the job (nt_cpushare_end); each
	 * NT_CPUSHARE_UNKNOWN where a read failed. */
	uint64_t cpu_ns, run_delay_ns, busy_ns, steal_ns;
	/* What else ran on its CPUs over the job (noisetool-private/tasks.h): the node's threads'
	 * run times at MPI_Init (at most NT_CPUSHARE_THREADS, malloc'd; freed at MPI_Finalize),
	 * then the busiest other processes there. */
	struct nt_task_time *threads;
	size_t nthreads, threads_left_out;
	bool others_known;
	bool others_skipped; /* a second walk would have taken the rank's reads past their budget */
	struct nt_task_top others;
	uint64_t scan_ns[2]; /* what reading /proc cost at each end (the thread's CPU time) */
	uint64_t begin_ns;   /* when nt_cpushare_begin ran (monotonic) */
	/* The interrupts and softirqs on its CPUs (noisetool-private/irqlines.h): each line's
	 * count at MPI_Init, then over the job the lines with most counts. */
	struct nt_irq_count irq0[NT_CPUSHARE_IRQ_LINES], soft0[NT_CPUSHARE_SOFTIRQS];
	size_t nirq0, nsoft0;
	bool irqs_known;
	uint64_t irq_count, softirq_count;
	size_t nirq_top;
	struct nt_cpushare_irq {
		struct nt_irq_count c;
		bool soft; /* a softirq kind, else an interrupt line */
	} irq_top[NT_CPUSHARE_IRQ_TOP];
};

/* Threads a rank follows at most: 16 bytes each, 64 KiB (past the arena: NT_PAST_ARENA_KIB). */
#define NT_CPUSHARE_THREADS 4096

/* At MPI_Init, on the thread that calls it: the affinity and the first readings; with
 * walk_tasks (the probe levels os and full) the node's threads' run times among them (64 KiB at
 * most, kept until nt_cpushare_end). */
void nt_cpushare_begin(struct nt_cpushare *c, bool walk_tasks);

/* At MPI_Finalize, on the same thread, before the job's end is taken (so that the readings'
 * span lies within the rank's wall time): the readings become the job's differences. */
void nt_cpushare_end(struct nt_cpushare *c);

/* After it: the threads' growth on the rank's CPUs, the other processes there (the memory
 * nt_cpushare_begin took is freed), and the interrupts and softirqs counted there. The threads
 * are read again only when that, with the probe windows' reads so far (probe_ns) and the first
 * reading, stays within 1 % of the rank's wall time; else others_skipped. */
void nt_cpushare_others(struct nt_cpushare *c, uint64_t probe_ns);

#endif /* WRAPPERS_CPUSHARE_H */
