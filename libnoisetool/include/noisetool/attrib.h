/* Attribution: which rank made each slow collective instance late, and why, in OS terms.
 * The records of one instance (same communicator id and sequence number) are joined across
 * ranks; the last arriver L on the global time base imposed a(L) - median arrival; that delay
 * is split by what the OS did to L in the probe window that held its phase, beyond what it
 * did to the median rank. doc/attribution.md gives the model. */
#ifndef NOISETOOL_ATTRIB_H
#define NOISETOOL_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>
#include <noisetool/ntlog.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The causes of a delay: the one list that the enum, the JSON and CSV keys, the text tables'
 * columns, the pages' legends and the tests' helpers are all made from.
 *   X(ID, key, column, words, colour)
 * ID names the enum constant (NT_CAUSE_ID); key the cause in JSON ("KEY_ns") and CSV; column
 * heads the text tables (5 characters at most: a test checks); words say it in a sentence and a
 * legend; colour draws it on the pages. Adding a cause is an entry here and its share computed
 * in attrib.c (window_causes, split); doc/hacking.md, "Add a cause". */
#define NT_CAUSES(X)                                                                            \
	/* runnable but waiting for a CPU (schedstat run delay) */                             \
	X(PREEMPTION, "preemption", "preem", "preemption", "#d62728")                          \
	/* off the CPU without running, waiting for it or blocking (no voluntary switch): the   \
	 * hypervisor had the vCPU (or interrupts, also out of the thread's CPU time) */         \
	X(STEAL, "steal", "steal", "hypervisor steal", "#8c564b")                              \
	/* off the CPU and not runnable: wall - CPU - run delay */                             \
	X(BLOCKED, "blocked", "block", "blocked", "#1f77b4")                                   \
	/* minor faults at their cost, major ones out of blocked time */                       \
	X(PAGE_FAULT, "page_fault", "fault", "page faults", "#9467bd")                         \
	/* more instructions than the median rank (hardware counters) */                       \
	X(EXTRA_WORK, "extra_work", "work", "extra work", "#ff7f0e")                           \
	/* spun by the noise injector (exact) */                                               \
	X(INJECTED, "injected", "inj", "injected", "#2ca02c")                                  \
	/* the rest: on the CPU, doing nothing the counters see */                             \
	X(UNEXPLAINED, "unexplained", "unexp", "unexplained", "#7f7f7f")                       \
	NT_CAUSES_EXTRA(X)

/* More causes: the test that a new entry reaches every output defines one (noisetool/ntlog.h,
 * NT_TEST_EXTRA_ENTRIES). */
#ifndef NT_CAUSES_EXTRA
#define NT_CAUSES_EXTRA(X)
#endif

enum nt_cause {
#define NT_CAUSE_ENUM_(id, key, column, words, colour) NT_CAUSE_##id,
	NT_CAUSES(NT_CAUSE_ENUM_)
#undef NT_CAUSE_ENUM_
	NT_CAUSE_COUNT,
};

/* What the list says of a cause. */
struct nt_cause_info {
	const char *key;    /* "preemption": JSON "preemption_ns", CSV "preemption_ns" */
	const char *column; /* "preem": a text table's column, at most 5 characters */
	const char *words;  /* "preemption": in a sentence or a legend */
	const char *colour; /* "#d62728": on a page */
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
	uint64_t waited_ns;             /* what the members lost to it, summed: each one's lateness
					 * short of the last arriver's (arrivals; busy times when the
					 * interval named the culprit), 0 for the last arriver */
	struct nt_causes causes;
	bool os_data;                   /* the last arriver's record had a probe window; else its
					 * whole delay is unexplained for want of OS data (counted in
					 * instances_no_window) */
};

/* What one rank lost in collective instances to other members (waiting for a late arrival) and
 * to holds inside the call (its time there after the last arrival and its own cost), split as
 * each instance's delay is: with an OS cause, unexplained, or without OS data. */
struct nt_rank_loss {
	uint64_t waited_ns, held_ns;
	uint64_t cause_ns, unexplained_ns, no_data_ns; /* of waited_ns + held_ns */
};

struct nt_attrib {
	uint64_t instances_joined;     /* instances seen on two or more ranks */
	uint64_t instances_late;       /* of those, with a delay above the threshold */
	uint64_t instances_no_window;  /* late, but the last arriver's record had no OS data */
	uint64_t delay_no_window_ns;   /* their delay (all of it unexplained for want of data) */
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
	/* Held up inside the call: instances whose members left the call later than the last
	 * arrival and the site's own cost allow (doc/attribution.md, "Held up inside a call"). An
	 * entry's rank is the member that held it (the most OS time in its window), delay_ns what
	 * the others lost to it (the largest), waited_ns what every member lost, summed. Only where
	 * the sites' own costs are known (their histograms). */
	uint64_t instances_held;
	uint64_t held_delay_ns;        /* their delays, summed */
	size_t nheld;
	struct nt_late *held;          /* largest delay first */
	size_t nheld_ranks;
	struct nt_culprit *held_ranks; /* every rank that held an instance, largest first */
	struct nt_rank_loss *loss;     /* by rank, the log's nranks of them (the coverage's) */
	size_t nloss;
	/* The same by the call site of the member that lost it: rank r's site i at
	 * site_loss[site_at[r] + i] (site_at: the log's nranks of them; every rank's sites,
	 * nsite_loss in all). */
	size_t *site_at;
	struct nt_rank_loss *site_loss;
	size_t nsite_loss;
};

/* Join and attribute log's records. Every number is taken as it is, whatever its size: sums
 * saturate at UINT64_MAX and nothing overflows, and the cost is O(n log n) in the records
 * whatever the number of ranks, hosts and call sites. Returns 0, -EINVAL (NULL arguments, or
 * a rank with records but no array of them), -ENOMEM. */
NT_API int nt_attrib_build(const struct nt_log *log, struct nt_attrib *out);

/* Free what nt_attrib_build allocated and zero *a (the struct itself is the caller's). NULL is
 * accepted. */
NT_API void nt_attrib_free(struct nt_attrib *a);

/* The JSON key of a cause, e.g. "preemption_ns"; "?" for no cause. */
NT_API const char *nt_cause_key(enum nt_cause c);

/* What the list (NT_CAUSES) says of cause c, or NULL for no cause. */
NT_API const struct nt_cause_info *nt_cause_info(enum nt_cause c);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_ATTRIB_H */
