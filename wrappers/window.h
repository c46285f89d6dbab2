/* Probe windows: what the OS did to the recording thread between two rate-limited counter
 * reads, when the recording policy (recpolicy.h) says a read is due: within 1 % of wall time,
 * or at once after a long span. The injector's spun time rides along. */
#ifndef WRAPPERS_WINDOW_H
#define WRAPPERS_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/probe.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The deltas of one window, as kept in a record. */
struct nt_window {
	uint64_t end_cyc;       /* counter at the read that closed it (0: none yet) */
	uint64_t wall_cyc;
	uint64_t cpu_ns, run_delay_ns;
	uint64_t vol_switches, invol_switches, minor_faults, major_faults;
	uint64_t instructions;  /* PAPI hardware, when it exists */
	uint64_t injected_cyc;  /* spun by the injector */
	uint32_t valid;         /* NT_SRC_* bits behind the deltas */
};

/* Open the probe for the calling thread at level (NT_PROBE_TIMING: no windows). Returns the
 * counter value at which the first read is due (UINT64_MAX when there are no windows). */
uint64_t nt_window_open(enum nt_probe_level level, uint64_t now_cyc);

/* Close the current window at now_cyc (read the probe) and start the next. Returns the counter
 * value at which the next read is due. */
uint64_t nt_window_close(uint64_t now_cyc);

/* Whether a record of an instance that exits at t1_cyc after span_cyc ends the current window
 * (see nt_recpolicy_record_ends_window): then the caller closes it at t1_cyc. */
bool nt_window_record_ends(uint64_t span_cyc, uint64_t t1_cyc);

/* The window closed last. */
const struct nt_window *nt_window_last(void);

/* Reads done and their mean cost, for the report. */
void nt_window_stats(uint64_t *reads, double *mean_cost_ns);

void nt_window_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* WRAPPERS_WINDOW_H */
