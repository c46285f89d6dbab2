/* The adaptive policy's decisions, apart from any clock or system call so that tests can drive
 * it with made-up times, run delays and cycle times.
 *
 * While its CPU is free the poller spins. The competitor's share of the CPU is measured while
 * spinning (the thread's run delay grows while another task runs: over contended_share in two
 * measure_ns stretches of spinning in a row means shared), and while sleeping from the CPU's
 * own accounting (busy time not ours, every reprobe_ns); under free_share three times in a row
 * means free. A CPU shared again within 10 s resumes the choice it had. Once the CPU is shared, the poller measures what each
 * choice gives: it keeps a mode (first spin, for a short while) and now and then tries the
 * other one for up to trial_ns, cutting the trial short as soon as the other mode is clearly
 * worse (its mean cycle between events over 1.25x after 8 cycles), so that a bad choice costs
 * milliseconds. The other mode wins when it is 10 % better. A confirmed choice is kept twice as
 * long each time (dwell_ns up to 16x); a change starts again at dwell_ns. Without events to
 * compare, the poller sleeps on a shared CPU: the competitor gets it. */
#ifndef POLLING_ADAPT_H
#define POLLING_ADAPT_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/poller.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nt_adapt_phase {
	NT_ADAPT_FREE,  /* CPU free: spin */
	NT_ADAPT_DWELL, /* CPU shared: keeping the chosen mode */
	NT_ADAPT_TRIAL, /* CPU shared: trying the other mode */
};

struct nt_adapt_cycles {
	double sum_ns;
	uint64_t n;
};

struct nt_adapt {
	struct nt_poller_config cfg;
	enum nt_adapt_phase phase;
	uint64_t phase_end_ns;
	enum nt_poll_mode chosen;
	uint64_t dwell_ns; /* the current dwell length */
	/* share measurement over continuous runnable time */
	bool have_last;
	uint64_t last_ns, last_delay_ns;
	uint64_t acc_wall_ns, acc_delay_ns;
	double share;
	uint64_t measurements;
	/* hysteresis between free and shared: measurements in a row on the other side */
	unsigned over, under;
	/* the choice held when the CPU was last freed, resumed if it is shared again soon */
	bool have_last_choice;
	enum nt_poll_mode last_chosen;
	uint64_t last_dwell_ns, freed_at_ns;
	/* cycles between events in the current dwell (chosen) and trial (other) */
	struct nt_adapt_cycles dwell, trial;
	double last_cycle_ns[2]; /* the last compared means, by mode */
	uint64_t trials, aborted, switches;
	enum nt_poll_mode mode; /* the last mode handed out */
};

#define NT_ADAPT_MIN_CYCLES 8  /* cycles needed to judge a mode */
#define NT_ADAPT_SHARED_AFTER 2 /* measurements over contended_share in a row: shared */
#define NT_ADAPT_FREE_AFTER 3   /* measurements under free_share in a row: free */
#define NT_ADAPT_RESUME_NS 10000000000ull /* shared again within 10 s: resume the choice */
#define NT_ADAPT_DWELL_MAX 16  /* a confirmed dwell grows up to this many times dwell_ns */

void nt_adapt_init(struct nt_adapt *a, const struct nt_poller_config *cfg, uint64_t now_ns);

/* The mode for the next slice of waiting, and (in *slice_ns) how long that slice may last
 * before the poller must ask again (UINT64_MAX: no limit). */
enum nt_poll_mode nt_adapt_mode(struct nt_adapt *a, uint64_t now_ns, uint64_t *slice_ns);

/* While the thread stays runnable (spinning, or computing between spins): the run delay from
 * schedstat now. Every measure_ns of such time gives one share measurement. */
void nt_adapt_runnable_sample(struct nt_adapt *a, uint64_t now_ns, uint64_t run_delay_ns);

/* The thread slept (blocked in the kernel): the next sample starts a new stretch. */
void nt_adapt_slept(struct nt_adapt *a);

/* While sleeping: the share of the CPU that other tasks used over the last stretch, from the
 * CPU's accounting. */
void nt_adapt_cpu_share(struct nt_adapt *a, uint64_t now_ns, double share);

/* An event arrived cycle_ns after the previous one, while waiting in mode. */
void nt_adapt_cycle(struct nt_adapt *a, enum nt_poll_mode mode, uint64_t cycle_ns);

#ifdef __cplusplus
}
#endif
#endif /* POLLING_ADAPT_H */
