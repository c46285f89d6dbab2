/* Per-thread snapshot of what the OS did to a thread: CPU time, run-queue delay, context
 * switches, faults, and PAPI counters when usable. Degrades, never fails hard. */
#ifndef NOISETOOL_PROBE_H
#define NOISETOOL_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nt_probe_level {
	NT_PROBE_TIMING = 0, /* cycle counter only */
	NT_PROBE_OS = 1,     /* + getrusage, schedstat, thread CPU time, PAPI software events */
	NT_PROBE_FULL = 2,   /* + PAPI hardware events (instructions, cycles) where they exist */
};

/* Sources, as bits of nt_probe_sources() and of nt_probe_sample.valid. */
enum nt_probe_source {
	NT_SRC_COUNTER = 1u << 0,    /* cycle counter */
	NT_SRC_RUSAGE = 1u << 1,     /* getrusage(RUSAGE_THREAD) */
	NT_SRC_SCHEDSTAT = 1u << 2,  /* /proc/thread-self/schedstat */
	NT_SRC_THREAD_CPU = 1u << 3, /* clock_gettime(CLOCK_THREAD_CPUTIME_ID) */
	NT_SRC_PAPI_SW = 1u << 4,    /* PAPI perf software events */
	NT_SRC_PAPI_HW = 1u << 5,    /* PAPI hardware events */
};
#define NT_SRC_COUNT 6

/* PAPI event slots; a slot that could not be added reads as 0 and is absent from papi_valid. */
enum nt_probe_papi_event {
	NT_PAPI_CTX_SWITCHES = 0,
	NT_PAPI_MIGRATIONS,
	NT_PAPI_PAGE_FAULTS,
	NT_PAPI_TASK_CLOCK_NS,
	NT_PAPI_INSTRUCTIONS,
	NT_PAPI_CYCLES,
	NT_PAPI_MAX,
};

/* What the probe reads of the OS, the one list its sample, its delta and the delta's
 * computation are made from: X(field, source, what) -- field: the member's name (unit in it),
 * source: the NT_SRC_* bit whose read gives it (a delta holds it only when both samples had
 * it). To read one more thing: an entry here, its read in probe-os.c; a probe window takes it
 * by naming it in noisetool/ntlog.h (NT_LOG_WINDOW_FIELDS, source PROBE). */
#define NT_PROBE_FIELDS(X)                                                                     \
	X(cpu_ns, NT_SRC_THREAD_CPU, "thread CPU time (schedstat run time, else CPU clock)")    \
	X(run_delay_ns, NT_SRC_SCHEDSTAT, "time runnable but waiting for a CPU")               \
	X(run_count, NT_SRC_SCHEDSTAT, "times the thread was put on a CPU")                    \
	X(vol_switches, NT_SRC_RUSAGE, "voluntary context switches (blocked)")                 \
	X(invol_switches, NT_SRC_RUSAGE, "involuntary context switches")                       \
	X(minor_faults, NT_SRC_RUSAGE, "minor page faults")                                    \
	X(major_faults, NT_SRC_RUSAGE, "major page faults")                                    \
	X(sys_ns, NT_SRC_RUSAGE, "system CPU time (page faults, system calls)")

#define NT_PROBE_MEMBER_(field, source, what) uint64_t field;

struct nt_probe_sample {
	uint64_t counter_cyc;
	NT_PROBE_FIELDS(NT_PROBE_MEMBER_)
	uint64_t papi[NT_PAPI_MAX];
	uint32_t valid;         /* NT_SRC_* bits read successfully into this sample */
	uint32_t papi_valid;    /* 1 << NT_PAPI_* for slots that hold a value */
};

/* Difference b - a of two samples of the same thread; fields absent in either are 0. */
struct nt_probe_delta {
	uint64_t wall_cyc;
	NT_PROBE_FIELDS(NT_PROBE_MEMBER_)
	uint64_t papi[NT_PAPI_MAX];
	uint32_t valid;
	uint32_t papi_valid;
};
#undef NT_PROBE_MEMBER_

struct nt_probe_config {
	enum nt_probe_level level;
	bool disable_papi; /* skip PAPI even when built in */
};

/* Counters of the probe's own behaviour, for the report. */
struct nt_probe_stats {
	uint64_t reads;              /* full OS-counter reads done */
	uint64_t failures[NT_SRC_COUNT]; /* failed reads per source bit index */
	double read_cost_ns;         /* one full read, measured at open */
};

struct nt_probe;

/* Open a probe for the calling thread (the schedstat file and PAPI event set are bound to it).
 * cfg may be NULL for defaults (level os). Sources that fail are left out and
 * reported by nt_probe_sources(). Returns 0, -EINVAL on a bad config, -ENOMEM. */
NT_API int nt_probe_open(struct nt_probe **out, const struct nt_probe_config *cfg);

/* Close the probe and release its PAPI event set. NULL is accepted. */
NT_API void nt_probe_close(struct nt_probe *probe);

/* Sources that worked at open (NT_SRC_* bits). */
NT_API uint32_t nt_probe_sources(const struct nt_probe *probe);

/* Name of one source bit, e.g. "schedstat". */
NT_API const char *nt_probe_source_name(uint32_t source_bit);

/* Read every enabled source now. Always fills counter_cyc; a failing source is counted in the
 * stats and left out of sample->valid. Returns 0, or -EINVAL on NULL arguments. */
NT_API int nt_probe_read(struct nt_probe *probe, struct nt_probe_sample *sample);

/* delta = b - a. */
NT_API void nt_probe_delta(const struct nt_probe_sample *a, const struct nt_probe_sample *b,
			   struct nt_probe_delta *delta);

/* The probe's own counters so far (reads done, failures per source, the cost of one read).
 * Does nothing when either argument is NULL. */
NT_API void nt_probe_get_stats(const struct nt_probe *probe, struct nt_probe_stats *stats);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PROBE_H */
