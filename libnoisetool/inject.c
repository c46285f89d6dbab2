/* The noise injector: a POSIX timer aimed at one thread (SIGEV_THREAD_ID) whose handler spins
 * on the cycle counter for the detour length. The handler re-arms a one-shot timer (the next
 * multiple of the period, or the trace's next detour, replayed in a loop; timer_settime is
 * async-signal-safe), and only while its signal is still its own: a handler the application
 * puts on that signal ends injection instead of receiving a signal every period. */
#include "nt-config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <noisetool/clock.h>
#include <noisetool/inject.h>
#include <noisetool/noise.h>

#include <noisetool-private/infile.h>

#include "errmsg.h"
#include "units.h"

/* What one detour costs the target beyond its length here, for messages (inject.h gives the
 * measurement behind NT_INJECT_MIN_PERIOD_NS). */
#define SIGNAL_COST_US 19

/* "100us" -> ns. A bare number is us. Returns 0 or -EINVAL. */
static int parse_duration(const char *s, size_t len, uint64_t *out_ns)
{
	return nt_parse_duration_ns(s, len, 1e3, out_ns);
}

/* One element of a ranks list: "3" or "8-11". */
static int parse_ranks_item(const char *s, size_t len, struct nt_inject_spec *out)
{
	char buf[32];
	if (len == 0 || len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	char *end;
	long a = strtol(buf, &end, 10), b = a;
	if (end == buf || a < 0 || buf[0] == '-' || buf[0] == '+')
		return -EINVAL;
	if (*end == '-') {
		const char *q = end + 1;
		b = strtol(q, &end, 10);
		if (end == q || b < a)
			return -EINVAL;
	}
	if (*end || b > 0x7fffffff)
		return -EINVAL;
	for (long r = a; r <= b; r++) {
		if (out->nranks >= NT_INJECT_MAX_RANKS)
			return -EINVAL;
		out->ranks[out->nranks++] = (int)r;
	}
	return 0;
}

/* NT_INJECT_MAX_DUTY_PCT of period_ns, rounded down (without overflow for any period). */
static uint64_t max_detour_ns(uint64_t period_ns)
{
	return period_ns / 100 * NT_INJECT_MAX_DUTY_PCT +
	       period_ns % 100 * NT_INJECT_MAX_DUTY_PCT / 100;
}

/* A period and a detour the injector can honour: the period at least NT_INJECT_MIN_PERIOD_NS,
 * the detour shorter and at most NT_INJECT_MAX_DUTY_PCT of it. what names them in the message.
 * Returns 0, or -EINVAL with the reason in err. */
static int check_periodic(uint64_t period_ns, uint64_t detour_ns, const char *what, char *err,
			  size_t errsz)
{
	char a[32], b[32];
	if (period_ns < NT_INJECT_MIN_PERIOD_NS)
		return nt_err_invalid(err, errsz,
				      "'%s': the period must be at least %s: each detour also costs "
				      "~%d us here (the timer signal's delivery and return), %.0f %% of "
				      "%s, and a period under ~%d us never lets the job run",
				      what, nt_fmt_duration(NT_INJECT_MIN_PERIOD_NS, a), SIGNAL_COST_US,
				      SIGNAL_COST_US * 1e5 / NT_INJECT_MIN_PERIOD_NS,
				      nt_fmt_duration(NT_INJECT_MIN_PERIOD_NS, b), SIGNAL_COST_US);
	if (detour_ns >= period_ns)
		return nt_err_invalid(err, errsz, "'%s': the detour must be shorter than the period",
				      what);
	if (detour_ns > max_detour_ns(period_ns))
		return nt_err_invalid(err, errsz,
				      "'%s': the detour may be at most %u %% of the period (%s): the "
				      "job needs the rest, and each detour costs ~%d us beyond its "
				      "length here",
				      what, NT_INJECT_MAX_DUTY_PCT,
				      nt_fmt_duration(max_detour_ns(period_ns), a),
				      SIGNAL_COST_US);
	return 0;
}

int nt_inject_parse(const char *spec, struct nt_inject_spec *out, char *err, size_t errsz)
{
	if (!spec || !out)
		return -EINVAL;
	*out = (struct nt_inject_spec){ .mode = NT_INJECT_UNSYNC, .seed = 1, .all_ranks = true };
	bool have_period = false, have_detour = false, in_ranks = false;
	const char *p = spec;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		char item[128];
		snprintf(item, sizeof item, "%.*s", (int)len, p);
		if (!eq && in_ranks) { /* ranks=1,3: a further rank */
			if (parse_ranks_item(p, len, out) < 0)
				goto bad_ranks;
		} else if (!eq) {
			nt_err_set(err, errsz, "'%s': expected key=value (keys: period, detour, mode, ranks, seed, trace)",
			     item);
			return -EINVAL;
		} else {
			size_t klen = (size_t)(eq - p);
			const char *v = eq + 1;
			size_t vlen = len - klen - 1;
			in_ranks = false;
			if (klen == 6 && strncmp(p, "period", 6) == 0) {
				if (parse_duration(v, vlen, &out->period_ns) < 0 || out->period_ns == 0)
					goto bad_duration;
				have_period = true;
			} else if (klen == 6 && strncmp(p, "detour", 6) == 0) {
				if (parse_duration(v, vlen, &out->detour_ns) < 0 || out->detour_ns == 0)
					goto bad_duration;
				have_detour = true;
			} else if (klen == 4 && strncmp(p, "mode", 4) == 0) {
				if (vlen == 4 && strncmp(v, "sync", 4) == 0)
					out->mode = NT_INJECT_SYNC;
				else if (vlen == 6 && strncmp(v, "unsync", 6) == 0)
					out->mode = NT_INJECT_UNSYNC;
				else {
					nt_err_set(err, errsz, "'%s': mode is sync or unsync", item);
					return -EINVAL;
				}
			} else if (klen == 4 && strncmp(p, "seed", 4) == 0) {
				char *end;
				char buf[32];
				snprintf(buf, sizeof buf, "%.*s", (int)vlen, v);
				errno = 0;
				out->seed = strtoull(buf, &end, 10);
				if (!vlen || *end || errno || buf[0] == '-') {
					nt_err_set(err, errsz, "'%s': seed is a whole number", item);
					return -EINVAL;
				}
			} else if (klen == 5 && strncmp(p, "ranks", 5) == 0) {
				out->all_ranks = false;
				in_ranks = true;
				if (parse_ranks_item(v, vlen, out) < 0)
					goto bad_ranks;
			} else if (klen == 5 && strncmp(p, "trace", 5) == 0) {
				if (vlen == 0 || vlen >= sizeof out->trace) {
					nt_err_set(err, errsz, "'%s': trace needs a file name", item);
					return -EINVAL;
				}
				memcpy(out->trace, v, vlen);
				out->trace[vlen] = 0;
			} else {
				nt_err_set(err, errsz, "'%s': unknown key (keys: period, detour, mode, ranks, seed, trace)",
				     item);
				return -EINVAL;
			}
		}
		p += len + (comma ? 1 : 0);
		if (comma && !*p) {
			nt_err_set(err, errsz, "'%s': ends with a comma", spec);
			return -EINVAL;
		}
		continue;
bad_duration:
		nt_err_set(err, errsz, "'%s': expected a positive duration like 100us, 2.5ms or 1s", item);
		return -EINVAL;
bad_ranks:
		nt_err_set(err, errsz, "'%s': ranks is a list of ranks and ranges like 1,3,8-11 (at most 256)",
		     item);
		return -EINVAL;
	}
	if (out->trace[0])
		return 0;
	if (!have_period || !have_detour) {
		nt_err_set(err, errsz, "'%s': needs period= and detour= (or trace=FILE)", spec);
		return -EINVAL;
	}
	return check_periodic(out->period_ns, out->detour_ns, spec, err, errsz);
}

bool nt_inject_targets(const struct nt_inject_spec *s, int rank)
{
	if (!s)
		return false;
	if (s->all_ranks)
		return true;
	for (uint32_t i = 0; i < s->nranks; i++)
		if (s->ranks[i] == rank)
			return true;
	return false;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* Sort v[0..n) and drop repeats. Returns the new count. */
static size_t sort_unique(int *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_int);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	return m;
}

/* Sorted, distinct ranks as a list with ranges, "1,3,8-11" (cut short at bufsz). */
static void ranks_str(const int *v, size_t n, char *buf, size_t bufsz)
{
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && len < bufsz;) {
		size_t j = i;
		while (j + 1 < n && v[j] < INT_MAX && v[j + 1] == v[j] + 1)
			j++;
		int w = j == i ? snprintf(buf + len, bufsz - len, "%s%d", i ? "," : "", v[i])
			       : snprintf(buf + len, bufsz - len, "%s%d-%d", i ? "," : "", v[i], v[j]);
		len += w > 0 ? (size_t)w : 0;
		i = j + 1;
	}
}

int nt_inject_check_ranks(const struct nt_inject_spec *s, int size, char *why, size_t whysz)
{
	if (why && whysz)
		why[0] = 0;
	if (!s || size < 1 || s->nranks > NT_INJECT_MAX_RANKS)
		return -EINVAL;
	if (s->all_ranks)
		return 0;
	int named[NT_INJECT_MAX_RANKS], missing[NT_INJECT_MAX_RANKS];
	size_t nnamed = 0, nmissing = 0;
	for (uint32_t i = 0; i < s->nranks; i++) {
		named[nnamed++] = s->ranks[i];
		if (s->ranks[i] >= size || s->ranks[i] < 0)
			missing[nmissing++] = s->ranks[i];
	}
	nnamed = sort_unique(named, nnamed);
	nmissing = sort_unique(missing, nmissing);
	if (nmissing && why && whysz) {
		char all[2048], bad[2048];
		ranks_str(named, nnamed, all, sizeof all);
		ranks_str(missing, nmissing, bad, sizeof bad);
		snprintf(why, whysz, "ranks=%s names ranks that do not exist in this %d-rank job: %s",
			 all, size, bad);
	}
	return (int)nmissing;
}

bool nt_inject_any_target(const struct nt_inject_spec *s, int size)
{
	if (!s || size < 1)
		return false;
	if (s->all_ranks)
		return true;
	for (uint32_t i = 0; i < s->nranks && i < NT_INJECT_MAX_RANKS; i++)
		if (s->ranks[i] >= 0 && s->ranks[i] < size)
			return true;
	return false;
}

/* The running injector. The handler runs on the target thread only. */
static struct {
	int running;
	int sig;            /* the signal taken at start */
	timer_t timer;
	struct sigaction old;
	volatile sig_atomic_t displaced; /* the application put its own handler on sig */
	uint64_t detour_cyc;
	uint64_t period_ns, next_ns; /* periodic mode: the period, the expiry armed last */
	uint64_t armed_ns;  /* the expiry armed last (either mode), local CLOCK_MONOTONIC */
	uint64_t gap_cyc;   /* a longer step of the spin loop was time the thread did not spin */
	/* trace mode */
	struct nt_detour *trace;
	size_t ntrace, next;
	uint64_t trace_origin_ns, trace_span_ns, cycle;
	uint64_t first_ns; /* local CLOCK_MONOTONIC of the replay's start */
} inj;

static volatile uint64_t spun_cyc, lost_cyc, delivery_cyc, count;

static struct timespec ts_of(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000u),
				  .tv_nsec = (long)(ns % 1000000000u) };
}

/* Arm the one-shot timer for trace entry inj.next of replay cycle inj.cycle. */
static void arm_trace(void)
{
	uint64_t at = inj.first_ns + inj.cycle * inj.trace_span_ns +
		      (inj.trace[inj.next].start_ns - inj.trace_origin_ns);
	inj.armed_ns = at;
	struct itimerspec its = { .it_value = ts_of(at) };
	timer_settime(inj.timer, TIMER_ABSTIME, &its, NULL);
}

/* Arm the one-shot timer for the first multiple of the period, on the grid of the first
 * expiry, that is still ahead: one that passed while the detour ran is skipped, as a periodic
 * timer merges expirations while its signal is pending. */
static void arm_periodic(void)
{
	uint64_t now = nt_clock_monotonic_ns(), next = inj.next_ns + inj.period_ns;
	if (next <= now)
		next += ((now - next) / inj.period_ns + 1) * inj.period_ns;
	inj.next_ns = next;
	inj.armed_ns = next;
	struct itimerspec its = { .it_value = ts_of(next) };
	timer_settime(inj.timer, TIMER_ABSTIME, &its, NULL);
}

/* Whether sig's handler is still on_timer (sigaction is async-signal-safe: ~0.2 us, against
 * the ~19 us a detour's signal costs). */
static void on_timer(int sig, siginfo_t *si, void *uc);
static bool handler_is_ours(int sig)
{
	struct sigaction cur;
	return sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	       cur.sa_sigaction == on_timer;
}

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	int saved = errno;
	/* Called from a handler the application installed over ours (which chains to what it
	 * found): the signal is the application's now. No more detours, no re-arm. */
	if (!handler_is_ours(sig)) {
		inj.displaced = 1;
		errno = saved;
		return;
	}
	/* The signal's delivery: from the expiry to here (the timer's interrupt, the kernel's
	 * signal frame: ~19 us here), time the injection took from the thread as much as its
	 * spin; counted only when short, as it is for a thread that was running at the expiry (one
	 * that was off the CPU then waited for it, which its run delay shows). */
	uint64_t now_ns = nt_clock_monotonic_ns(), armed = inj.armed_ns;
	if (now_ns >= armed && now_ns - armed <= NT_INJECT_DELIVERY_MAX_NS)
		delivery_cyc += nt_clock_ns_to_cyc((double)(now_ns - armed));
	uint64_t len = inj.detour_cyc;
	if (inj.trace)
		len = nt_clock_ns_to_cyc((double)inj.trace[inj.next].duration_ns);
	/* Spin until the detour's wall length has passed; what counts as injected is the time
	 * actually spun. Preempted inside the spin (by a hog, or the host), the thread lost that
	 * time to something else, which its run delay already accounts for: counted here too, a
	 * 200 us detour across a 4 ms slice was booked as 4.2 ms of injected time. A step of the
	 * loop longer than gap_cyc (a read takes ~10 ns) is such time. */
	uint64_t t0 = nt_clock_now_cyc(), t1 = t0, prev = t0, lost = 0;
	while (t1 - t0 < len) {
		t1 = nt_clock_now_cyc();
		if (t1 - prev > inj.gap_cyc)
			lost += t1 - prev;
		prev = t1;
	}
	spun_cyc += t1 - t0 - lost;
	lost_cyc += lost;
	count++;
	if (inj.trace) {
		if (++inj.next == inj.ntrace) {
			inj.next = 0;
			inj.cycle++;
		}
		arm_trace();
	} else {
		arm_periodic();
	}
	errno = saved;
}

/* A phase in [0, period) from the seed and the rank (splitmix64). */
static uint64_t random_phase(uint64_t seed, int rank, uint64_t period_ns)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z % period_ns;
}

/* The trace every rank replays: a regular file (each rank reads it whole; a pipe would give
 * it to one) of at most NT_INJECT_MAX_TRACE_BYTES, read with the core's bounded reader. Opened
 * without blocking and refused unread when it is not a regular file: the injector starts inside
 * MPI_Init, where a FIFO without a writer waited forever and /dev/zero never ended. */
static int load_trace(const char *path, char *err, size_t errsz)
{
	char *text;
	size_t len;
	inj.trace = NULL;
	inj.ntrace = 0;
	int rc = nt_infile_read(path, false, NT_INJECT_MAX_TRACE_BYTES, &text, &len);
	if (rc == -ENODEV || rc == -EISDIR) {
		nt_err_set(err, errsz, "trace '%s': not a regular file (a FIFO, device or directory is "
			   "never read: the trace is read inside MPI_Init)", path);
		return -EINVAL;
	}
	if (rc == -EFBIG) {
		nt_err_set(err, errsz, "trace '%s': larger than the %u MiB a trace may be", path,
			   NT_INJECT_MAX_TRACE_BYTES >> 20);
		return rc;
	}
	if (rc) {
		nt_err_set(err, errsz, "trace '%s': %s", path, strerror(-rc));
		return rc;
	}
	char why[256] = "";
	FILE *f = len ? fmemopen(text, len, "r") : NULL; /* empty: no detours, said below */
	rc = len && !f ? -ENOMEM : f ? nt_trace_read(f, &inj.trace, &inj.ntrace, why, sizeof why) : 0;
	if (f)
		fclose(f);
	free(text);
	if (rc < 0) {
		nt_err_set(err, errsz, "trace '%s': %s", path, why[0] ? why : strerror(-rc));
		return rc;
	}
	if (inj.ntrace == 0) {
		free(inj.trace);
		inj.trace = NULL;
		nt_err_set(err, errsz, "trace '%s': no detours in it", path);
		return -EINVAL;
	}
	inj.trace_origin_ns = inj.trace[0].start_ns;
	uint64_t end = inj.trace[inj.ntrace - 1].start_ns + inj.trace[inj.ntrace - 1].duration_ns;
	/* One replay cycle spans the trace plus one mean gap, so that cycles do not overlap. */
	inj.trace_span_ns = end - inj.trace_origin_ns + (end - inj.trace_origin_ns) / inj.ntrace + 1;
	/* The periodic bounds, on average over a cycle: a recorded trace has detours closer than
	 * the floor (a quarter of the pairs in a 3 s `noisetool detour --trace` here were under
	 * 1 ms apart), which replay as recorded, each at its own signal cost; what keeps that cost
	 * small and the job running is their rate and their share of the time. */
	double busy_ns = 0;
	for (size_t i = 0; i < inj.ntrace; i++)
		busy_ns += (double)inj.trace[i].duration_ns;
	double span_ns = (double)inj.trace_span_ns;
	char a[32], b[32], c[32];
	if (span_ns < (double)inj.ntrace * NT_INJECT_MIN_PERIOD_NS) {
		nt_err_set(err, errsz,
			   "trace '%s': %zu detours replayed every %s, one every %s on average; the "
			   "injector needs at least %s between detours on average (each costs ~%d us "
			   "beyond its length here)",
			   path, inj.ntrace, nt_fmt_duration(inj.trace_span_ns, a),
			   nt_fmt_duration(inj.trace_span_ns / inj.ntrace, b),
			   nt_fmt_duration(NT_INJECT_MIN_PERIOD_NS, c), SIGNAL_COST_US);
		goto invalid;
	}
	if (busy_ns * 100 > span_ns * NT_INJECT_MAX_DUTY_PCT) {
		nt_err_set(err, errsz,
			   "trace '%s': its detours take %.0f %% of each %s replay; at most %u %%, as "
			   "for a period: the job needs the rest",
			   path, 100 * busy_ns / span_ns, nt_fmt_duration(inj.trace_span_ns, a),
			   NT_INJECT_MAX_DUTY_PCT);
		goto invalid;
	}
	return 0;
invalid:
	free(inj.trace);
	inj.trace = NULL;
	return -EINVAL;
}

/* Take the first real-time signal from SIGRTMIN + NT_INJECT_SIGNAL_FIRST up whose disposition
 * is the default and which the calling thread does not block, for on_timer; what was there goes
 * to inj.old. Another program's handler is never replaced: a signal that got one between the
 * look and the take is given back and the next one tried. The signal, or -EBUSY. */
static int take_signal(const struct sigaction *sa)
{
	sigset_t blocked;
	if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0)
		sigemptyset(&blocked);
	for (int sig = SIGRTMIN + NT_INJECT_SIGNAL_FIRST; sig <= SIGRTMAX; sig++) {
		struct sigaction cur;
		if (sigismember(&blocked, sig) == 1 || sigaction(sig, NULL, &cur) != 0 ||
		    (cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
			continue;
		if (sigaction(sig, sa, &cur) != 0)
			continue;
		if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL) {
			inj.old = cur;
			return sig;
		}
		sigaction(sig, &cur, NULL);
	}
	return -EBUSY;
}

int nt_inject_check_trace(const char *path, char *err, size_t errsz)
{
	if (!path)
		return -EINVAL;
	if (inj.running)
		return -EBUSY;
	nt_clock_init();
	int rc = load_trace(path, err, errsz);
	free(inj.trace);
	inj.trace = NULL;
	inj.ntrace = 0;
	return rc;
}

int nt_inject_start(const struct nt_inject_spec *s, int rank, int64_t global_minus_local_ns,
		    char *err, size_t errsz)
{
	if (!s)
		return -EINVAL;
	if (inj.running)
		return -EBUSY;
	nt_clock_init();
	if (s->trace[0]) {
		int rc = load_trace(s->trace, err, errsz);
		if (rc < 0)
			return rc;
	} else {
		char what[80], a[32], b[32];
		snprintf(what, sizeof what, "period=%s,detour=%s", nt_fmt_duration(s->period_ns, a),
			 nt_fmt_duration(s->detour_ns, b));
		if (s->detour_ns == 0)
			return nt_err_invalid(err, errsz, "'%s': the detour must be positive", what);
		int rc = check_periodic(s->period_ns, s->detour_ns, what, err, errsz);
		if (rc < 0)
			return rc;
	}
	inj.detour_cyc = nt_clock_ns_to_cyc((double)s->detour_ns);
	inj.gap_cyc = nt_clock_ns_to_cyc(1000);
	struct sigaction sa = { .sa_sigaction = on_timer, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	inj.displaced = 0;
	int sig = take_signal(&sa);
	if (sig < 0) {
		nt_err_set(err, errsz, "injector: no real-time signal from SIGRTMIN+%d to SIGRTMAX "
			   "is free (each has a handler or is blocked), and the application's are "
			   "never replaced", NT_INJECT_SIGNAL_FIRST);
		free(inj.trace);
		inj.trace = NULL;
		return -EBUSY;
	}
	inj.sig = sig;
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = sig };
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid); /* glibc names no field for it */
	if (timer_create(CLOCK_MONOTONIC, &sev, &inj.timer) < 0) {
		int e = errno;
		sigaction(sig, &inj.old, NULL);
		errno = e;
		goto fail_errno;
	}
	inj.running = 1;
	uint64_t now = nt_clock_monotonic_ns();
	if (inj.trace) {
		inj.next = 0;
		inj.cycle = 0;
		inj.first_ns = now + 1000000; /* 1 ms from now */
		arm_trace();
		return 0;
	}
	uint64_t period = s->period_ns, first;
	if (s->mode == NT_INJECT_SYNC) {
		/* The next multiple of the period on the global time base, plus one period of
		 * margin so that every rank arms its timer before the first detour. */
		int64_t global_now = (int64_t)now + global_minus_local_ns;
		uint64_t g = global_now > 0 ? (uint64_t)global_now : 0;
		first = (g / period + 2) * period - (uint64_t)global_minus_local_ns;
	} else {
		first = (now / period + 1) * period + random_phase(s->seed, rank, period);
	}
	inj.period_ns = period;
	inj.next_ns = first;
	inj.armed_ns = first;
	struct itimerspec its = { .it_value = ts_of(first) };
	timer_settime(inj.timer, TIMER_ABSTIME, &its, NULL);
	return 0;
fail_errno:;
	int e = errno;
	nt_err_set(err, errsz, "injector: %s", strerror(e));
	free(inj.trace);
	inj.trace = NULL;
	return -e;
}

void nt_inject_stop(void)
{
	if (!inj.running)
		return;
	timer_delete(inj.timer); /* a signal of it still pending goes with it */
	/* What was there before comes back only over our own handler: one the application
	 * installed since stays (restored blindly, it was reset to the default and the
	 * application's next signal killed the program). */
	if (handler_is_ours(inj.sig))
		sigaction(inj.sig, &inj.old, NULL);
	else
		inj.displaced = 1;
	inj.running = 0;
	free(inj.trace);
	inj.trace = NULL;
}

uint64_t nt_inject_spun_cyc(void)
{
	return spun_cyc;
}

uint64_t nt_inject_delivery_cyc(void)
{
	return delivery_cyc;
}

uint64_t nt_inject_taken_cyc(void)
{
	return spun_cyc + delivery_cyc;
}

uint64_t nt_inject_lost_cyc(void)
{
	return lost_cyc;
}

uint64_t nt_inject_count(void)
{
	return count;
}

bool nt_inject_displaced(void)
{
	return inj.displaced;
}

int nt_inject_signal(void)
{
	if (inj.running)
		return inj.sig;
	sigset_t blocked;
	if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0)
		sigemptyset(&blocked);
	for (int sig = SIGRTMIN + NT_INJECT_SIGNAL_FIRST; sig <= SIGRTMAX; sig++) {
		struct sigaction cur;
		if (sigismember(&blocked, sig) != 1 && sigaction(sig, NULL, &cur) == 0 &&
		    !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
			return sig;
	}
	return -EBUSY;
}
