/* The adaptive policy's decisions, apart from any clock or system call so that tests can drive
 * it with made-up times and run delays.
 *
 * While the CPU is free (the competitor share measured while spinning stays under
 * contended_share) the poller spins. Once it is shared, the two choices are tried in turn
 * (sleep for trial_ns, then spin for trial_ns), each one's mean cycle time between events is
 * measured, and the better one is kept for dwell_ns (a choice changes only when the other is
 * better by more than 10 %; with too few events to compare, sleeping wins: the competitor gets
 * the CPU). Then the trials run again. While sleeping, the CPU is probed by spinning for
 * reprobe_spin_ns every reprobe_ns; a share under free_share, measured in any spin, frees it. */
#ifndef POLLING_ADAPT_H
#define POLLING_ADAPT_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/poller.h>

enum nt_adapt_phase {
	NT_ADAPT_FREE,        /* CPU free: spin */
	NT_ADAPT_TRIAL_SLEEP, /* CPU shared: trying sleep */
	NT_ADAPT_TRIAL_SPIN,  /* CPU shared: trying spin */
	NT_ADAPT_DWELL,       /* CPU shared: keeping the chosen mode */
};

struct nt_adapt {
	struct nt_poller_config cfg;
	enum nt_adapt_phase phase;
	uint64_t phase_end_ns;
	enum nt_poll_mode chosen; /* in DWELL */
	/* share measurement over continuous runnable time */
	bool have_last;
	uint64_t last_ns, last_delay_ns;
	uint64_t acc_wall_ns, acc_delay_ns;
	double share;
	uint64_t measurements;
	/* re-probing while sleeping */
	uint64_t next_reprobe_ns, reprobe_end_ns;
	bool reprobing;
	/* trial cycle times, by mode */
	double cycle_sum_ns[2];
	uint64_t cycles[2];
	double last_cycle_ns[2];
	uint64_t trials, switches;
	enum nt_poll_mode mode; /* the last mode handed out */
};

#define NT_ADAPT_MIN_CYCLES 5 /* events per trial needed to compare */

#ifdef __cplusplus
extern "C" {
#endif

void nt_adapt_init(struct nt_adapt *a, const struct nt_poller_config *cfg, uint64_t now_ns);

/* The mode for the next slice of waiting, and (in *slice_ns) how long that slice may last
 * before the poller must ask again (UINT64_MAX: no limit). */
enum nt_poll_mode nt_adapt_mode(struct nt_adapt *a, uint64_t now_ns, uint64_t *slice_ns);

/* While the thread stays runnable (spinning, or computing between spins): the run delay from
 * schedstat now. Every measure_ns of such time gives one share measurement. */
void nt_adapt_runnable_sample(struct nt_adapt *a, uint64_t now_ns, uint64_t run_delay_ns);

/* The thread slept (blocked in the kernel): the next sample starts a new stretch. */
void nt_adapt_slept(struct nt_adapt *a);

/* An event arrived cycle_ns after the previous one, while waiting in mode. */
void nt_adapt_cycle(struct nt_adapt *a, enum nt_poll_mode mode, uint64_t cycle_ns);

#ifdef __cplusplus
}
#endif
#endif /* POLLING_ADAPT_H */
