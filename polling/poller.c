/* The poller: a watch list over a backend, and the four policies. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <noisetool/clock.h>
#include <noisetool/poller.h>
#include <noisetool-private/schedstat.h>

#include "adapt.h"
#include "backend.h"

enum { SAMPLE_EVERY_NS = 1000000 }; /* run-delay reads while spinning: ~0.5 us per ms */

struct nt_poller {
	struct nt_poller_config cfg;
	const struct nt_backend_ops *ops;
	struct nt_backend *backend;
	struct nt_watch **watches;
	int nwatches, cap;
	struct nt_adapt adapt;
	int schedstat_fd, stat_fd;
	/* the CPU's accounting while sleeping: a baseline, and when to read it next */
	int stat_cpu;
	uint64_t stat_wall_ns, stat_busy_ticks, stat_own_ns, next_stat_ns;
	int slack_set;
	long old_slack;
	uint64_t last_event_ns;
	enum nt_poll_mode decided; /* nt_poller_decide's last answer */
	uint64_t next_sample_ns;   /* the next run-delay read while runnable */
	long vol_at_create;
	struct nt_poller_stats st;
	char stat_buf[16384]; /* /proc/stat, read while sleeping (one per poller: thread-safe) */
};

static long voluntary_switches(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : 0;
}

static uint64_t run_delay_ns(const struct nt_poller *p)
{
	char buf[96];
	uint64_t run = 0, delay = 0, count = 0;
	ssize_t n = pread(p->schedstat_fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	nt_parse_schedstat(buf, &run, &delay, &count);
	return delay;
}

int nt_poller_create(struct nt_poller **out, const struct nt_poller_config *cfg)
{
	static const struct nt_poller_config defaults = NT_POLLER_CONFIG_DEFAULT;
	if (!out)
		return -EINVAL;
	const struct nt_poller_config *c = cfg ? cfg : &defaults;
	if ((unsigned)c->backend > NT_POLL_SELECT || (unsigned)c->policy > NT_POLICY_ADAPTIVE ||
	    (c->policy == NT_POLICY_TIMED && c->timed_ns == 0) ||
	    (c->policy == NT_POLICY_ADAPTIVE &&
	     (!(c->free_share > 0) || !(c->contended_share > c->free_share) || c->measure_ns == 0 ||
	      c->reprobe_ns == 0 || c->trial_ns == 0 || !(c->sleep_win > 0 && c->sleep_win <= 2))))
		return -EINVAL;
	struct nt_poller *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	p->cfg = *c;
	p->ops = c->backend == NT_POLL_SELECT ? &nt_backend_select : &nt_backend_epoll;
	int rc = p->ops->open(&p->backend);
	if (rc) {
		free(p);
		return rc;
	}
	nt_clock_init();
	p->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	p->stat_fd = c->policy == NT_POLICY_ADAPTIVE ? open("/proc/stat", O_RDONLY | O_CLOEXEC) : -1;
	p->stat_cpu = -1;
	nt_adapt_init(&p->adapt, &p->cfg, nt_clock_monotonic_ns());
	p->vol_at_create = voluntary_switches();
	*out = p;
	return 0;
}

void nt_poller_destroy(struct nt_poller *p)
{
	if (!p)
		return;
	if (p->slack_set)
		prctl(PR_SET_TIMERSLACK, (unsigned long)p->old_slack, 0, 0, 0);
	for (int i = 0; i < p->nwatches; i++)
		free(p->watches[i]);
	free(p->watches);
	p->ops->close(p->backend);
	if (p->schedstat_fd >= 0)
		close(p->schedstat_fd);
	if (p->stat_fd >= 0)
		close(p->stat_fd);
	free(p);
}

static int find(const struct nt_poller *p, int fd)
{
	for (int i = 0; i < p->nwatches; i++)
		if (p->watches[i]->fd == fd)
			return i;
	return -1;
}

int nt_poller_add(struct nt_poller *p, int fd, uint32_t events, void *user)
{
	if (!p || fd < 0 || !(events & (NT_POLL_IN | NT_POLL_OUT)) ||
	    (events & ~(NT_POLL_IN | NT_POLL_OUT)))
		return -EINVAL;
	if (find(p, fd) >= 0)
		return -EEXIST;
	if (p->nwatches == p->cap) {
		int cap = p->cap ? 2 * p->cap : 8;
		struct nt_watch **grown = realloc(p->watches, (size_t)cap * sizeof *grown);
		if (!grown)
			return -ENOMEM;
		p->watches = grown;
		p->cap = cap;
	}
	struct nt_watch *w = malloc(sizeof *w);
	if (!w)
		return -ENOMEM;
	*w = (struct nt_watch){ fd, events, user };
	int rc = p->ops->add(p->backend, w);
	if (rc) {
		free(w);
		return rc;
	}
	p->watches[p->nwatches++] = w;
	return 0;
}

int nt_poller_remove(struct nt_poller *p, int fd)
{
	int i = p ? find(p, fd) : -1;
	if (i < 0)
		return -ENOENT;
	p->ops->remove(p->backend, fd);
	free(p->watches[i]);
	p->watches[i] = p->watches[--p->nwatches];
	return 0;
}

static int poll_once(struct nt_poller *p, struct nt_poll_event *ev, int max, int64_t timeout_ns)
{
	p->st.polls++;
	return p->ops->wait(p->backend, p->watches, p->nwatches, ev, max, timeout_ns);
}

/* Spin with zero-timeout polls until an event, until_ns, or the spin budget. While spinning the
 * thread stays runnable, so its run delay tells the competitor's share (adaptive only). */
static int spin(struct nt_poller *p, struct nt_poll_event *ev, int max, uint64_t until_ns,
		bool sample)
{
	uint64_t start = nt_clock_monotonic_ns(), now = start;
	uint64_t budget_end = p->cfg.spin_budget_ns ? start + p->cfg.spin_budget_ns : UINT64_MAX;
	int n = 0;
	for (;;) {
		/* One run-delay read per ms of runnable time, across waits (a read per wait cost
		 * ~5 % of a 4-byte echo's round trip). */
		if (sample && now >= p->next_sample_ns) {
			nt_adapt_runnable_sample(&p->adapt, now, run_delay_ns(p));
			p->next_sample_ns = now + SAMPLE_EVERY_NS;
		}
		n = poll_once(p, ev, max, 0);
		now = nt_clock_monotonic_ns();
		if (n != 0 || now >= until_ns || now >= budget_end)
			break;
	}
	p->st.spin_ns += now - start;
	if (n == 0 && now >= budget_end && now < until_ns) { /* budget spent: block for the rest */
		uint64_t t = nt_clock_monotonic_ns();
		n = poll_once(p, ev, max, until_ns == UINT64_MAX ? -1 : (int64_t)(until_ns - t));
		p->st.sleep_ns += nt_clock_monotonic_ns() - t;
		if (sample) {
			nt_adapt_slept(&p->adapt);
			p->next_sample_ns = 0; /* a new stretch starts with a reading */
		}
	}
	return n;
}

static int sleep_wait(struct nt_poller *p, struct nt_poll_event *ev, int max, uint64_t until_ns)
{
	uint64_t t = nt_clock_monotonic_ns();
	int n = poll_once(p, ev, max, until_ns == UINT64_MAX ? -1 : (int64_t)(until_ns > t ? until_ns - t : 0));
	p->st.sleep_ns += nt_clock_monotonic_ns() - t;
	return n;
}

/* The configured timer slack on this thread while the poller lives (restored by destroy). */
static void use_timer_slack(struct nt_poller *p)
{
	if (p->slack_set)
		return;
	p->old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, (unsigned long)(p->cfg.timer_slack_ns ? p->cfg.timer_slack_ns : 1), 0,
	      0, 0);
	p->slack_set = 1;
}

static int timed(struct nt_poller *p, struct nt_poll_event *ev, int max, uint64_t deadline)
{
	use_timer_slack(p);
	for (;;) {
		uint64_t now = nt_clock_monotonic_ns();
		uint64_t left = deadline > now ? deadline - now : 0;
		int n = sleep_wait(p, ev, max, now + (left < p->cfg.timed_ns ? left : p->cfg.timed_ns));
		if (n != 0 || nt_clock_monotonic_ns() >= deadline)
			return n;
	}
}

/* Busy ticks (USER_HZ) of one CPU from /proc/stat: everything but idle and iowait. */
static int cpu_busy_ticks(struct nt_poller *p, int cpu, uint64_t *ticks)
{
	char *buf = p->stat_buf;
	ssize_t n = pread(p->stat_fd, buf, sizeof p->stat_buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char key[32];
	snprintf(key, sizeof key, "\ncpu%d ", cpu);
	const char *line = strstr(buf, key);
	if (!line)
		return -1;
	unsigned long long v[8] = { 0 };
	if (sscanf(line + strlen(key), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 4)
		return -1;
	*ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]; /* user nice system irq softirq steal */
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* While sleeping: every reprobe_ns, the share of our CPU that other tasks used (its busy time
 * not ours). /proc/stat counts in 10 ms ticks, so one tick per window is taken as doubt. */
static void sleeping_share(struct nt_poller *p, uint64_t now)
{
	if (p->stat_fd < 0)
		return;
	int cpu = sched_getcpu();
	uint64_t ticks;
	/* Not due yet: no read (/proc/stat costs ~6 us here, nt_poller_decide is called per nap). */
	if (cpu < 0 || (cpu == p->stat_cpu && now < p->next_stat_ns) ||
	    cpu_busy_ticks(p, cpu, &ticks) != 0)
		return;
	uint64_t own = thread_cpu_ns();
	if (cpu == p->stat_cpu) {
		double wall = (double)(now - p->stat_wall_ns);
		double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
		double others = (double)(ticks - p->stat_busy_ticks) * tick_ns -
				(double)(own - p->stat_own_ns);
		double share = (others - tick_ns) / wall;
		nt_adapt_cpu_share(&p->adapt, now, share < 0 ? 0 : share);
	}
	p->stat_cpu = cpu;
	p->stat_wall_ns = now;
	p->stat_busy_ticks = ticks;
	p->stat_own_ns = own;
	p->next_stat_ns = now + p->cfg.reprobe_ns;
}

static int adaptive(struct nt_poller *p, struct nt_poll_event *ev, int max, uint64_t deadline,
		    enum nt_poll_mode *used)
{
	for (;;) {
		uint64_t now = nt_clock_monotonic_ns(), slice;
		enum nt_poll_mode m = nt_adapt_mode(&p->adapt, now, &slice);
		uint64_t until = slice == UINT64_MAX || now + slice > deadline ? deadline : now + slice;
		int n;
		*used = m;
		if (m == NT_MODE_SPIN) {
			p->stat_cpu = -1; /* a sleeping stretch starts anew */
			n = spin(p, ev, max, until, true);
		} else {
			sleeping_share(p, now);
			if (p->stat_cpu >= 0 && p->next_stat_ns < until)
				until = p->next_stat_ns;
			n = sleep_wait(p, ev, max, until);
			nt_adapt_slept(&p->adapt);
			p->next_sample_ns = 0;
		}
		if (n != 0 || nt_clock_monotonic_ns() >= deadline)
			return n;
	}
}

int nt_poller_wait(struct nt_poller *p, struct nt_poll_event *ev, int max, int64_t timeout_ns)
{
	if (!p || !ev || max <= 0)
		return -EINVAL;
	uint64_t start = nt_clock_monotonic_ns();
	uint64_t deadline = timeout_ns < 0 ? UINT64_MAX : start + (uint64_t)timeout_ns;
	enum nt_poll_mode used = NT_MODE_SPIN;
	int n;
	p->st.waits++;
	switch (p->cfg.policy) {
	case NT_POLICY_BUSY:
		n = spin(p, ev, max, deadline, false);
		break;
	case NT_POLICY_TIMED:
		n = timed(p, ev, max, deadline);
		used = NT_MODE_SLEEP;
		break;
	case NT_POLICY_BLOCKING:
		n = sleep_wait(p, ev, max, deadline);
		used = NT_MODE_SLEEP;
		break;
	default:
		n = adaptive(p, ev, max, deadline, &used);
		break;
	}
	if (n > 0) {
		uint64_t now = nt_clock_monotonic_ns();
		if (p->last_event_ns)
			nt_adapt_cycle(&p->adapt, used, now - p->last_event_ns);
		p->last_event_ns = now;
		p->st.events += (uint64_t)n;
	}
	return n;
}

void nt_poller_get_stats(const struct nt_poller *p, struct nt_poller_stats *s)
{
	*s = p->st;
	s->mode = p->cfg.policy == NT_POLICY_ADAPTIVE ? p->adapt.mode
		  : p->cfg.policy == NT_POLICY_BUSY   ? NT_MODE_SPIN
						      : NT_MODE_SLEEP;
	s->switches = p->adapt.switches;
	s->competitor_share = p->adapt.share;
	s->share_measurements = p->adapt.measurements;
	s->contended = p->adapt.phase != NT_ADAPT_FREE;
	s->trials = p->adapt.trials;
	s->trials_aborted = p->adapt.aborted;
	s->trial_spin_cycle_ns = p->adapt.last_cycle_ns[NT_MODE_SPIN];
	s->trial_sleep_cycle_ns = p->adapt.last_cycle_ns[NT_MODE_SLEEP];
	long vol = voluntary_switches() - p->vol_at_create;
	s->voluntary_switches = vol > 0 ? (uint64_t)vol : 0;
}

enum nt_poll_mode nt_poller_decide(struct nt_poller *p, uint64_t *slice_ns)
{
	uint64_t now = nt_clock_monotonic_ns();
	if (p->decided == NT_MODE_SPIN)
		nt_adapt_runnable_sample(&p->adapt, now, run_delay_ns(p)); /* it was runnable */
	else
		sleeping_share(p, now);
	enum nt_poll_mode m = nt_adapt_mode(&p->adapt, now, slice_ns);
	if (m == NT_MODE_SPIN && p->decided != NT_MODE_SPIN)
		p->stat_cpu = -1;
	p->decided = m;
	return m;
}

void nt_poller_nap(struct nt_poller *p, uint64_t sleep_ns)
{
	use_timer_slack(p);
	uint64_t t = nt_clock_monotonic_ns();
	struct timespec ts = { (time_t)(sleep_ns / 1000000000u), (long)(sleep_ns % 1000000000u) };
	nanosleep(&ts, NULL);
	p->st.sleep_ns += nt_clock_monotonic_ns() - t;
	nt_adapt_slept(&p->adapt);
}

enum nt_poll_mode nt_poller_preference(const struct nt_poller *p)
{
	return p->adapt.phase == NT_ADAPT_FREE ? NT_MODE_SPIN : p->adapt.chosen;
}

void nt_poller_event(struct nt_poller *p)
{
	p->st.events++;
	if (p->adapt.phase == NT_ADAPT_FREE) { /* cycles count only on a shared CPU */
		p->last_event_ns = 0;
		return;
	}
	uint64_t now = nt_clock_monotonic_ns();
	if (p->last_event_ns)
		nt_adapt_cycle(&p->adapt, p->decided, now - p->last_event_ns);
	p->last_event_ns = now;
}

static const char *const policy_names[] = { "busy", "timed", "blocking", "adaptive" };
static const char *const backend_names[] = { "epoll", "select" };

const char *nt_poll_policy_name(enum nt_poll_policy policy)
{
	return (unsigned)policy <= NT_POLICY_ADAPTIVE ? policy_names[policy] : "?";
}

int nt_poll_policy_parse(const char *name, enum nt_poll_policy *out)
{
	for (int i = 0; name && i <= NT_POLICY_ADAPTIVE; i++)
		if (!strcmp(name, policy_names[i])) {
			*out = (enum nt_poll_policy)i;
			return 0;
		}
	return -EINVAL;
}

const char *nt_poll_backend_name(enum nt_poll_backend backend)
{
	return (unsigned)backend <= NT_POLL_SELECT ? backend_names[backend] : "?";
}

int nt_poll_backend_parse(const char *name, enum nt_poll_backend *out)
{
	for (int i = 0; name && i <= NT_POLL_SELECT; i++)
		if (!strcmp(name, backend_names[i])) {
			*out = (enum nt_poll_backend)i;
			return 0;
		}
	return -EINVAL;
}
