/* The line of /proc/<tid>/schedstat: a thread's time on the CPU, time runnable but waiting for
 * one, and how often it was put on one. Read by the probe (probe-os.c, which parses it), the
 * detour and FTQ runs (run-os.c) and the adaptive poller (polling/poller.c). Private to the core
 * and the poller. */
#ifndef NOISETOOL_PRIVATE_SCHEDSTAT_H
#define NOISETOOL_PRIVATE_SCHEDSTAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parse "run_time_ns run_delay_ns run_count" (spaces before each number, anything after the
 * third) into the three outputs. Returns 0, or -EINVAL when buf does not start with three
 * unsigned decimal numbers that fit 64 bits (the outputs are then left as they were). */
int nt_parse_schedstat(const char *buf, uint64_t *run_ns, uint64_t *delay_ns, uint64_t *count);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_SCHEDSTAT_H */
