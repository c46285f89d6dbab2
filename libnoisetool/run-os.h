/* What the OS did to a measuring thread over a whole run: where it ran, run-queue delay from
 * schedstat, hypervisor steal on its CPU. Shared by the detour loop and FTQ/FWQ. */
#ifndef LIBNOISETOOL_RUN_OS_H
#define LIBNOISETOOL_RUN_OS_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/sysinfo.h>

/* Measures a struct nt_run_os over the timed part of a run, on its thread. */
struct nt_run_os_meter {
	int schedstat_fd;        /* /proc/thread-self/schedstat, -1 when unavailable */
	uint64_t run_delay0, run_count0, steal0;
	bool steal_ok;
	struct nt_run_os out; /* filled by nt_run_os_begin and nt_run_os_end */
};

/* Open the calling thread's schedstat file. Call on the measuring thread. */
void nt_run_os_open(struct nt_run_os_meter *rs);

/* Take the baselines right before the timed part. */
void nt_run_os_begin(struct nt_run_os_meter *rs);

/* Read the deltas right after it. */
void nt_run_os_end(struct nt_run_os_meter *rs);

/* Close the schedstat file (none open is fine). */
void nt_run_os_close(struct nt_run_os_meter *rs);

/* Read the run count only (for preemption classification); 0 or -errno. */
int nt_run_os_run_count(const struct nt_run_os_meter *rs, uint64_t *count);

#endif /* LIBNOISETOOL_RUN_OS_H */
