/* The rank's CPUs over the job (the log's version-6, -7 and -9 rank fields): its thread's
 * affinity at MPI_Init, and from MPI_Init to MPI_Finalize its process's CPU time, its thread's
 * run delay (runnable, waiting for a CPU) and the busy and steal time of its CPUs, from which
 * the report tells the share of them that other tasks took (doc/attribution.md, "Who shares
 * the CPUs"); and from a first reading inside the job to MPI_Finalize which other processes
 * those were, and the interrupts and softirqs there. */
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
	 * run times, read inside the job (nt_cpushare_step; at most NT_CPUSHARE_THREADS, malloc'd
	 * at MPI_Init, freed at MPI_Finalize), then the busiest other processes there. */
	struct nt_task_time *threads;
	size_t nthreads, threads_left_out;
	enum nt_cpushare_reading {
		NT_CPUSHARE_NOT_READ, /* no first reading (the level timing, no memory, a failure) */
		NT_CPUSHARE_PENDING,  /* nt_cpushare_step makes it when it is due */
		NT_CPUSHARE_READ,     /* made */
	} reading;
	uint64_t first_reading_est_ns; /* its estimated cost (from the node's thread count) */
	uint64_t first_reading_ns;     /* when it was made, after nt_cpushare_synced */
	uint64_t first_run_delay_ns;   /* the thread's run delay then */
	uint64_t others_run_delay_ns;  /* its run delay from then to nt_cpushare_end (the span the
					* other tasks cover; NT_CPUSHARE_UNKNOWN without it) */
	bool others_known;
	/* The threads were not read at both ends: the first reading was not complete at
	 * MPI_Finalize, or a second would have taken the rank's reads past their budget. */
	bool others_skipped;
	struct nt_task_top others;
	uint64_t scan_ns[2]; /* what reading /proc cost: the first reading, and at MPI_Finalize
			      * (the thread's CPU time) */
	uint64_t threads_scan_ns, irqs_scan_ns; /* the first reading's cost, by part */
	uint64_t synced_ns;  /* when nt_cpushare_synced ran and the readings began (monotonic) */
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

/* At MPI_Init, on the thread that calls it: the affinity; with
 * walk_tasks (the probe levels os and full) the first reading of the node's threads is pending:
 * nt_cpushare_step maps their table (64 KiB at most, kept until nt_cpushare_others) and fills
 * it. */
void nt_cpushare_begin(struct nt_cpushare *c, bool walk_tasks);

/* At the end of MPI_Init, just after a collective of the tool's: the ranks have left it
 * about together, so that the time from here is about the same on each (the first reading is
 * due by it). The first readings of the CPU time, run delay and the CPUs' busy and steal time:
 * from here, after the clock sync that starts the rank's wall time, so that their span lies
 * within it (read before the sync, 4 ranks on 2 CPUs beside a hog on each once had their CPU
 * busy 92 ms longer than their wall time). */
void nt_cpushare_synced(struct nt_cpushare *c);

/* On the same thread, at a probe read on the grid at a blocking collective instance numbered
 * seq on its communicator: the first reading of the interrupts, softirqs and threads on the
 * node, when it is due. It is due once the job has run long enough that both readings, at
 * their estimated cost, fit half the read budget of twice its time so far (about 0.5 s for 111
 * threads here), at the next instance whose seq + 1 is a multiple of 2^k, where 2^k instances
 * last about NT_CPUSHARE_DUE_NS (the instances so far over the time so far). The members of a
 * communicator read on a common grid and have run about as long since nt_cpushare_synced at
 * an instance, so each makes its reading at the same one and none waits for another's. Not at
 * MPI_Init: a shorter job never pays for a reading it would not have the budget to read again.
 * Returns what it took in counter cycles (0 when it made none): the recording policy counts it
 * with the probe reads (nt_recpolicy_spent), which pay it off from what their budget leaves
 * (at least a quarter of it) at the grid reads to come. */
uint64_t nt_cpushare_step(struct nt_cpushare *c, uint64_t seq);

/* The time between the instances at which the first reading may be made: the members' clocks
 * since nt_cpushare_synced differ by up to a millisecond or so (as they left it, and as they
 * leave an instance), and at an instance where one found it due and another not, the one that
 * read made the others wait for it (2 ms in the next allreduce, "unexplained"); 64 instances
 * apart, ranks 10 us of work apart disagreed once in four jobs. */
#define NT_CPUSHARE_DUE_NS 64000000

/* The read budget (NT_REC_READ_BUDGET): the probe windows' reads and the readings of /proc
 * together take at most 1 % of the rank's wall time. */
#define NT_CPUSHARE_BUDGET 0.01

/* The second reading of the threads costs more than the first (it reads the stat of each
 * thread whose run time grew): 1.1-1.2 times here; counted at 1.5 times. The interrupts and
 * softirqs cost the same at both ends. */
#define NT_CPUSHARE_SECOND_COST 1.5

/* How long after nt_cpushare_synced a first reading estimated at est_ns may be made: when
 * both readings fit half the budget of twice the time so far. */
static inline double nt_cpushare_due_after_ns(uint64_t est_ns)
{
	return (1.0 + NT_CPUSHARE_SECOND_COST) * (double)est_ns / NT_CPUSHARE_BUDGET;
}

/* nt_cpushare_step's rule: whether the first reading, estimated at est_ns, is due at the
 * instance numbered seq, elapsed_ns after nt_cpushare_synced. */
static inline bool nt_cpushare_due(double elapsed_ns, uint64_t seq, uint64_t est_ns)
{
	if (!(elapsed_ns > 0) || elapsed_ns < nt_cpushare_due_after_ns(est_ns))
		return false;
	double every = (double)(seq + 1) * NT_CPUSHARE_DUE_NS / elapsed_ns; /* instances */
	uint64_t step = 1;
	while ((double)step < every && step < (1ull << 62))
		step *= 2;
	return (seq + 1) % step == 0;
}

/* At MPI_Finalize, on the same thread, before the job's end is taken (so that the readings'
 * span lies within the rank's wall time): the readings become the job's differences. */
void nt_cpushare_end(struct nt_cpushare *c);

/* After it: the threads' growth on the rank's CPUs, the other processes there (the memory
 * nt_cpushare_begin took is freed), and the interrupts and softirqs counted there. Each is read
 * again only when its first reading is complete and when reading it, with the probe windows'
 * reads so far (probe_ns) and the first reading, stays within 1 % of the rank's wall time; the
 * threads not read at both ends set others_skipped. */
void nt_cpushare_others(struct nt_cpushare *c, uint64_t probe_ns);

#endif /* WRAPPERS_CPUSHARE_H */
