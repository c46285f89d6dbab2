/* Calibrated cycle counter: rdtsc on x86-64, cntvct_el0 on aarch64, CLOCK_MONOTONIC otherwise.
 * The frequency is always measured against CLOCK_MONOTONIC at start, never hard-coded. */
#ifndef NOISETOOL_CLOCK_H
#define NOISETOOL_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nt_clock_source {
	NT_CLOCK_TSC = 1,       /* x86-64 rdtsc */
	NT_CLOCK_CNTVCT = 2,    /* aarch64 virtual counter */
	NT_CLOCK_MONOTONIC = 3, /* clock_gettime fallback: 1 cycle = 1 ns */
};

/* The self-check record: what the counter is and how far to trust it. */
struct nt_clock_info {
	enum nt_clock_source source;
	double hz;               /* measured counter frequency */
	double calib_error_ppm;  /* bound on the frequency error from the bracket widths */
	double read_cost_ns;     /* cost of one counter read, back to back */
	bool constant_tsc;       /* cpuinfo flag: rate does not follow CPU frequency */
	bool nonstop_tsc;        /* cpuinfo flag: keeps counting in deep C-states */
	char clocksource[32];    /* kernel clocksource, e.g. "tsc", "kvm-clock" */
};

/* Test and calibration seam: a counter and a nanosecond reference. */
struct nt_clock_ops {
	uint64_t (*read_cyc)(void *ctx);
	uint64_t (*read_ns)(void *ctx);
	void *ctx;
};

/* Result of one calibration run. */
struct nt_clock_calib {
	double hz;
	double error_ppm;
	uint64_t cyc0, ns0; /* reference point: counter value cyc0 corresponds to ns0 */
};

/* Private to the inline reader below: 1 when the hardware counter is trusted. */
NT_API extern int nt_clock_use_counter_;

/* CLOCK_MONOTONIC in ns (a function, so that this header needs no POSIX feature macros). */
NT_API uint64_t nt_clock_monotonic_ns(void);

/* Raw hardware counter, no fallback. */
static inline uint64_t nt_clock_raw_cyc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return nt_clock_monotonic_ns();
#endif
}

/* The hot-path read: the cycle counter, or CLOCK_MONOTONIC ns when the counter is untrusted.
 * Call nt_clock_init() once before. */
static inline uint64_t nt_clock_now_cyc(void)
{
	if (NT_LIKELY(nt_clock_use_counter_))
		return nt_clock_raw_cyc();
	return nt_clock_monotonic_ns();
}

/* Calibrate once per process (thread-safe, idempotent). Returns 0, or -ENOTSUP when the counter
 * cannot be calibrated (the monotonic fallback is then in use and 0 is still returned). */
NT_API int nt_clock_init(void);

/* Take the calibration's first reading now, before other work (the wrappers call it before
 * PMPI_Init): nt_clock_init then spins only for what is left of its 10 ms, instead of 10-16 ms
 * at every job's start. Call it before nt_clock_init, from one thread; optional. */
NT_API void nt_clock_calibration_start(void);

/* The self-check record of the process clock; nt_clock_init() must have run. */
NT_API const struct nt_clock_info *nt_clock_get_info(void);

/* Counter frequency in Hz of the process clock. */
NT_API double nt_clock_hz(void);

/* Convert a cycle count (a difference) to ns and back. */
NT_API double nt_clock_cyc_to_ns(uint64_t cyc);
NT_API uint64_t nt_clock_ns_to_cyc(double ns);

/* Calibrate any counter against any ns reference over duration_ns, taking the tightest
 * (counter, ns, counter) brackets at both ends. Returns 0, -EINVAL on bad arguments or
 * -ERANGE when the counter or the reference did not advance. Used by nt_clock_init and by tests with fakes. */
NT_API int nt_clock_calibrate(const struct nt_clock_ops *ops, uint64_t duration_ns,
			      struct nt_clock_calib *out);

/* Human name of a clock source. */
NT_API const char *nt_clock_source_name(enum nt_clock_source src);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_CLOCK_H */
