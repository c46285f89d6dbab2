/* Where a measurement really ran: host, kernel, clocksource, tick rate, isolated and
 * tickless CPUs, the affinity mask; plus CPU pinning and hypervisor steal time. */
#ifndef NOISETOOL_SYSINFO_H
#define NOISETOOL_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nt_sysinfo {
	char hostname[64];
	char kernel[96];        /* uname release */
	char cpu_model[96];
	char clocksource[32];
	char isolcpus[64];      /* /sys/devices/system/cpu/isolated, "" when none */
	char nohz_full[64];     /* /sys/devices/system/cpu/nohz_full, "" when none */
	char allowed_cpus[128]; /* this process's affinity mask as a CPU list, e.g. "0-3" */
	int kernel_hz;          /* CONFIG_HZ when the kernel config is readable, else 0 */
	int online_cpus;
};

/* What the OS did to a measuring thread over a whole run. */
struct nt_run_os {
	int cpu_start, cpu_end;   /* where it really ran (sched_getcpu at both ends) */
	bool run_delay_known;
	uint64_t run_delay_ns;    /* schedstat: time runnable but not running */
	uint64_t run_count_delta; /* schedstat: times put back on a CPU (1 = never preempted) */
	bool steal_known;
	uint64_t steal_ns;        /* hypervisor steal on that CPU (unknown if it changed CPU) */
};

/* Fill info; unknown fields stay empty/0. Returns 0 (never fails hard), -EINVAL on NULL. */
NT_API int nt_sysinfo_collect(struct nt_sysinfo *info);

/* CPUs in the calling thread's affinity mask, ascending. Returns how many (at most max), or
 * -errno. */
NT_API int nt_allowed_cpus(int *cpus, size_t max);

/* Pin the calling thread to cpu. Returns 0, -EINVAL (cpu out of range or not allowed), -errno. */
NT_API int nt_pin_self(int cpu);

/* Hypervisor steal time of cpu from /proc/stat, in ns (USER_HZ resolution: 10 ms).
 * Returns 0, -ENOENT when /proc/stat has no line for cpu, -EINVAL when its line has no steal
 * column, or -errno. */
NT_API int nt_cpu_steal_ns(int cpu, uint64_t *steal_ns);

/* Format cpus[0..n) (ascending) as a CPU list like "0-3,6". Returns the length, or -ENOSPC. */
NT_API int nt_cpulist_format(const int *cpus, size_t n, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_SYSINFO_H */
