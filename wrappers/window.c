/* Probe windows of the thread that called MPI_Init. */
#include <errno.h>

#include <noisetool/clock.h>
#include <noisetool/inject.h>

#include "window.h"

static struct nt_probe *probe;
static struct nt_probe_sample start;
static uint64_t start_injected;
static struct nt_window last;
static uint64_t reads, cost_total_cyc;

int nt_window_open(enum nt_probe_level level, uint64_t *costs_cyc, int n)
{
	if (level == NT_PROBE_TIMING || n < 1)
		return -EINVAL;
	/* PAPI only at level full, for the instructions (the one PAPI count a window keeps): its
	 * software events repeat getrusage and schedstat, and opening it took 6-9 ms of a job's
	 * start and ~0.5 MiB of resident library code. */
	struct nt_probe_config cfg = { .level = level, .disable_papi = level < NT_PROBE_FULL };
	int rc = nt_probe_open(&probe, &cfg);
	if (rc != 0) {
		probe = NULL;
		return rc;
	}
	/* The reads' costs go to the policy, which makes its first estimate of a read's cost
	 * from them; the last read starts the first window. */
	for (int i = 0; i < n; i++) {
		uint64_t t0 = nt_clock_now_cyc();
		nt_probe_read(probe, &start);
		costs_cyc[i] = nt_clock_now_cyc() - t0;
	}
	start_injected = nt_inject_taken_cyc();
	return 0;
}

int nt_window_close(uint64_t now_cyc, struct nt_window_read *rd)
{
	if (!probe)
		return -EBADF;
	struct nt_probe_sample s;
	uint64_t t0 = nt_clock_now_cyc();
	nt_probe_read(probe, &s);
	uint64_t injected = nt_inject_taken_cyc();
	uint64_t t1 = nt_clock_now_cyc();
	struct nt_probe_delta d;
	nt_probe_delta(&start, &s, &d);
	/* Each field from its source (noisetool/ntlog.h, NT_LOG_WINDOW_FIELDS). */
	uint64_t counter_cyc = now_cyc - start.counter_cyc;
	uint64_t papi_cyc = (d.papi_valid & (1u << NT_PAPI_INSTRUCTIONS))
				    ? d.papi[NT_PAPI_INSTRUCTIONS] : 0;
	uint64_t injector_cyc = injected - start_injected;
#define FROM_PROBE(kind, name) d.NT_LOG_WINDOW_RAW(kind, name)
#define FROM_COUNTER(kind, name) counter_cyc
#define FROM_PAPI(kind, name) papi_cyc
#define FROM_INJECTOR(kind, name) injector_cyc
#define FROM_NONE(kind, name) 0
#define WINDOW_FIELD(id, name, kind, source, since, key)                                        \
	last.NT_LOG_WINDOW_RAW(kind, name) = FROM_##source(kind, name);
	last.end_cyc = now_cyc;
	NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
	last.valid = d.valid;
#undef WINDOW_FIELD
#undef FROM_PROBE
#undef FROM_COUNTER
#undef FROM_PAPI
#undef FROM_INJECTOR
#undef FROM_NONE
	start = s;
	start.counter_cyc = now_cyc; /* the next window starts where this one ended */
	start_injected = injected;
	reads++;
	*rd = (struct nt_window_read){ .end_cyc = t1, .cost_cyc = t1 - t0 };
	return 0;
}

const struct nt_window *nt_window_last(void)
{
	return &last;
}

void nt_window_counted(uint64_t cost_cyc)
{
	cost_total_cyc += cost_cyc;
}

void nt_window_stats(uint64_t *n, double *mean_cost_ns)
{
	*n = reads;
	*mean_cost_ns = reads ? nt_clock_cyc_to_ns(cost_total_cyc) / (double)reads : 0;
}

void nt_window_shutdown(void)
{
	nt_probe_close(probe);
	probe = NULL;
}
