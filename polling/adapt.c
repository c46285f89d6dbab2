/* The adaptive policy's state machine. */
#include <string.h>

#include "adapt.h"

void nt_adapt_init(struct nt_adapt *a, const struct nt_poller_config *cfg, uint64_t now_ns)
{
	(void)now_ns;
	memset(a, 0, sizeof *a);
	a->cfg = *cfg;
	a->phase = NT_ADAPT_FREE;
	a->mode = NT_MODE_SPIN;
	a->dwell_ns = cfg->dwell_ns;
}

static enum nt_poll_mode other(enum nt_poll_mode m)
{
	return m == NT_MODE_SPIN ? NT_MODE_SLEEP : NT_MODE_SPIN;
}

static double mean(const struct nt_adapt_cycles *c)
{
	return c->n ? c->sum_ns / (double)c->n : 0;
}

static void dwell(struct nt_adapt *a, uint64_t now_ns, enum nt_poll_mode m, uint64_t len_ns)
{
	a->phase = NT_ADAPT_DWELL;
	a->chosen = m;
	a->phase_end_ns = now_ns + len_ns;
	memset(&a->dwell, 0, sizeof a->dwell);
}

/* The CPU became shared: resume the choice held a short while ago (a load that comes and
 * goes), else keep spinning a short while to see what spinning gives now. */
static void shared(struct nt_adapt *a, uint64_t now_ns)
{
	if (a->have_last_choice && now_ns - a->freed_at_ns < NT_ADAPT_RESUME_NS) {
		a->dwell_ns = a->last_dwell_ns;
		dwell(a, now_ns, a->last_chosen, a->dwell_ns);
		return;
	}
	/* The first look lasts half a trial, or trial_min_ns when set: MPI waits' 200 ms trials
	 * would spin for 100 ms first, 10 allreduces of 8-16 ms with 4 ranks on 2 cores. */
	a->dwell_ns = a->cfg.dwell_ns;
	dwell(a, now_ns, NT_MODE_SPIN, a->cfg.trial_min_ns ? a->cfg.trial_min_ns : a->cfg.trial_ns / 2);
}

static void freed(struct nt_adapt *a, uint64_t now_ns)
{
	if (a->phase == NT_ADAPT_DWELL || a->phase == NT_ADAPT_TRIAL) {
		a->have_last_choice = true;
		a->last_chosen = a->chosen;
		a->last_dwell_ns = a->dwell_ns;
		a->freed_at_ns = now_ns;
	}
	a->phase = NT_ADAPT_FREE;
	a->dwell_ns = a->cfg.dwell_ns;
}

/* The end of a trial (or its abort): keep the better mode. */
static void judge(struct nt_adapt *a, uint64_t now_ns)
{
	enum nt_poll_mode o = other(a->chosen);
	double mine = mean(&a->dwell), theirs = mean(&a->trial);
	bool comparable = a->dwell.n >= NT_ADAPT_MIN_CYCLES && a->trial.n >= NT_ADAPT_MIN_CYCLES;
	if (comparable) {
		a->last_cycle_ns[a->chosen] = mine;
		a->last_cycle_ns[o] = theirs;
	}
	/* The other mode wins when it is 10 % better; sleeping wins below cfg.sleep_win (MPI
	 * waits: 1.05, at most 5 % worse: SOR beside a hog had cycles within 5 % either way and
	 * ran 10 % shorter sleeping; a server is judged by its latency, so the socket poller
	 * keeps 0.9). */
	double margin = o == NT_MODE_SLEEP ? a->cfg.sleep_win : 0.9;
	if (comparable && theirs < margin * mine) {
		a->dwell_ns = a->cfg.dwell_ns;
		dwell(a, now_ns, o, a->dwell_ns);
	} else {
		if (a->dwell_ns < NT_ADAPT_DWELL_MAX * a->cfg.dwell_ns)
			a->dwell_ns *= 2;
		dwell(a, now_ns, a->chosen, a->dwell_ns);
	}
}

static void start_trial(struct nt_adapt *a, uint64_t now_ns)
{
	if (a->dwell.n < NT_ADAPT_MIN_CYCLES) {
		/* Too few events to judge anything: on a shared CPU, leave it to the other task,
		 * and look again soon (traffic may start). */
		a->dwell_ns = a->cfg.dwell_ns;
		dwell(a, now_ns, NT_MODE_SLEEP, 2 * a->cfg.trial_ns);
		return;
	}
	a->phase = NT_ADAPT_TRIAL;
	a->phase_end_ns = now_ns + a->cfg.trial_ns;
	memset(&a->trial, 0, sizeof a->trial);
	a->trials++;
}

/* A share measurement: move between free and shared. */
static void measured(struct nt_adapt *a, uint64_t now_ns, double share)
{
	a->share = share > 1 ? 1 : share < 0 ? 0 : share;
	a->measurements++;
	if (a->phase == NT_ADAPT_FREE) {
		a->over = a->share > a->cfg.contended_share ? a->over + 1 : 0;
		if (a->over >= NT_ADAPT_SHARED_AFTER) {
			a->over = 0;
			shared(a, now_ns);
		}
	} else {
		a->under = a->share < a->cfg.free_share ? a->under + 1 : 0;
		if (a->under >= NT_ADAPT_FREE_AFTER) {
			a->under = 0;
			freed(a, now_ns);
		}
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
		measured(a, now_ns, share);
	}
}

void nt_adapt_slept(struct nt_adapt *a)
{
	a->have_last = false;
}

void nt_adapt_cpu_share(struct nt_adapt *a, uint64_t now_ns, double share)
{
	measured(a, now_ns, share);
}

void nt_adapt_cycle(struct nt_adapt *a, enum nt_poll_mode mode, uint64_t cycle_ns)
{
	if (a->phase == NT_ADAPT_DWELL && mode == a->chosen) {
		a->dwell.sum_ns += (double)cycle_ns;
		a->dwell.n++;
	} else if (a->phase == NT_ADAPT_TRIAL && mode != a->chosen) {
		a->trial.sum_ns += (double)cycle_ns;
		a->trial.n++;
	}
}

enum nt_poll_mode nt_adapt_mode(struct nt_adapt *a, uint64_t now_ns, uint64_t *slice_ns)
{
	/* A trial that is clearly worse ends at once. */
	/* (A trial of sleeping only after trial_min_ns: its first nap or yield may lose a whole
	 * tick to the competitor. Spinning shows what it gives at once.) */
	if (a->phase == NT_ADAPT_TRIAL && a->trial.n >= NT_ADAPT_MIN_CYCLES &&
	    (a->chosen == NT_MODE_SLEEP ||
	     now_ns + a->cfg.trial_ns >= a->phase_end_ns + a->cfg.trial_min_ns) &&
	    mean(&a->trial) > 1.25 * mean(&a->dwell)) {
		a->aborted++;
		judge(a, now_ns);
	}
	if (a->phase == NT_ADAPT_TRIAL && now_ns >= a->phase_end_ns)
		judge(a, now_ns);
	if (a->phase == NT_ADAPT_DWELL && now_ns >= a->phase_end_ns)
		start_trial(a, now_ns);

	enum nt_poll_mode m = NT_MODE_SPIN;
	uint64_t slice = UINT64_MAX;
	if (a->phase == NT_ADAPT_DWELL) {
		m = a->chosen;
		slice = a->phase_end_ns - now_ns;
	} else if (a->phase == NT_ADAPT_TRIAL) {
		m = other(a->chosen);
		slice = a->phase_end_ns - now_ns;
	}
	if (m != a->mode) {
		a->switches++;
		a->mode = m;
	}
	*slice_ns = slice;
	return m;
}
