/* Probe windows of the thread that called MPI_Init. */
#include <noisetool/clock.h>
#include <noisetool/inject.h>

#include "recpolicy.h"
#include "window.h"

static struct nt_probe *probe;
static struct nt_probe_sample start;
static uint64_t start_injected;
static struct nt_window last;
static struct nt_rec_reads limit;
static uint64_t reads, cost_total_cyc;

uint64_t nt_window_open(enum nt_probe_level level, uint64_t now_cyc)
{
	if (level == NT_PROBE_TIMING)
		return UINT64_MAX;
	/* PAPI only at level full, for the instructions (the one PAPI count a window keeps): its
	 * software events repeat getrusage and schedstat, and opening it took 6-9 ms of a job's
	 * start and ~0.5 MiB of resident library code. */
	struct nt_probe_config cfg = { .level = level, .disable_papi = level < NT_PROBE_FULL };
	if (nt_probe_open(&probe, &cfg) != 0)
		return UINT64_MAX;
	nt_recpolicy_read_init(&limit);
	/* The first estimate of a read's cost is the least of a few reads in a row: taken from
	 * one read, a detour or a preemption landing in it became the estimate (a 4 ms one kept
	 * the reads 0.4 s apart, and a job's first seconds went without OS data). The last read
	 * starts the first window. */
	uint64_t least = UINT64_MAX;
	for (int i = 0; i < NT_REC_FIRST_READS; i++) {
		uint64_t t0 = nt_clock_now_cyc();
		nt_probe_read(probe, &start);
		uint64_t cost = nt_clock_now_cyc() - t0;
		least = cost < least ? cost : least;
	}
	start_injected = nt_inject_spun_cyc();
	return nt_recpolicy_read_done(&limit, now_cyc, least);
}

uint64_t nt_window_close(uint64_t now_cyc)
{
	if (!probe)
		return UINT64_MAX;
	struct nt_probe_sample s;
	uint64_t t0 = nt_clock_now_cyc();
	nt_probe_read(probe, &s);
	uint64_t injected = nt_inject_spun_cyc();
	uint64_t t1 = nt_clock_now_cyc();
	uint64_t cost = t1 - t0;
	struct nt_probe_delta d;
	nt_probe_delta(&start, &s, &d);
	last = (struct nt_window){
		.end_cyc = now_cyc,
		.wall_cyc = now_cyc - start.counter_cyc,
		.cpu_ns = d.cpu_ns,
		.run_delay_ns = d.run_delay_ns,
		.vol_switches = d.vol_switches,
		.invol_switches = d.invol_switches,
		.minor_faults = d.minor_faults,
		.major_faults = d.major_faults,
		.instructions = (d.papi_valid & (1u << NT_PAPI_INSTRUCTIONS))
					? d.papi[NT_PAPI_INSTRUCTIONS] : 0,
		.injected_cyc = injected - start_injected,
		.valid = d.valid,
	};
	start = s;
	start.counter_cyc = now_cyc; /* the next window starts where this one ended */
	start_injected = injected;
	reads++;
	cost_total_cyc += cost;
	/* The read's own time belongs to the next window. */
	return nt_recpolicy_read_done(&limit, t1, cost);
}

bool nt_window_record_ends(uint64_t span_cyc, uint64_t t1_cyc)
{
	return probe && nt_recpolicy_record_ends_window(&limit, last.end_cyc, t1_cyc, span_cyc);
}

const struct nt_window *nt_window_last(void)
{
	return &last;
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
