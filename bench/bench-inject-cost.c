/* What one injected detour costs the target thread beyond its own length, how late the
 * injector's periodic POSIX timer fires, and how much of its CPU a thread keeps under a given
 * period and detour: the measurements behind NT_INJECT_MIN_PERIOD_NS and NT_INJECT_MAX_DUTY_PCT
 * (libnoisetool/include/noisetool/inject.h). One pinned CPU; prints three tables. */
#include "nt-config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include <noisetool/clock.h>
#include <noisetool/inject.h>
#include <noisetool/sysinfo.h>

#include "percentile.h"

/* The observing loop counts any step of the counter longer than this as time taken from it. */
#define STEP_NS 300.0

/* ------------------------------------------------------------------------------------------ */
/* A copy of the injector's mechanism (libnoisetool/inject.c): a CLOCK_MONOTONIC timer whose
 * signal goes to this thread, and a handler that spins on the counter for the detour. The real
 * injector refuses the short periods that tables 2 and 3 need; this one also records when each
 * signal arrived. */

static struct {
	timer_t timer;
	int armed;
	int sig; /* the signal taken */
	uint64_t first_ns, period_ns;
	uint64_t detour_cyc;
	uint64_t expirations; /* timer expirations so far, overruns included */
	uint64_t *late_ns;    /* arrival minus due time of each delivered signal */
	size_t nlate, caplate;
} bi;

static volatile uint64_t bi_count;

static void bi_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	int saved = errno;
	uint64_t now_ns = nt_clock_monotonic_ns();
	uint64_t t0 = nt_clock_now_cyc();
	/* This delivery covers the expiration due at first + k * period plus any overruns. */
	uint64_t due = bi.first_ns + bi.expirations * bi.period_ns;
	int over = timer_getoverrun(bi.timer);
	bi.expirations += 1 + (uint64_t)(over > 0 ? over : 0);
	if (bi.late_ns && bi.nlate < bi.caplate)
		bi.late_ns[bi.nlate++] = now_ns > due ? now_ns - due : 0;
	while (nt_clock_now_cyc() - t0 < bi.detour_cyc)
		;
	bi_count++;
	errno = saved;
}

static int bi_start(uint64_t period_ns, uint64_t detour_ns, uint64_t *late, size_t caplate)
{
	struct sigaction sa = { .sa_sigaction = bi_handler, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	bi.sig = nt_inject_signal(); /* the one the injector would take: a free one */
	if (bi.sig < 0)
		return bi.sig;
	if (sigaction(bi.sig, &sa, NULL) < 0)
		return -errno;
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = bi.sig };
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &bi.timer) < 0)
		return -errno;
	bi.armed = 1;
	bi.period_ns = period_ns;
	bi.detour_cyc = nt_clock_ns_to_cyc((double)detour_ns);
	bi.expirations = 0;
	bi.late_ns = late;
	bi.nlate = 0;
	bi.caplate = caplate;
	bi.first_ns = (nt_clock_monotonic_ns() / period_ns + 2) * period_ns;
	struct itimerspec its = {
		.it_value = { (time_t)(bi.first_ns / 1000000000u), (long)(bi.first_ns % 1000000000u) },
		.it_interval = { (time_t)(period_ns / 1000000000u), (long)(period_ns % 1000000000u) },
	};
	timer_settime(bi.timer, TIMER_ABSTIME, &its, NULL);
	return 0;
}

static void bi_stop(void)
{
	if (!bi.armed)
		return;
	bi.armed = 0;
	timer_delete(bi.timer);
	signal(bi.sig, SIG_DFL);
}

/* A storm of signals can keep the thread from ever leaving the handler: SIGALRM (a lower
 * number, so delivered before the real-time signal) stops the timer. */
static volatile sig_atomic_t rescued;

static void on_alarm(int sig)
{
	(void)sig;
	if (bi.armed) {
		struct itimerspec off = { { 0, 0 }, { 0, 0 } };
		timer_settime(bi.timer, 0, &off, NULL);
	}
	rescued = 1;
}

static void watchdog(double seconds)
{
	time_t whole = (time_t)seconds;
	struct itimerval it = { .it_value = { whole, (suseconds_t)((seconds - (double)whole) * 1e6) } };
	setitimer(ITIMER_REAL, &it, NULL);
}

/* ------------------------------------------------------------------------------------------ */

/* What the spinning thread saw over a run. */
struct seen {
	uint64_t wall_ns;
	uint64_t taken_ns; /* the sum of steps above STEP_NS: time the loop did not run */
	uint64_t detours;
	double kept_median; /* the median over WINDOW_NS windows of the share the loop ran */
};

/* Runs are judged by the median window, so that a competitor's slice or the host taking the
 * CPU for a few ms moves no result. */
#define WINDOW_NS 20e6

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Spin for wall_ns; every step above STEP_NS is time taken from the loop. With ext_ns, the
 * length of every step that holds exactly one more detour than the last (count() read at each
 * step) goes there, up to cap. */
static void spin_observe(uint64_t wall_ns, uint64_t (*count)(void), uint64_t *ext_ns, size_t cap,
			 size_t *next, struct seen *out)
{
	static double kept[4096];
	size_t nwin = 0;
	const uint64_t step = nt_clock_ns_to_cyc(STEP_NS), win = nt_clock_ns_to_cyc(WINDOW_NS);
	uint64_t n_last = count(), n0 = n_last, taken = 0, win_taken = 0;
	uint64_t t0 = nt_clock_now_cyc(), cur = t0, win0 = t0;
	const uint64_t end = t0 + nt_clock_ns_to_cyc((double)wall_ns);
	while (cur < end && !rescued) {
		uint64_t prev = cur;
		cur = nt_clock_now_cyc();
		if (cur - win0 >= win) {
			if (nwin < sizeof kept / sizeof *kept)
				kept[nwin++] = 1 - (double)win_taken / (double)(prev - win0);
			win0 = prev;
			win_taken = 0;
		}
		if (cur - prev <= step)
			continue;
		taken += cur - prev;
		win_taken += cur - prev;
		uint64_t n = count();
		if (ext_ns && n == n_last + 1 && *next < cap)
			ext_ns[(*next)++] = (uint64_t)nt_clock_cyc_to_ns(cur - prev);
		n_last = n;
	}
	out->wall_ns = (uint64_t)nt_clock_cyc_to_ns(cur - t0);
	out->taken_ns = (uint64_t)nt_clock_cyc_to_ns(taken);
	out->detours = count() - n0;
	qsort(kept, nwin, sizeof *kept, cmp_double);
	out->kept_median = nwin ? kept[nwin / 2] : 1 - (double)taken / (double)(cur - t0 + 1);
}

static uint64_t zero_count(void)
{
	return 0;
}

static uint64_t bi_count_read(void)
{
	return bi_count;
}

static double pct(uint64_t *v, size_t n, double p)
{
	return n ? (double)v[nt_nearest_rank(n, p)] : 0;
}

/* Table 1: the gap one detour makes in the thread's loop, less the detour, with the real
 * injector (a period of 1 ms, far above any floor in question). */
static int table_cost(double seconds)
{
	static const uint64_t detours_ns[] = { 1000, 10000, 100000 };
	size_t cap = (size_t)(seconds * 2000) + 16;
	uint64_t *gap = malloc(cap * sizeof *gap);
	if (!gap)
		return -ENOMEM;
	struct seen quiet;
	spin_observe((uint64_t)(seconds * 1e9), zero_count, NULL, 0, NULL, &quiet);
	printf("1. Cost of one detour beyond its length: the gap it leaves in a spinning thread's\n"
	       "   loop, less the detour (the real injector, period 1 ms, %.1f s per row). Without\n"
	       "   injection the loop lost %.3f %% of its time (median 20 ms window: ticks, host).\n\n",
	       seconds, 100 * (1 - quiet.kept_median));
	printf("%10s %8s %10s %10s %10s %10s %10s\n", "detour", "detours", "mean us", "median us",
	       "p90 us", "p99 us", "max us");
	for (size_t i = 0; i < sizeof detours_ns / sizeof *detours_ns; i++) {
		char spec[64], err[256] = "";
		struct nt_inject_spec s;
		snprintf(spec, sizeof spec, "period=1ms,detour=%lluns",
			 (unsigned long long)detours_ns[i]);
		if (nt_inject_parse(spec, &s, err, sizeof err) < 0 ||
		    nt_inject_start(&s, 0, 0, err, sizeof err) < 0) {
			fprintf(stderr, "bench-inject-cost: %s: %s\n", spec, err);
			free(gap);
			return -EINVAL;
		}
		size_t n = 0;
		struct seen r;
		spin_observe((uint64_t)(seconds * 1e9), nt_inject_count, gap, cap, &n, &r);
		nt_inject_stop();
		double sum = 0;
		for (size_t k = 0; k < n; k++) {
			gap[k] = gap[k] > detours_ns[i] ? gap[k] - detours_ns[i] : 0;
			sum += (double)gap[k];
		}
		nt_sort_u64(gap, n);
		printf("%7.0f us %8zu %10.2f %10.2f %10.2f %10.2f %10.2f\n", detours_ns[i] / 1e3, n,
		       n ? sum / (double)n / 1e3 : 0, pct(gap, n, 50) / 1e3, pct(gap, n, 90) / 1e3,
		       pct(gap, n, 99) / 1e3, n ? (double)gap[n - 1] / 1e3 : 0);
	}
	free(gap);
	printf("\n");
	return 0;
}

/* Sleep for wall_ns in nanosleeps of the rest (a signal cuts one short). */
static void sleep_for(uint64_t wall_ns)
{
	uint64_t end = nt_clock_monotonic_ns() + wall_ns;
	for (uint64_t now; (now = nt_clock_monotonic_ns()) < end;) {
		struct timespec ts = { (time_t)((end - now) / 1000000000u),
				       (long)((end - now) % 1000000000u) };
		nanosleep(&ts, NULL);
	}
}

/* Table 2: how late each periodic signal arrives after its due time, with the target thread
 * spinning or asleep, and asleep under the default timer slack or 1 ns of it. */
static int table_lateness(double seconds)
{
	static const uint64_t periods_ns[] = { 100000, 1000000 };
	size_t cap = (size_t)(seconds * 1e9 / 100000) + 16;
	uint64_t *late = malloc(cap * sizeof *late);
	if (!late)
		return -ENOMEM;
	long slack0 = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	printf("2. How late the periodic timer's signal reaches the handler (arrival minus due time;\n"
	       "   a detour of 1 us, %.1f s per row; the thread's timer slack is %ld ns by default)\n\n",
	       seconds, slack0);
	printf("%8s %-22s %8s %9s %10s %10s %10s %10s\n", "period", "target thread", "signals",
	       "overruns", "median us", "p90 us", "p99 us", "max us");
	for (size_t i = 0; i < sizeof periods_ns / sizeof *periods_ns; i++) {
		for (int state = 0; state < 3; state++) {
			static const char *names[] = { "spinning", "asleep, default slack",
						       "asleep, slack 1 ns" };
			prctl(PR_SET_TIMERSLACK, state == 2 ? 1 : slack0, 0, 0, 0);
			int rc = bi_start(periods_ns[i], 1000, late, cap);
			if (rc < 0) {
				fprintf(stderr, "bench-inject-cost: timer: %s\n", strerror(-rc));
				free(late);
				return rc;
			}
			struct seen r;
			if (state == 0)
				spin_observe((uint64_t)(seconds * 1e9), zero_count, NULL, 0, NULL, &r);
			else
				sleep_for((uint64_t)(seconds * 1e9));
			bi_stop();
			size_t n = bi.nlate;
			uint64_t over = bi.expirations - n;
			nt_sort_u64(late, n);
			printf("%5.0f us %-22s %8zu %9llu %10.2f %10.2f %10.2f %10.2f\n",
			       periods_ns[i] / 1e3, names[state], n, (unsigned long long)over,
			       pct(late, n, 50) / 1e3, pct(late, n, 90) / 1e3, pct(late, n, 99) / 1e3,
			       n ? (double)late[n - 1] / 1e3 : 0);
		}
	}
	prctl(PR_SET_TIMERSLACK, slack0, 0, 0, 0);
	free(late);
	printf("\n");
	return 0;
}

/* Table 3: the share of its CPU a spinning thread keeps under period P and detour D, against the
 * 1 - D/P it would keep if a detour cost only its length; the difference, per detour, is the
 * injector's own cost. A row whose loop never ran again is cut off by SIGALRM. */
static int table_progress(double seconds)
{
	static const uint64_t rows[][2] = {
		{ 2000000, 1000 }, { 1000000, 1000 }, { 500000, 1000 }, { 200000, 1000 },
		{ 100000, 1000 },  { 50000, 1000 },   { 20000, 1000 },  { 10000, 1000 },
		{ 1000000, 500000 }, { 1000000, 900000 }, { 1000000, 950000 }, { 1000000, 980000 },
		{ 1000000, 990000 }, { 100000, 50000 },   { 100000, 80000 },   { 100000, 90000 },
		{ 10000, 9000 },
	};

	printf("3. The share of the CPU a spinning thread keeps under injection, against the share\n"
	       "   it keeps without (measured just before, %.2f s each; the median 20 ms window, so\n"
	       "   that a competitor's share cancels). expected: 1 - duty, if a detour cost only its\n"
	       "   length; overhead: the share of each period lost beyond that; per detour: the\n"
	       "   overhead in us.\n\n",
	       seconds);
	printf("%9s %9s %7s %8s %9s %9s %10s %11s\n", "period", "detour", "duty", "detours",
	       "expected", "kept", "overhead", "per detour");
	signal(SIGALRM, on_alarm);
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		uint64_t p = rows[i][0], d = rows[i][1];
		rescued = 0;
		struct seen quiet;
		spin_observe((uint64_t)(seconds * 1e9), zero_count, NULL, 0, NULL, &quiet);
		int rc = bi_start(p, d, NULL, 0);
		if (rc < 0)
			return rc;
		bi_count = 0;
		watchdog(seconds + 1.0);
		struct seen r;
		spin_observe((uint64_t)(seconds * 1e9), bi_count_read, NULL, 0, NULL, &r);
		watchdog(0);
		bi_stop();
		double kept = quiet.kept_median > 0 ? r.kept_median / quiet.kept_median : 0;
		double duty = (double)d / (double)p, over = 1 - duty - kept;
		if (rescued)
			printf("%6.0f us %6.0f us %6.1f%% %8llu %8.1f%% %9s   the loop never ran again: "
			       "stopped by the watchdog\n",
			       p / 1e3, d / 1e3, 100 * duty, (unsigned long long)bi_count,
			       100 * (1 - duty), "0");
		else
			printf("%6.0f us %6.0f us %6.1f%% %8llu %8.1f%% %8.2f%% %9.2f%% %8.2f us\n",
			       p / 1e3, d / 1e3, 100 * duty, (unsigned long long)r.detours,
			       100 * (1 - duty), 100 * kept, 100 * over, over * (double)p / 1e3);
	}
	signal(SIGALRM, SIG_DFL);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	if (!(seconds > 0) || seconds > 60) {
		fprintf(stderr, "usage: bench-inject-cost [SECONDS per row, default 1]\n");
		return 2;
	}
	int cpus[1024];
	int n = nt_allowed_cpus(cpus, 1024);
	int cpu = n > 0 ? cpus[n - 1] : 0;
	if (nt_pin_self(cpu) != 0) {
		fprintf(stderr, "bench-inject-cost: cannot pin to CPU %d\n", cpu);
		return 1;
	}
	nt_clock_init();
	struct nt_sysinfo si;
	nt_sysinfo_collect(&si);
	printf("bench-inject-cost: CPU %d of %d, kernel %s, HZ %d, clocksource %s\n\n", cpu,
	       si.online_cpus, si.kernel, si.kernel_hz, si.clocksource);
	if (table_cost(seconds) < 0 || table_lateness(seconds) < 0 || table_progress(seconds) < 0)
		return 1;
	return 0;
}
