/* Cycle-counter calibration against CLOCK_MONOTONIC and the clock self-check record. */
#include "nt-config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <noisetool/clock.h>

#include "procfile.h"

int nt_clock_use_counter_ = 0;

uint64_t nt_clock_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct nt_clock_info info;
static double ns_per_cyc = 1.0;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Brackets sampled at each end of a calibration; the tightest one wins. */
enum { BRACKETS = 64 };

struct bracket {
	uint64_t cyc;   /* counter midpoint */
	uint64_t ns;
	uint64_t width; /* counter ticks between the two counter reads */
};

static struct bracket early = { 0, 0, UINT64_MAX }; /* nt_clock_calibration_start's bracket */

static struct bracket tightest_bracket(const struct nt_clock_ops *ops)
{
	struct bracket best = { 0, 0, UINT64_MAX };
	for (int i = 0; i < BRACKETS; i++) {
		uint64_t c0 = ops->read_cyc(ops->ctx);
		uint64_t ns = ops->read_ns(ops->ctx);
		uint64_t c1 = ops->read_cyc(ops->ctx);
		if (c1 < c0)
			continue;
		if (c1 - c0 < best.width) {
			best.width = c1 - c0;
			best.cyc = c0 + (c1 - c0) / 2;
			best.ns = ns;
		}
	}
	return best;
}

/* The calibration from its first bracket a, after duration_ns of the reference since it. */
static int calibrate_from(const struct nt_clock_ops *ops, struct bracket a, uint64_t duration_ns,
			  struct nt_clock_calib *out)
{
	/* A reference that stops advancing must not hang us. */
	uint64_t last = a.ns, stuck = 0;
	for (uint64_t now; (now = ops->read_ns(ops->ctx)) - a.ns < duration_ns;) {
		if (now != last) {
			last = now;
			stuck = 0;
		} else if (++stuck > 10 * 1000 * 1000) {
			return -ERANGE;
		}
	}
	struct bracket b = tightest_bracket(ops);
	if (b.width == UINT64_MAX || b.cyc <= a.cyc || b.ns <= a.ns)
		return -ERANGE;

	double span_ns = (double)(b.ns - a.ns);
	double hz = (double)(b.cyc - a.cyc) * 1e9 / span_ns;
	/* Each midpoint is uncertain by half its bracket, the reference by 1 ns. */
	double err_ns = ((double)a.width + (double)b.width) / 2.0 / hz * 1e9 + 2.0;
	out->hz = hz;
	out->error_ppm = err_ns / span_ns * 1e6;
	out->cyc0 = a.cyc;
	out->ns0 = a.ns;
	return 0;
}

int nt_clock_calibrate(const struct nt_clock_ops *ops, uint64_t duration_ns,
		       struct nt_clock_calib *out)
{
	if (!ops || !ops->read_cyc || !ops->read_ns || !out || duration_ns == 0)
		return -EINVAL;
	struct bracket a = tightest_bracket(ops);
	if (a.width == UINT64_MAX)
		return -ERANGE;
	return calibrate_from(ops, a, duration_ns, out);
}

static uint64_t hw_read_cyc(void *ctx)
{
	(void)ctx;
	return nt_clock_raw_cyc();
}

static uint64_t hw_read_ns(void *ctx)
{
	(void)ctx;
	return nt_clock_monotonic_ns();
}

/* True when /proc/cpuinfo's first "flags" line lists flag as a whole word. */
static bool cpuinfo_has_flag(const char *flag)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	char line[8192];
	bool found = false;
	size_t len = strlen(flag);
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		for (char *p = strstr(line, flag); p; p = strstr(p + 1, flag)) {
			bool start_ok = p == line || p[-1] == ' ';
			bool end_ok = p[len] == ' ' || p[len] == '\n' || p[len] == '\0';
			if (start_ok && end_ok) {
				found = true;
				break;
			}
		}
		break;
	}
	fclose(f);
	return found;
}

/* Cost of one raw counter read: the minimum over batches of back-to-back reads. */
static double measure_read_cost_ns(void)
{
	enum { BATCH = 256, TRIES = 16 };
	uint64_t best = UINT64_MAX;
	for (int t = 0; t < TRIES; t++) {
		uint64_t t0 = nt_clock_now_cyc();
		for (int i = 0; i < BATCH; i++)
			(void)nt_clock_now_cyc();
		uint64_t d = nt_clock_now_cyc() - t0;
		if (d < best)
			best = d;
	}
	return (double)best / BATCH * ns_per_cyc;
}

static void clock_init_once(void)
{
	memset(&info, 0, sizeof info);
	nt_read_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			   info.clocksource, sizeof info.clocksource);
#if defined(__x86_64__)
	info.constant_tsc = cpuinfo_has_flag("constant_tsc");
	info.nonstop_tsc = cpuinfo_has_flag("nonstop_tsc");
	bool trusted = info.constant_tsc;
	info.source = NT_CLOCK_TSC;
#elif defined(__aarch64__)
	info.constant_tsc = info.nonstop_tsc = true; /* the generic timer has a fixed rate */
	bool trusted = true;
	info.source = NT_CLOCK_CNTVCT;
#else
	bool trusted = false;
	info.source = NT_CLOCK_MONOTONIC;
#endif
	if (trusted) {
		/* 10 ms: bracket widths of ~20 ns give < 2 ppm frequency error. */
		struct nt_clock_ops ops = { hw_read_cyc, hw_read_ns, NULL };
		struct nt_clock_calib cal;
		/* Begun early (before MPI_Init), the 10 ms have mostly passed by now. */
		int rc = early.width != UINT64_MAX
				 ? calibrate_from(&ops, early, 10 * 1000 * 1000, &cal)
				 : nt_clock_calibrate(&ops, 10 * 1000 * 1000, &cal);
		if (rc == 0 && cal.hz > 1e6) {
			info.hz = cal.hz;
			info.calib_error_ppm = cal.error_ppm;
			ns_per_cyc = 1e9 / cal.hz;
			nt_clock_use_counter_ = 1;
		} else {
			trusted = false;
		}
	}
	if (!trusted) {
		info.source = NT_CLOCK_MONOTONIC;
		info.hz = 1e9;
		info.calib_error_ppm = 0;
		ns_per_cyc = 1.0;
		nt_clock_use_counter_ = 0;
	}
	info.read_cost_ns = measure_read_cost_ns();
}

void nt_clock_calibration_start(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	struct nt_clock_ops ops = { hw_read_cyc, hw_read_ns, NULL };
	early = tightest_bracket(&ops);
#endif
}

int nt_clock_init(void)
{
	pthread_once(&init_once, clock_init_once);
	return 0;
}

const struct nt_clock_info *nt_clock_get_info(void)
{
	nt_clock_init();
	return &info;
}

double nt_clock_hz(void)
{
	nt_clock_init();
	return info.hz;
}

double nt_clock_cyc_to_ns(uint64_t cyc)
{
	return (double)cyc * ns_per_cyc;
}

uint64_t nt_clock_ns_to_cyc(double ns)
{
	if (ns <= 0)
		return 0;
	return (uint64_t)(ns / ns_per_cyc + 0.5);
}

const char *nt_clock_source_name(enum nt_clock_source src)
{
	switch (src) {
	case NT_CLOCK_TSC:
		return "tsc";
	case NT_CLOCK_CNTVCT:
		return "cntvct";
	case NT_CLOCK_MONOTONIC:
		return "clock_monotonic";
	}
	return "unknown";
}
