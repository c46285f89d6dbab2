/* Attribution: which rank made each slow collective instance late, and why, in OS terms.
 * The records of one instance (same communicator id and sequence number) are joined across
 * ranks; the last arriver L on the global time base imposed a(L) - median arrival; that delay
 * is split by what the OS did to L in the probe window that held its phase, beyond what it
 * did to the median rank. doc/attribution.md gives the model. */
#ifndef NOISETOOL_ATTRIB_H
#define NOISETOOL_ATTRIB_H

#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>
#include <noisetool/ntlog.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nt_cause {
	NT_CAUSE_PREEMPTION,  /* runnable but waiting for a CPU (schedstat run delay), or off
			       * the CPU without having blocked (the hypervisor's steal) */
	NT_CAUSE_BLOCKED,     /* off the CPU and not runnable: wall - CPU - run delay */
	NT_CAUSE_PAGE_FAULT,  /* minor faults at their cost, major ones out of blocked time */
	NT_CAUSE_EXTRA_WORK,  /* more instructions than the median rank (hardware counters) */
	NT_CAUSE_INJECTED,    /* spun by the noise injector (exact) */
	NT_CAUSE_UNEXPLAINED, /* the rest: on the CPU, doing nothing the counters see */
	NT_CAUSE_COUNT,
};

/* Delay by cause, ns; the causes add up to the delay. */
struct nt_causes {
	uint64_t ns[NT_CAUSE_COUNT];
};

/* One rank, one node or one call site: the delay it imposed on the job. */
struct nt_culprit {
	uint32_t rank;           /* for ranks */
	const char *host;        /* for ranks and nodes */
	const struct nt_log_site *site; /* for call sites: the last arriver's (borrowed) */
	uint64_t delay_ns;
	uint64_t instances;      /* instances it arrived last at */
	struct nt_causes causes;
};

/* One late instance. */
struct nt_late {
	uint64_t comm_id, seq;
	uint32_t rank;                  /* the last arriver */
	const char *host;               /* its host (borrowed) */
	uint32_t members;               /* ranks whose records joined */
	const struct nt_log_site *site; /* its call site on the last arriver (borrowed) */
	uint64_t start_ns;              /* the median arrival, global time */
	uint64_t delay_ns;
	struct nt_causes causes;
};

struct nt_attrib {
	uint64_t instances_joined;     /* instances seen on two or more ranks */
	uint64_t instances_late;       /* of those, with a delay above the threshold */
	uint64_t instances_no_window;  /* late, but the last arriver's record had no OS data */
	uint64_t crosscheck_agree;     /* late ones whose last arriver also waited least inside */
	uint64_t threshold_ns;         /* smallest delay counted: 1 us + twice the clock error */
	uint64_t clock_error_ns;       /* largest per-rank bound on the global time error */
	uint64_t clock_test_error_ns;  /* with NOISETOOL_TEST_CLOCK: largest error seen */
	uint64_t total_delay_ns;
	size_t nranks, nnodes, nsites;
	struct nt_culprit *ranks;      /* every rank that imposed delay, largest first */
	struct nt_culprit *nodes;      /* per host, largest first */
	struct nt_culprit *sites;      /* per (last arriver's) call site, largest first */
	size_t nlate;
	struct nt_late *late;          /* every late instance, largest delay first */
};

/* Join and attribute log's records. Every number is taken as it is, whatever its size: sums
 * saturate at UINT64_MAX and nothing overflows, and the cost is O(n log n) in the records
 * whatever the number of ranks, hosts and call sites. Returns 0, -EINVAL (NULL arguments, or
 * a rank with records but no array of them), -ENOMEM. */
NT_API int nt_attrib_build(const struct nt_log *log, struct nt_attrib *out);

/* Free what nt_attrib_build allocated and zero *a (the struct itself is the caller's). NULL is
 * accepted. */
NT_API void nt_attrib_free(struct nt_attrib *a);

/* The JSON key of a cause, e.g. "preemption_ns". */
NT_API const char *nt_cause_key(enum nt_cause c);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_ATTRIB_H */
