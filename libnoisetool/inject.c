/* The noise injector: a POSIX timer aimed at one thread (SIGEV_THREAD_ID) whose handler spins
 * on the cycle counter for the detour length. Periodic mode reuses one periodic timer; trace
 * mode re-arms a one-shot timer from the handler (timer_settime is async-signal-safe) and
 * replays the trace in a loop. */
#include "nt-config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <noisetool/clock.h>
#include <noisetool/inject.h>
#include <noisetool/noise.h>

#include "util.h"

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
	if (out->detour_ns >= out->period_ns) {
		nt_err_set(err, errsz, "'%s': the detour must be shorter than the period", spec);
		return -EINVAL;
	}
	return 0;
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

/* The running injector. The handler runs on the target thread only. */
static struct {
	int running;
	timer_t timer;
	struct sigaction old;
	uint64_t detour_cyc;
	uint64_t gap_cyc;   /* a longer step of the spin loop was time the thread did not spin */
	/* trace mode */
	struct nt_detour *trace;
	size_t ntrace, next;
	uint64_t trace_origin_ns, trace_span_ns, cycle;
	uint64_t first_ns; /* local CLOCK_MONOTONIC of the replay's start */
} inj;

static volatile uint64_t spun_cyc, lost_cyc, count;

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
	struct itimerspec its = { .it_value = ts_of(at) };
	timer_settime(inj.timer, TIMER_ABSTIME, &its, NULL);
}

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	int saved = errno;
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

static int load_trace(const char *path, char *err, size_t errsz)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		int e = errno;
		nt_err_set(err, errsz, "trace '%s': %s", path, strerror(e));
		return -e;
	}
	char why[256] = "";
	int rc = nt_trace_read(f, &inj.trace, &inj.ntrace, why, sizeof why);
	fclose(f);
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
	return 0;
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
	} else if (s->period_ns == 0 || s->detour_ns == 0 || s->detour_ns >= s->period_ns) {
		return -EINVAL;
	}
	inj.detour_cyc = nt_clock_ns_to_cyc((double)s->detour_ns);
	inj.gap_cyc = nt_clock_ns_to_cyc(1000);
	struct sigaction sa = { .sa_sigaction = on_timer, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	int sig = nt_inject_signal();
	if (sigaction(sig, &sa, &inj.old) < 0)
		goto fail_errno;
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
	struct itimerspec its = { .it_value = ts_of(first), .it_interval = ts_of(period) };
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
	timer_delete(inj.timer);
	sigaction(nt_inject_signal(), &inj.old, NULL);
	inj.running = 0;
	free(inj.trace);
	inj.trace = NULL;
}

uint64_t nt_inject_spun_cyc(void)
{
	return spun_cyc;
}

uint64_t nt_inject_lost_cyc(void)
{
	return lost_cyc;
}

uint64_t nt_inject_count(void)
{
	return count;
}

int nt_inject_signal(void)
{
	return SIGRTMIN + 4;
}
