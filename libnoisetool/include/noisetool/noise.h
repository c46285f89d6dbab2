/* A node's noise signature as measured by the detour loop, FTQ or FWQ on one or more CPUs,
 * and its writers: the JSON document (doc/detour-json.md), the human table and the TSV trace. */
#ifndef NOISETOOL_NOISE_H
#define NOISETOOL_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <noisetool/clock.h>
#include <noisetool/common.h>
#include <noisetool/detour.h>
#include <noisetool/signature.h>
#include <noisetool/sysinfo.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What else ran on one CPU while it was measured, from /proc read before and after the run
 * (doc/noisetool.md, "What ran meanwhile"): the other tasks whose CPU time grew there, and the
 * interrupt lines and softirq kinds that fired there. */
#define NT_MEANWHILE_TOP 6

enum nt_task_kind {
	NT_TASK_PROCESS,    /* a process of this user (or any process, read as root) */
	NT_TASK_KERNEL,     /* a kernel thread (PF_KTHREAD) */
	NT_TASK_OTHER_USER, /* another user's process */
};

/* One process's CPU time on the CPU (its threads whose last CPU it was, summed). */
struct nt_task_use {
	int pid;
	enum nt_task_kind kind;
	uint64_t run_ns;
	char comm[16]; /* the name of its busiest thread there */
};

/* One interrupt line ("LOC", "36") or softirq kind ("TIMER") and what it counted. */
struct nt_count_use {
	uint64_t count;
	char name[16];
	char desc[40]; /* "Local timer interrupts", the device of a numbered line ("virtio1-req.0") */
};

/* The other processes that ran on some CPUs: the busiest few, and all of them summed. */
struct nt_task_top {
	uint64_t run_ns; /* every other process's time there */
	size_t count;    /* processes with time there */
	size_t n;        /* kept, most time first */
	struct nt_task_use tasks[NT_MEANWHILE_TOP];
};

struct nt_cpu_meanwhile {
	bool known;          /* read: the rest is meaningful */
	uint64_t elapsed_ns; /* between the two reads */
	struct nt_task_top others;
	uint64_t irq_count; /* every line's count there (/proc/interrupts) */
	size_t nirqs;       /* kept, most counts first */
	struct nt_count_use irqs[NT_MEANWHILE_TOP];
	uint64_t softirq_count; /* /proc/softirqs */
	size_t nsoftirqs;
	struct nt_count_use softirqs[NT_MEANWHILE_TOP];
};

/* The interrupt line or softirq kind of m that fired at hz on its CPU (within 3 %), the one
 * with most counts if several; NULL when none did or m is not known. */
NT_API const struct nt_count_use *nt_meanwhile_rate_match(const struct nt_cpu_meanwhile *m,
							   double hz);

/* "process", "kernel thread", "another user's". */
NT_API const char *nt_task_kind_name(enum nt_task_kind kind);

/* One CPU's measurement, analysed. */
struct nt_cpu_noise {
	int cpu;                 /* requested CPU (-1: not pinned) */
	double t_min_ns;         /* detour: undisturbed iteration; FTQ: ns per operation; FWQ: fastest sample */
	double t_min_raw_ns;     /* detour: the plain minimum gap (may be a counter artefact) */
	uint64_t elapsed_ns;
	uint64_t start_offset_ns; /* this CPU's time axis (detour starts, phases) begins this long
				   * after the earliest CPU's of the same run (0: it is the earliest) */
	uint64_t iterations;     /* detour loop iterations, or FTQ/FWQ samples */
	size_t dropped;          /* detours not kept (array full) */
	bool classified;         /* preempted counts are meaningful */
	struct nt_run_os os;     /* where it ran, run delay (FTQ too), steal */
	uint64_t quantum_ns;     /* FTQ/FWQ only */
	uint64_t best;           /* FTQ: most ops per quantum; FWQ: fastest sample ns */
	struct nt_detour_stats stats;
	struct nt_signature sig;
	const struct nt_detour *detours; /* borrowed, for the trace */
	size_t ndetours;
	struct nt_cpu_meanwhile meanwhile; /* what else ran there (known: false when not read) */
	/* detour: the softirq kinds read after each detour (n = 0: not read), the reads and
	 * their time (nt_detour_result) */
	struct nt_softirq_kinds softirqs;
	uint64_t softirq_reads;
	uint64_t softirq_read_ns;
};

struct nt_node_noise {
	const char *method;      /* "detour", "ftq" or "fwq" */
	double seconds;
	uint64_t threshold_ns;
	struct nt_sysinfo sys;
	struct nt_clock_info clock;
	size_t ncpus;
	struct nt_cpu_noise *cpus;
	bool with_detours;       /* the JSON also lists each CPU's kept detours ("detours") */
};

/* Fill the analysis (stats, signature) of c from c->detours / c->elapsed_ns. 0 or -errno. */
NT_API int nt_cpu_noise_analyze(struct nt_cpu_noise *c);

/* The JSON document; with r->with_detours also every kept detour of each CPU (the time series
 * the --html page draws). Returns 0, -EINVAL (f or r NULL), or -EIO when writing failed. */
NT_API int nt_node_noise_write_json(FILE *f, const struct nt_node_noise *r);

/* The human table. Returns 0, or -EIO. */
NT_API int nt_node_noise_write_text(FILE *f, const struct nt_node_noise *r);

/* Netgauge selfish / LogGOPSim noise trace: "start_ns\tduration_ns\n" per detour. 0 or -EIO. */
NT_API int nt_trace_write(FILE *f, const struct nt_detour *d, size_t n);

/* The same after a first line "# elapsed_ns N", the run's length (none when elapsed_ns is 0),
 * so that a replay loops at the run's length. 0 or -EIO. */
NT_API int nt_trace_write_run(FILE *f, const struct nt_detour *d, size_t n, uint64_t elapsed_ns);

/* Read a trace written by nt_trace_write (blank lines and '#' comments are skipped; any other
 * malformed line is an error naming its line number in err, as is a start past 2^56 ns or a
 * detour longer than an hour). *out is malloc'd. Returns 0, -EINVAL (malformed), -ENOMEM,
 * -EIO. */
NT_API int nt_trace_read(FILE *f, struct nt_detour **out, size_t *n, char *err, size_t errsz);

/* The same, also the run's length from a "# elapsed_ns N" comment line into *elapsed_ns (0 when
 * the trace has none, as traces of old; N past 2^56 ns is ignored); elapsed_ns may be NULL. */
NT_API int nt_trace_read_run(FILE *f, struct nt_detour **out, size_t *n, uint64_t *elapsed_ns,
			     char *err, size_t errsz);

/* A trace's time axis: the run's length, and how long after the earliest CPU of the same run
 * this CPU's axis starts (a multi-CPU measurement; 0 for one CPU or when not known). */
struct nt_trace_axis {
	uint64_t elapsed_ns, start_offset_ns;
};

/* nt_trace_write_run() with "# start_offset_ns N" after the length when N > 0. */
NT_API int nt_trace_write_axis(FILE *f, const struct nt_detour *d, size_t n,
			       const struct nt_trace_axis *axis);

/* nt_trace_read_run() that also reads "# start_offset_ns N" (0 when absent) into *axis. */
NT_API int nt_trace_read_axis(FILE *f, struct nt_detour **out, size_t *n,
			      struct nt_trace_axis *axis, char *err, size_t errsz);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_NOISE_H */
