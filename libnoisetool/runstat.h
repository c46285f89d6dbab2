/* What the OS did to a measuring thread over a whole run: where it ran, run-queue delay from
 * schedstat, hypervisor steal on its CPU. Shared by the detour loop and FTQ/FWQ. */
#ifndef LIBNOISETOOL_RUNSTAT_H
#define LIBNOISETOOL_RUNSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include <noisetool/sysinfo.h>

struct nt_runstat {
	int schedstat_fd;        /* /proc/thread-self/schedstat, -1 when unavailable */
	uint64_t run_delay0, run_count0, steal0;
	bool steal_ok;
	struct nt_run_os out; /* filled by nt_runstat_begin and nt_runstat_end */
};

/* Open the calling thread's schedstat file. Call on the measuring thread. */
void nt_runstat_open(struct nt_runstat *rs);

/* Take the baselines right before the timed part. */
void nt_runstat_begin(struct nt_runstat *rs);

/* Read the deltas right after it. */
void nt_runstat_end(struct nt_runstat *rs);

void nt_runstat_close(struct nt_runstat *rs);

/* Read the run count only (for preemption classification); 0 or -errno. */
int nt_runstat_run_count(const struct nt_runstat *rs, uint64_t *count);

#endif /* LIBNOISETOOL_RUNSTAT_H */
