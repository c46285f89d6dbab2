/* The selfish-detour loop (Beckman et al. Fig. 1): a tight counter loop that records every
 * gap above a threshold, on one CPU or on several at once (one pinned thread each). */
#ifndef NOISETOOL_DETOUR_H
#define NOISETOOL_DETOUR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>
#include <noisetool/sysinfo.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_DETOUR_PREEMPTED 1u /* another task ran on the CPU during the detour */
/* /proc/softirqs was read just before and just after the detour: its softirq bits below say
 * which kinds ran on the CPU in between (an interrupt that raised none leaves them clear). */
#define NT_DETOUR_SOFTIRQS_READ 2u
/* Bit NT_DETOUR_SOFTIRQ_SHIFT + k: softirq kind k (nt_detour_result.softirqs.name[k]) ran. */
#define NT_DETOUR_SOFTIRQ_SHIFT 16
#define NT_DETOUR_SOFTIRQ_KINDS 16
#define NT_DETOUR_SOFTIRQ_MASK 0xffff0000u

/* The softirq kinds of /proc/softirqs, in its order ("HI", "TIMER", "NET_TX", "NET_RX", ...). */
struct nt_softirq_kinds {
	unsigned n;
	char name[NT_DETOUR_SOFTIRQ_KINDS][16];
};

/* One detour, in ns from the start of its run. */
struct nt_detour {
	uint64_t start_ns;
	uint64_t duration_ns; /* gap minus t_min: the time taken from the loop */
	uint32_t flags;       /* NT_DETOUR_* */
};

/* Called by the measuring thread about once a second, outside the timed window. */
typedef void (*nt_progress_fn)(void *ctx, int cpu, double elapsed_s, double total_s);

struct nt_detour_config {
	double seconds;         /* run length, > 0 */
	uint64_t threshold_ns;  /* a gap above this is a detour; 0 = default 1000 ns */
	int cpu;                /* CPU to pin to; -1 = stay where the thread is */
	size_t capacity;        /* detours kept; 0 = default (50,000 per second, at least 65,536) */
	bool no_classify;       /* skip the schedstat and /proc/softirqs reads after each detour */
	nt_progress_fn progress;
	void *progress_ctx;
};

/* What one run on one CPU measured. */
struct nt_detour_result {
	int cpu;                  /* requested CPU, or -1 */
	uint64_t t_min_cyc;       /* undisturbed iteration time (see NT_TMIN_HIST below) */
	double t_min_ns;
	uint64_t t_min_raw_cyc;   /* the plain minimum gap, artefacts included */
	uint64_t threshold_ns;
	uint64_t start_cyc;       /* counter value at the loop start: detour start_ns are from here */
	uint64_t elapsed_ns;
	uint64_t iterations;
	size_t count;             /* detours recorded in `detours` */
	size_t dropped;           /* detours seen after the array was full */
	bool classified;          /* NT_DETOUR_PREEMPTED flags are meaningful */
	/* The softirq reads after detours (pinned runs with classification; at most 2 % of the
	 * run's time, beyond which a detour goes unread and its NT_DETOUR_SOFTIRQS_READ clear). */
	struct nt_softirq_kinds softirqs; /* n = 0: not read */
	uint64_t softirq_reads;
	uint64_t softirq_read_ns;   /* their time: not loop time, not detour time */
	struct nt_run_os os;      /* where it ran, run-queue delay and steal over the run */
	struct nt_detour *detours;
};

/* Default threshold: Beckman's 1 µs. */
#define NT_DETOUR_DEFAULT_THRESHOLD_NS 1000u

/* Run the loop on the calling thread (pinned to cfg->cpu when >= 0). Allocates and pre-faults
 * the detour array before the timed loop. Returns 0; -EINVAL on a bad config; -ENOMEM;
 * -errno from pinning (e.g. -EINVAL for a CPU outside the affinity mask). */
NT_API int nt_detour_measure(const struct nt_detour_config *cfg, struct nt_detour_result *res);

/* Run on every CPU of cpus[0..ncpus) at once, one pinned thread each, started together.
 * res must hold ncpus results. cfg->cpu is ignored. Returns 0 or the first error. */
NT_API int nt_detour_measure_cpus(const struct nt_detour_config *cfg, const int *cpus,
				  size_t ncpus, struct nt_detour_result *res);

/* Free the detour array of a result (the struct itself is the caller's). */
NT_API void nt_detour_result_free(struct nt_detour_result *res);

/* t_min is the loop's undisturbed iteration time: the median of a sample of its gaps. Beckman's
 * plain minimum is a counter artefact in this VM: its TSC advances in steps of 26 cycles but
 * 6 % of back-to-back reads split one step into 25 + 1, so the minimum gap is 1 cycle (0.4 ns)
 * while every real iteration takes 26 (10 ns). The plain minimum is kept as t_min_raw. */
#define NT_TMIN_HIST 1024 /* gaps below this many cycles are histogrammed for t_min */
/* Only every 64th gap goes into the histogram: updating it on every iteration made the loop's
 * mean iteration 15.0 ns against 9.5 ns without it (measured here); sampled, it is free. */
#define NT_TMIN_SAMPLE_MASK 63u

/* t_min from a histogram of sampled gaps (hist[g] = samples with gap g cycles): the median,
 * or 0 when the histogram is empty. */
NT_API uint64_t nt_detour_tmin_from_hist(const uint64_t *hist, size_t nbins);

/* Timing of a loop of counter reads. */
struct nt_loop_timing {
	uint64_t iterations;
	uint64_t raw_min_cyc;  /* plain minimum gap */
	uint64_t t_min_cyc;    /* as nt_detour_tmin_from_hist */
	double mean_cyc;       /* elapsed / iterations */
};

/* The comparison loop of the resolution check: back-to-back counter reads and the same t_min
 * histogram as the detour loop, nothing else. */
NT_API void nt_detour_bare_loop(uint64_t iterations, struct nt_loop_timing *out);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_DETOUR_H */
