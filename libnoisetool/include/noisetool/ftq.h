/* FTQ (fixed time quantum: work done per quantum) and FWQ (fixed work quantum: time per unit
 * of work), the sampling benchmarks of Sottile & Minnich used by Betti et al. */
#ifndef NOISETOOL_FTQ_H
#define NOISETOOL_FTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>
#include <noisetool/detour.h>
#include <noisetool/sysinfo.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nt_ftq_mode {
	NT_FTQ = 0,
	NT_FWQ = 1,
};

struct nt_ftq_config {
	enum nt_ftq_mode mode;
	double seconds;       /* > 0 */
	uint64_t quantum_ns;  /* FTQ: quantum length (>= 1000); FWQ: target work per sample */
	int cpu;              /* -1 = do not pin */
	nt_progress_fn progress;
	void *progress_ctx;
};

struct nt_ftq_result {
	enum nt_ftq_mode mode;
	int cpu;
	uint64_t quantum_ns;  /* FTQ quantum, or FWQ target work in ns */
	uint64_t work_ops;    /* FWQ: basic operations per sample */
	size_t nsamples;
	uint64_t *samples;    /* FTQ: operations per quantum; FWQ: ns per sample */
	uint64_t best;        /* FTQ: most operations in a quantum; FWQ: fastest sample, ns */
	uint64_t elapsed_ns;  /* sum of the quanta / samples */
	uint64_t start_cyc;   /* counter value at the first quantum / sample's start */
	double noise_ratio;   /* work (FTQ) or time (FWQ) lost to noise, 0..1 */
	struct nt_run_os os;  /* where it ran, run-queue delay and steal over the run */
};

/* Largest number of samples one run may hold (memory bound: 8 bytes each). */
#define NT_FTQ_MAX_SAMPLES (1u << 25)

/* Run FTQ or FWQ on the calling thread. Returns 0, -EINVAL (bad config, or more than
 * NT_FTQ_MAX_SAMPLES quanta), -ENOMEM, -errno from pinning. */
NT_API int nt_ftq_measure(const struct nt_ftq_config *cfg, struct nt_ftq_result *res);

/* Run on every CPU in cpus at once (one pinned thread each). res holds ncpus results. */
NT_API int nt_ftq_measure_cpus(const struct nt_ftq_config *cfg, const int *cpus, size_t ncpus,
			       struct nt_ftq_result *res);

/* Free the samples of a result (the struct itself is the caller's). NULL is accepted. */
NT_API void nt_ftq_result_free(struct nt_ftq_result *res);

/* Turn lost work into detours: FTQ quanta (or FWQ samples) that lost at least threshold_ns,
 * consecutive ones merged. *out is malloc'd (NULL when none). Returns 0, -EINVAL, -ENOMEM. */
NT_API int nt_ftq_detours(const struct nt_ftq_result *res, uint64_t threshold_ns,
			  struct nt_detour **out, size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_FTQ_H */
