/* The adaptive policy's state machine. */
#include <string.h>

#include "adapt.h"

void nt_adapt_init(struct nt_adapt *a, const struct nt_poller_config *cfg, uint64_t now_ns)
{
	memset(a, 0, sizeof *a);
	a->cfg = *cfg;
	a->phase = NT_ADAPT_FREE;
	a->mode = NT_MODE_SPIN;
	a->next_reprobe_ns = now_ns + cfg->reprobe_ns;
}

static void start_trials(struct nt_adapt *a, uint64_t now_ns)
{
	a->phase = NT_ADAPT_TRIAL_SLEEP;
	a->phase_end_ns = now_ns + a->cfg.trial_ns;
	memset(a->cycle_sum_ns, 0, sizeof a->cycle_sum_ns);
	memset(a->cycles, 0, sizeof a->cycles);
	a->trials++;
}

static double mean_cycle(const struct nt_adapt *a, enum nt_poll_mode m)
{
	return a->cycles[m] ? a->cycle_sum_ns[m] / (double)a->cycles[m] : 0;
}

/* End of the spin trial: keep the better mode. */
static void choose(struct nt_adapt *a, uint64_t now_ns)
{
	enum nt_poll_mode best = NT_MODE_SLEEP;
	if (a->cycles[NT_MODE_SPIN] >= NT_ADAPT_MIN_CYCLES &&
	    a->cycles[NT_MODE_SLEEP] >= NT_ADAPT_MIN_CYCLES) {
		double spin = mean_cycle(a, NT_MODE_SPIN), sleep = mean_cycle(a, NT_MODE_SLEEP);
		a->last_cycle_ns[NT_MODE_SPIN] = spin;
		a->last_cycle_ns[NT_MODE_SLEEP] = sleep;
		/* Hysteresis: the mode kept last time stays unless the other is 10 % better. */
		if (a->chosen == NT_MODE_SPIN)
			best = sleep < 0.9 * spin ? NT_MODE_SLEEP : NT_MODE_SPIN;
		else
			best = spin < 0.9 * sleep ? NT_MODE_SPIN : NT_MODE_SLEEP;
	}
	a->chosen = best;
	a->phase = NT_ADAPT_DWELL;
	a->phase_end_ns = now_ns + a->cfg.dwell_ns;
	a->next_reprobe_ns = now_ns + a->cfg.reprobe_ns;
}

/* A share measurement is complete: move between free and shared. */
static void measured(struct nt_adapt *a, uint64_t now_ns, double share)
{
	a->share = share;
	a->measurements++;
	if (a->phase == NT_ADAPT_FREE) {
		if (share > a->cfg.contended_share)
			start_trials(a, now_ns);
	} else if (share < a->cfg.free_share) {
		a->phase = NT_ADAPT_FREE;
		a->reprobing = false;
	}
}

void nt_adapt_runnable_sample(struct nt_adapt *a, uint64_t now_ns, uint64_t run_delay_ns)
{
	if (a->have_last && now_ns > a->last_ns) {
		a->acc_wall_ns += now_ns - a->last_ns;
		a->acc_delay_ns += run_delay_ns >= a->last_delay_ns ? run_delay_ns - a->last_delay_ns
								    : 0;
	}
	a->have_last = true;
	a->last_ns = now_ns;
	a->last_delay_ns = run_delay_ns;
	if (a->acc_wall_ns >= a->cfg.measure_ns) {
		double share = (double)a->acc_delay_ns / (double)a->acc_wall_ns;
		a->acc_wall_ns = a->acc_delay_ns = 0;
		measured(a, now_ns, share > 1 ? 1 : share);
	}
}

void nt_adapt_slept(struct nt_adapt *a)
{
	a->have_last = false;
}

void nt_adapt_cycle(struct nt_adapt *a, enum nt_poll_mode mode, uint64_t cycle_ns)
{
	if (a->phase == NT_ADAPT_TRIAL_SLEEP || a->phase == NT_ADAPT_TRIAL_SPIN) {
		a->cycle_sum_ns[mode] += (double)cycle_ns;
		a->cycles[mode]++;
	}
}

static uint64_t until(uint64_t end_ns, uint64_t now_ns)
{
	return end_ns > now_ns ? end_ns - now_ns : 0;
}

static uint64_t min_u64(uint64_t x, uint64_t y)
{
	return x < y ? x : y;
}

enum nt_poll_mode nt_adapt_mode(struct nt_adapt *a, uint64_t now_ns, uint64_t *slice_ns)
{
	enum nt_poll_mode m = NT_MODE_SPIN;
	uint64_t slice = UINT64_MAX;
	/* Advance the timed phases. */
	if (a->phase == NT_ADAPT_TRIAL_SLEEP && now_ns >= a->phase_end_ns) {
		a->phase = NT_ADAPT_TRIAL_SPIN;
		a->phase_end_ns = now_ns + a->cfg.trial_ns;
	}
	if (a->phase == NT_ADAPT_TRIAL_SPIN && now_ns >= a->phase_end_ns)
		choose(a, now_ns);
	if (a->phase == NT_ADAPT_DWELL && now_ns >= a->phase_end_ns)
		start_trials(a, now_ns);

	switch (a->phase) {
	case NT_ADAPT_FREE:
		m = NT_MODE_SPIN;
		break;
	case NT_ADAPT_TRIAL_SLEEP:
		m = NT_MODE_SLEEP;
		slice = until(a->phase_end_ns, now_ns);
		break;
	case NT_ADAPT_TRIAL_SPIN:
		m = NT_MODE_SPIN;
		slice = until(a->phase_end_ns, now_ns);
		break;
	case NT_ADAPT_DWELL:
		m = a->chosen;
		slice = until(a->phase_end_ns, now_ns);
		if (m == NT_MODE_SLEEP) {
			/* Probe the CPU now and then by spinning. */
			if (a->reprobing && now_ns >= a->reprobe_end_ns) {
				a->reprobing = false;
				a->next_reprobe_ns = now_ns + a->cfg.reprobe_ns;
				/* The probe is over: judge it on what it measured. */
				if (a->acc_wall_ns >= a->cfg.reprobe_spin_ns / 2) {
					double share = (double)a->acc_delay_ns / (double)a->acc_wall_ns;
					a->acc_wall_ns = a->acc_delay_ns = 0;
					measured(a, now_ns, share > 1 ? 1 : share);
					if (a->phase == NT_ADAPT_FREE) { /* go on spinning */
						*slice_ns = UINT64_MAX;
						return a->mode = NT_MODE_SPIN;
					}
				}
			}
			if (!a->reprobing && now_ns >= a->next_reprobe_ns) {
				a->reprobing = true;
				a->reprobe_end_ns = now_ns + a->cfg.reprobe_spin_ns;
				/* Measure this probe on its own. */
				a->have_last = false;
				a->acc_wall_ns = a->acc_delay_ns = 0;
			}
			if (a->reprobing) {
				m = NT_MODE_SPIN;
				slice = min_u64(slice, until(a->reprobe_end_ns, now_ns));
			} else {
				slice = min_u64(slice, until(a->next_reprobe_ns, now_ns));
			}
		}
		break;
	}
	if (m != a->mode) {
		a->switches++;
		a->mode = m;
	}
	*slice_ns = slice;
	return m;
}
