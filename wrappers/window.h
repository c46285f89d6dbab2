/* Probe windows: what the OS did to the recording thread between two counter reads (the
 * injector's spun time riding along), read when the recording policy (recpolicy.h) says so;
 * each read says what it cost, for the policy's read budget. */
#ifndef WRAPPERS_WINDOW_H
#define WRAPPERS_WINDOW_H

#include <stdint.h>

#include <noisetool/ntlog.h>
#include <noisetool/probe.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The deltas of one window, as kept in a record: the log's window fields (noisetool/ntlog.h,
 * NT_LOG_WINDOW_FIELDS) in the wrappers' units (NT_LOG_WINDOW_RAW: counter cycles for CYC). */
#define NT_WINDOW_MEMBER_(id, name, kind, source, since, key) uint64_t NT_LOG_WINDOW_RAW(kind, name);
struct nt_window {
	uint64_t end_cyc; /* counter at the read that closed it (0: none yet) */
	NT_LOG_WINDOW_FIELDS(NT_WINDOW_MEMBER_)
	uint32_t valid;   /* NT_SRC_* bits behind the deltas */
};
#undef NT_WINDOW_MEMBER_

/* One read of the probe, measured: the counter when it ended and what it took. */
struct nt_window_read {
	uint64_t end_cyc;
	uint64_t cost_cyc;
};

/* Open the probe for the calling thread (the only one with windows) at level and read it n
 * times in a row, costs_cyc[i] what read i took; the first window starts at the last read.
 * Returns 0; -EINVAL at NT_PROBE_TIMING (no windows: nothing is opened or read) or for n < 1;
 * or nt_probe_open's error (-EINVAL, -ENOMEM): no windows. */
int nt_window_open(enum nt_probe_level level, uint64_t *costs_cyc, int n);

/* Close the current window at now_cyc (an instance's exit): read the probe, keep the deltas
 * since the last read as the last window, and start the next one at now_cyc. *rd: the read.
 * Returns 0, or -EBADF when the probe is not open (no read, *rd untouched). */
int nt_window_close(uint64_t now_cyc, struct nt_window_read *rd);

/* The window closed last. */
const struct nt_window *nt_window_last(void);

/* A read's cost as the recording policy counts it (nt_recpolicy_window_closed): what it
 * measured, at most twice its running estimate of a read's cost. A read that another task
 * preempted, or a detour interrupted, took longer by what they took, which is theirs: beside a
 * CPU hog, a rank's reads under Open MPI measured 94 us on average, 8 % of its wall time, where
 * a read costs 3 us (the kernel's lazy preemption lands at a system call's return). */
void nt_window_counted(uint64_t cost_cyc);

/* Reads done and their mean cost (as counted), for the report. */
void nt_window_stats(uint64_t *reads, double *mean_cost_ns);

void nt_window_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* WRAPPERS_WINDOW_H */
