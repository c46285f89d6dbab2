/* The recording policy: which collective instances are kept as records and with which flags,
 * when a call site's thresholds refresh, when a probe window ends -- apart from MPI, the clock
 * and the probe, so that tests drive it with made-up counter values. */
#ifndef WRAPPERS_RECPOLICY_H
#define WRAPPERS_RECPOLICY_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The contract. The wrappers are the policy's mechanism: they time calls, read the probe and
 * store records when it says so. At every collective instance (a blocking collective's exit,
 * or a nonblocking or persistent instance's completion in a wait or test call), after the
 * site's aggregates took it:
 *
 *   1. nt_recpolicy_may_act(), inline on the fast path: false for almost every instance; then
 *      there is nothing to do.
 *   2. Otherwise d = nt_recpolicy_at_instance(): the record to keep (d.flags, 0 for none),
 *      whether the site's thresholds refresh (d.refresh) and whether the probe window ends at
 *      this exit (d.close_window). It changes nothing.
 *   3. The mechanism acts: nt_recpolicy_refresh() with the site's sums when d.refresh; when
 *      d.close_window, a probe read at the instance's exit and nt_recpolicy_window_closed()
 *      with what the read cost; then the record with d.flags, carrying the window that ended
 *      when d.flags has NT_REC_WINDOW.
 *
 * State: a site's thresholds (struct nt_rec_thresholds, in its struct nt_site) are shared by
 * the threads that call the site: relaxed atomics, one refresh per sample. Everything about
 * windows (struct nt_rec_thread) is the calling thread's own: only the thread that opened the
 * probe (the one that called MPI_Init) has windows. The rules and the reasons behind them:
 * doc/attribution.md, "The recording policy". */

/* A record's flags (the log's NT_LOG_REC_*, doc/ntlog-format.md). */
#define NT_REC_SLOW 1u       /* time in the call over NT_REC_SLOW_MEANS x the site's mean */
#define NT_REC_SAMPLE 2u     /* a sample: the call at which the site's thresholds refresh */
#define NT_REC_LONG_PHASE 4u /* the span before it over 1.5x the site's mean span, 2 us more */
#define NT_REC_WINDOW 8u     /* win holds the probe window that ended with this call */
#define NT_REC_INTERVAL 16u  /* interval_cyc and p2p_cyc are known */
#define NT_REC_ABSOLUTE 32u  /* kept by the absolute floor alone: a long call or span */

/* A call that took over 3x its site's mean waited: for a late member, or off the CPU. With
 * these rules an 8-byte allreduce loop (2 ranks, 2 x 10^5 calls, this VM beside other jobs)
 * kept 310-400 records per rank, ~200 of them samples: slow calls and long spans were about
 * 1 call in 1000. */
#define NT_REC_SLOW_MEANS 3
/* A span (see struct nt_rec_instance) is long when it is over the site's mean span by more
 * than mean / NT_REC_LONG_SPAN_MARGIN (1.5x) and by more than NT_REC_SPAN_FLOOR_NS: spans of
 * back-to-back collectives are near 0, and without the floor their jitter would all be long. */
#define NT_REC_LONG_SPAN_MARGIN 2
#define NT_REC_SPAN_FLOOR_NS 2000

/* Samples: a site's thresholds are refreshed from its running means at calls 8, 16, ... 1024
 * (often at first, while the means settle), then every 1024; the call that refreshes them is
 * kept as a record. Every member of a communicator calls a site the same number of times, so
 * every member keeps the same instances as samples and their windows can be compared. */
#define NT_REC_REFRESH_FIRST 8
#define NT_REC_REFRESH_EVERY 1024

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

/* The read budget: probe reads (1.8-3 us each on this VM) cost at most this fraction of wall
 * time (the design's budget for them), about one read every 300 us.
 *
 * Reads are on a grid that every member of a communicator shares: a window ends at a blocking
 * collective instance whose number on its communicator, plus one, is a multiple of 2^m (a
 * thread's m, adapted at each such read so that its reads cost between half the budget and the
 * budget). Members that choose different m still read together at the coarser one's instances.
 * A read stops its rank for a few microseconds, and the others wait for it at the next
 * collective: reads made when each rank's own time said so delayed a 2-rank 8-byte allreduce
 * loop by the sum of both ranks' budgets (Open MPI: default level 1.024x the floor, against
 * 1.004x with a tenth of the reads), and at N ranks they would add up N times over, the noise
 * amplification this tool exists to find. Made together, they cost one rank's budget. */
#define NT_REC_READ_BUDGET 0.01
/* The least share of the time between grid reads that pays off other readings' cost
 * (owed_cyc): the reads' share of it is between half the budget and the budget, and with this
 * the grid widens by one step at most while it is paid. */
#define NT_REC_OWED_SHARE (NT_REC_READ_BUDGET / 4)
#define NT_REC_GRID_MAX_BITS 40 /* at most one read every 2^40 instances */
/* The estimate of a read's cost is an EWMA of the measured costs, weight 1 / NT_REC_COST_WEIGHT,
 * a read counted at most NT_REC_COST_CLAMP x the estimate: a read that was interrupted (a
 * detour landing in it) says nothing of the cost of a read, and taken whole, one 200 us detour
 * in a read pushed the next read 2.6 ms away here. */
#define NT_REC_COST_WEIGHT 8
#define NT_REC_COST_CLAMP 2
/* Reads made in a row when the probe opens; the least of their costs is the first estimate.
 * Taken from one read, a detour or a preemption landing in it became the estimate (when reads
 * were spaced by it alone: a 4 ms one kept the reads 0.4 s apart, and 75 of 162 instances of a
 * 2 s job went without OS data). */
#define NT_REC_FIRST_READS 4
/* A kept instance ends its window at once, off the grid, when a read costs at most
 * 1 / NT_REC_AFFORD_SPANS (5 %) of its span and call and the records' early reads have the credit for
 * it: such records are rare (slow calls, long spans, samples), being long the read is cheap
 * against them, and a window that ends with the record describes its span rather than some
 * earlier part of the job. The credit grows by half the budget of the time that passes, up to
 * NT_REC_EARLY_BURST reads, and each early read spends one read's cost: early reads take at
 * most half the budget over any stretch longer than a few reads' worth, and the grid, which
 * counts them, keeps the whole within it. (Allowed only within half the budget of the time
 * since the last grid read, they never came where the grid reads often: 137 of 399 short
 * detours, one every 5 ms in a 7 us allreduce loop, got a window.) */
#define NT_REC_AFFORD_SPANS 20
#define NT_REC_EARLY_BURST 4

/* A call site's thresholds (kept in its struct nt_site; shared by the threads that call it:
 * read and written with relaxed atomics only). */
struct nt_rec_thresholds {
	/* The three that every instance is compared with (nt_recpolicy_wanted) first. */
	uint64_t keep_cyc;      /* a call longer than this is kept: slow, or the absolute floor */
	uint64_t keep_span_cyc; /* the same for spans */
	uint64_t refresh_at;    /* calls at which the thresholds are refreshed next (and that
				 * call is kept as a sample) */
	uint64_t slow_cyc;      /* a call longer than this is slow (3x the mean) */
	uint64_t slow_span_cyc; /* a span longer than this is long (1.5x the mean, 2 us more) */
};

/* Thresholds of a site with no calls yet: nothing is slow or long before the first sample, and
 * calls and spans over abs_cyc (NT_REC_ABS_FLOOR_NS in counter cycles) are kept. Not
 * thread-safe: for a site no other thread sees yet. */
void nt_recpolicy_init(struct nt_rec_thresholds *th, uint64_t abs_cyc);

/* After a sample (a decision with refresh set): the thresholds come from the site's running
 * sums -- calls > 0 of total_cyc in the call after span_sum_cyc of spans, as the site's
 * aggregates hold them with this instance; floor_cyc is NT_REC_SPAN_FLOOR_NS and abs_cyc
 * NT_REC_ABS_FLOOR_NS in counter cycles -- and the next sample is due. Thread-safe: of several
 * threads that see the same sample, exactly one refreshes (the one that moves refresh_at on).
 * Returns whether this call refreshed. */
bool nt_recpolicy_refresh(struct nt_rec_thresholds *th, uint64_t calls, uint64_t total_cyc,
			  uint64_t span_sum_cyc, uint64_t floor_cyc, uint64_t abs_cyc);

/* The policy's state for one thread: its grid of reads and what a read costs. Each thread has
 * its own and only that thread touches it. */
struct nt_rec_thread {
	uint64_t grid_mask;      /* 2^m - 1: a blocking collective instance numbered seq on its
				  * communicator with ((seq + 1) & grid_mask) == 0 ends the window
				  * at its exit (UINT64_MAX: no windows here; never on the grid) */
	uint64_t window_end_cyc; /* the exit at which the last window ended (0: none yet) */
	uint64_t read_cost_cyc;  /* the estimated cost of one read (0: none yet) */
	uint64_t grid_from_cyc;  /* the end of the last read on the grid (or the probe's opening) */
	uint64_t spent_cyc;      /* what the reads since cost (records' early reads included) */
	uint64_t credit_cyc;     /* the records' early reads' credit (NT_REC_EARLY_BURST) ... */
	uint64_t credit_at_cyc;  /* ... as it stood at this time */
	uint64_t owed_cyc;       /* other readings' cost not yet paid by the grid's reads
				  * (nt_recpolicy_spent) */
};

/* A thread without windows, as a static initializer (thread-local storage). */
#define NT_REC_THREAD_NONE { UINT64_MAX, 0, 0, 0, 0, 0, 0, 0 }

/* Set *rt to a thread without windows (also when its probe fails). */
void nt_recpolicy_thread_init(struct nt_rec_thread *rt);

/* The thread opened its probe at open_cyc with n >= 1 reads in a row that cost costs_cyc[i]
 * (measured; n = NT_REC_FIRST_READS): the least is the first estimate, and the grid starts at
 * m = 0 (the first blocking collective instance ends the first window; the grid widens from
 * there). */
void nt_recpolicy_windows_open(struct nt_rec_thread *rt, uint64_t open_cyc,
			       const uint64_t *costs_cyc, int n);

/* One collective instance, as the mechanism measured it. */
struct nt_rec_instance {
	uint64_t calls;    /* the site's calls, this instance counted */
	uint64_t seq;      /* its number on its communicator (0: the first; 0 when unknown) */
	uint64_t t0_cyc;   /* entry; a nonblocking or persistent instance's start */
	uint64_t t1_cyc;   /* exit; or its completion (the exit of the wait or test call) */
	uint64_t span_cyc; /* the span before t0: the interval since the thread's previous blocking
			    * collective instance returned (it holds the phase) when there is one,
			    * else the phase since the previous MPI call */
	bool interval;     /* span_cyc is such an interval */
	bool completion;   /* a nonblocking or persistent instance completed in a wait or test
			    * call: it is kept only for its time or as a sample (its span is
			    * before its start), and it never ends a window on the grid */
};

/* What to do at an instance; all false and 0: nothing. */
struct nt_rec_decision {
	uint32_t flags;    /* the record to keep, with these NT_REC_* flags (0: none) */
	bool refresh;      /* the instance is the site's sample: nt_recpolicy_refresh() */
	bool close_window; /* read the probe at t1_cyc (the window ends at this exit), then
			    * nt_recpolicy_window_closed() */
	bool on_grid;      /* that read is the grid's (not a record's early one) */
};

/* A threshold's value: a relaxed atomic load where another thread of a shared site may be
 * refreshing it (a mix of old and new thresholds is harmless), a plain one where one thread
 * calls MPI (threaded false, a constant): the compiler then compares with memory directly. */
static inline __attribute__((always_inline)) uint64_t nt_recpolicy_load(const uint64_t *v,
									 bool threaded)
{
	return threaded ? __atomic_load_n(v, __ATOMIC_RELAXED) : *v;
}

/* Whether the site's instance number calls (counted already) that spent d_cyc in the call
 * after span_cyc is kept: over one of the three thresholds. */
static inline __attribute__((always_inline)) bool
nt_recpolicy_wanted(const struct nt_rec_thresholds *th, uint64_t calls, uint64_t d_cyc,
		    uint64_t span_cyc, bool threaded)
{
	return d_cyc > nt_recpolicy_load(&th->keep_cyc, threaded) ||
	       span_cyc > nt_recpolicy_load(&th->keep_span_cyc, threaded) ||
	       calls >= nt_recpolicy_load(&th->refresh_at, threaded);
}

/* Whether instance seq of a communicator is on the thread's grid of reads. */
static inline __attribute__((always_inline)) bool
nt_recpolicy_on_grid(const struct nt_rec_thread *rt, uint64_t seq)
{
	return ((seq + 1) & rt->grid_mask) == 0;
}

/* The fast path's test, inline (four compares; with completion a constant, one of them goes):
 * false when nt_recpolicy_at_instance() would decide nothing for the instance described by
 * the same values (the thresholds as loaded here). threaded: other threads may share the
 * site (a constant where the caller knows). Four predicted branches, a compare and a jump
 * each: combined bitwise (setcc, or) they took six instructions more, and the fast path's
 * budget is counted in instructions (doc/overhead.md). */
static inline __attribute__((always_inline)) bool
nt_recpolicy_may_act(const struct nt_rec_thread *rt, const struct nt_rec_thresholds *th,
		     uint64_t calls, uint64_t seq, uint64_t d_cyc, uint64_t span_cyc,
		     bool completion, bool threaded)
{
	if (completion)
		return nt_recpolicy_wanted(th, calls, d_cyc, 0, threaded);
	return nt_recpolicy_on_grid(rt, seq) ||
	       nt_recpolicy_wanted(th, calls, d_cyc, span_cyc, threaded);
}

/* The decision at instance in of a site with thresholds th, on a thread in state rt; a pure
 * function of its arguments (the thresholds loaded once, relaxed).
 * - A record is kept when the call is over keep_cyc, its span over keep_span_cyc (not for a
 *   completion), or calls reached refresh_at. Its flags: NT_REC_SLOW, NT_REC_LONG_PHASE and
 *   NT_REC_SAMPLE by the thresholds (the span judged for a completion too), NT_REC_ABSOLUTE
 *   when none of them holds; NT_REC_INTERVAL when the span is a non-zero interval;
 *   NT_REC_WINDOW when the thread has windows and one ends at t1_cyc (this decision's, or
 *   one that already ended there: completions reported by one wait call share their exit).
 *   A sample refreshes the thresholds.
 * - The window ends at t1_cyc when the thread has windows and either the instance is blocking
 *   and on the grid (on_grid), or a record is kept, no window ended at t1_cyc yet, its span
 *   is affordable (at least NT_REC_AFFORD_SPANS x the estimated cost of a read) and so is the
 *   read: the early reads' credit at t1_cyc holds the estimated cost (NT_REC_EARLY_BURST). */
struct nt_rec_decision nt_recpolicy_at_instance(const struct nt_rec_thread *rt,
						const struct nt_rec_thresholds *th,
						const struct nt_rec_instance *in);

/* The window ended at end_cyc (an instance's exit) by a read that ended at read_end_cyc and
 * cost cost_cyc (measured); on_grid: the grid's read (else a record's early one, which spends
 * the estimate from the early reads' credit). The cost
 * joins the estimate and the reads' spending (at most NT_REC_COST_CLAMP x the estimate: that
 * cost is returned, the read's as the budget counts it and the report shows it). At a
 * grid read the grid is set again: its m goes up or down by as many steps as make what the
 * reads cost since the last grid read, over the time since it, come between half the budget
 * and the budget (m = 0 at most; NT_REC_GRID_MAX_BITS at least); the read's own time belongs
 * to the next window. */
uint64_t nt_recpolicy_window_closed(struct nt_rec_thread *rt, uint64_t end_cyc,
				    uint64_t read_end_cyc, uint64_t cost_cyc, bool on_grid);

/* Other reading the read budget holds, made right after a grid read (the first reading of the
 * node's threads and interrupts: nt_cpushare_step): cost_cyc is owed, and each grid read pays
 * off what the reads since the last one left of the budget, and at least a quarter of it
 * (NT_REC_OWED_SHARE), until it is paid: counted as spent, so that the reads make room for it,
 * one step of the grid wider at most, without leaving instances without windows. Charged whole to the next grid read, a reading of
 * a few ms widened the grid by 7 steps at once, and the next 100 ms of a 200 us loop had no
 * probe window (17 % of an injected case's delay "not measured"). It is not a read's cost (the
 * estimate does not take it). */
void nt_recpolicy_spent(struct nt_rec_thread *rt, uint64_t cost_cyc);

#ifdef __cplusplus
}
#endif

#endif /* WRAPPERS_RECPOLICY_H */
