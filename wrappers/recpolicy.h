/* The recording policy, apart from MPI, the clock and the probe so that tests drive it with
 * made-up times: which collective instances are kept as records and with which flags, the call
 * site's thresholds behind that, and when the probe reads that close windows are due. */
#ifndef WRAPPERS_RECPOLICY_H
#define WRAPPERS_RECPOLICY_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_REC_SLOW 1u       /* time in the call over 3x the site's mean */
#define NT_REC_SAMPLE 2u     /* a sample: the call that refreshed the site's thresholds */
#define NT_REC_LONG_PHASE 4u /* the span before it over 1.5x the site's mean span, 2 us more */
#define NT_REC_WINDOW 8u     /* win holds the probe window that ended with this call */
#define NT_REC_INTERVAL 16u  /* interval_cyc and p2p_cyc are known */
#define NT_REC_ABSOLUTE 32u  /* kept by the absolute floor alone: a long call or span */

#define NT_REC_SPAN_FLOOR_NS 2000 /* a long span is at least this much over the mean one */
#define NT_REC_REFRESH_FIRST 8    /* the first sample; doubling up to ... */
#define NT_REC_REFRESH_EVERY 1024 /* ... this, then this far apart */

/* The absolute floor: a call or a span of 1 ms or more is kept whatever the site's history, so
 * that a coarse-grained program is attributed (Debian's mocassin on 2 ranks made 24 sites 2-3
 * calls each, one rank waiting up to 1.9 s in one MPI_Barrier, and the relative rules, which
 * need the site's mean, kept none of them). A late rank's span holds its lateness and the
 * others' calls hold their wait, so every member keeps a late instance of 1 ms or more. The
 * floor rises with the site's calls past NT_REC_ABS_CALLS (calls / 1024 ms), so that a
 * site's records kept by it alone stay about 1024 x its mean span / 1 ms: a million
 * instances 1 ms apart keep ~1000 each way, not a million. */
#define NT_REC_ABS_FLOOR_NS 1000000
#define NT_REC_ABS_CALLS 1024

/* A call site's thresholds (kept in its struct nt_site). A span is the interval since the
 * thread's previous blocking collective instance when there is one, else the phase. */
struct nt_rec_thresholds {
	uint64_t slow_cyc;      /* a call longer than this is slow (3x the mean) */
	uint64_t slow_span_cyc; /* a span longer than this is long (1.5x the mean, 2 us more) */
	uint64_t keep_cyc;      /* a call longer than this is kept: slow, or the absolute floor */
	uint64_t keep_span_cyc; /* the same for spans */
	uint64_t refresh_at;    /* calls at which the thresholds are refreshed next (and that
				 * call is kept as a sample): 8, 16, ... 1024, then every 1024 */
};

/* Thresholds of a site with no calls yet: nothing is slow or long before the first sample, and
 * calls and spans over abs_cyc (NT_REC_ABS_FLOOR_NS in counter cycles) are kept. */
void nt_recpolicy_init(struct nt_rec_thresholds *th, uint64_t abs_cyc);

/* Whether the site's instance number calls (counted already) that spent d_cyc in the call
 * after span_cyc is kept. The per-call fast path: inline, the three thresholds compared. */
static inline __attribute__((always_inline)) bool
nt_recpolicy_wanted(const struct nt_rec_thresholds *th, uint64_t calls, uint64_t d_cyc,
		    uint64_t span_cyc)
{
	/* Relaxed atomic loads (plain loads on x86-64): another thread of a shared site may be
	 * refreshing them; a mix of old and new thresholds is harmless. */
	return NT_UNLIKELY(d_cyc > __atomic_load_n(&th->keep_cyc, __ATOMIC_RELAXED)) ||
	       NT_UNLIKELY(span_cyc > __atomic_load_n(&th->keep_span_cyc, __ATOMIC_RELAXED)) ||
	       NT_UNLIKELY(calls >= __atomic_load_n(&th->refresh_at, __ATOMIC_RELAXED));
}

/* The NT_REC_SLOW, NT_REC_LONG_PHASE, NT_REC_SAMPLE and NT_REC_ABSOLUTE flags of that
 * instance, from the thresholds it was judged by: non-zero exactly when nt_recpolicy_wanted().
 * NT_REC_ABSOLUTE only when no other flag holds. */
uint32_t nt_recpolicy_flags(const struct nt_rec_thresholds *th, uint64_t calls, uint64_t d_cyc,
			    uint64_t span_cyc);

/* After a sample: the next one is due, and the thresholds come from the site's running sums
 * (calls > 0 of total_cyc in the call after span_sum_cyc of spans; floor_cyc is
 * NT_REC_SPAN_FLOOR_NS and abs_cyc NT_REC_ABS_FLOOR_NS in counter cycles). Thread-safe: of
 * several threads that see the same sample, one refreshes (the one that moves refresh_at on). */
void nt_recpolicy_refresh(struct nt_rec_thresholds *th, uint64_t calls, uint64_t total_cyc,
			  uint64_t span_sum_cyc, uint64_t floor_cyc, uint64_t abs_cyc);

/* NT_REC_WINDOW when the last window ended (window_end_cyc) at the record's exit t1_cyc, and
 * NT_REC_INTERVAL when its interval is known (interval_cyc > 0). */
uint32_t nt_recpolicy_record_flags(uint64_t window_end_cyc, uint64_t t1_cyc,
				   uint64_t interval_cyc);

/* The window limiter: reads of the probe cost at most this fraction of wall time, as estimated
 * from an EWMA (weight 1/8) of the measured costs of reads. */
#define NT_REC_READ_BUDGET 0.01

/* Reads made in a row when the probe opens: the least of their costs is the first estimate. */
#define NT_REC_FIRST_READS 4

struct nt_rec_reads {
	uint64_t cost_cyc; /* the estimated cost of one read (0: none yet) */
};

/* A limiter before its first read. */
void nt_recpolicy_read_init(struct nt_rec_reads *rl);

/* A read that took cost_cyc (measured) ended at end_cyc. Its cost joins the estimate, at most
 * twice the estimate: a read that was interrupted (a detour landing in it) says nothing of the
 * cost of a read. Returns the counter value at which the next read is due: from end_cyc, the
 * time in which the estimated cost is the budget's share. */
uint64_t nt_recpolicy_read_done(struct nt_rec_reads *rl, uint64_t end_cyc, uint64_t cost_cyc);

/* Whether a read at the end of a span of span_cyc costs at most 5 % of it (rare, being long:
 * such a span may end its window before the next read is due). */
bool nt_recpolicy_read_affordable(const struct nt_rec_reads *rl, uint64_t span_cyc);

/* Whether a kept instance that exits at t1_cyc after span_cyc ends the current window (which
 * the last read ended at window_end_cyc): its span is affordable and the window was not just
 * closed at this very exit. */
bool nt_recpolicy_record_ends_window(const struct nt_rec_reads *rl, uint64_t window_end_cyc,
				     uint64_t t1_cyc, uint64_t span_cyc);

#ifdef __cplusplus
}
#endif

#endif /* WRAPPERS_RECPOLICY_H */
