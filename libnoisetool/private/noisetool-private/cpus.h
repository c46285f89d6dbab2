/* A rank's CPUs (the log's version-6 fields, doc/ntlog-format.md "The rank's CPUs"): the time
 * its CPUs ran any task and the time the hypervisor took from them, read from /proc/stat by the
 * wrappers at MPI_Init and MPI_Finalize; and the CPU lists the log keeps them in, parsed by the
 * report to see which ranks share CPUs. Private to the core and the wrappers. */
#ifndef NOISETOOL_PRIVATE_CPUS_H
#define NOISETOOL_PRIVATE_CPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The busy time (user, nice, system, irq and softirq) and the steal time of the CPUs cpus[0..n)
 * since boot, summed over them, in ns (the kernel counts in ticks of 1/USER_HZ s: 10 ms).
 * Reads /proc/stat through a buffer on the stack: no memory is taken. Returns 0, -ENOENT when a
 * CPU has no line there, -EINVAL when a line cannot be parsed, or -errno. */
int nt_cpus_stat(const int *cpus, size_t n, uint64_t *busy_ns, uint64_t *steal_ns);

/* One run of CPUs, lo to hi inclusive. */
struct nt_cpu_range {
	uint32_t lo, hi;
};

/* Parse a CPU list ("0", "0-3,8": ascending, non-overlapping runs) into at most max runs.
 * Returns how many, 0 for "", or -EINVAL (not such a list, or more than max runs). */
int nt_cpulist_parse(const char *list, struct nt_cpu_range *runs, size_t max);

/* The CPUs of a parsed list; whether a's CPUs are all in b; whether a and b share a CPU. */
uint64_t nt_cpulist_count(const struct nt_cpu_range *runs, size_t n);
bool nt_cpulist_within(const struct nt_cpu_range *a, size_t na, const struct nt_cpu_range *b,
		       size_t nb);
bool nt_cpulist_overlap(const struct nt_cpu_range *a, size_t na, const struct nt_cpu_range *b,
			size_t nb);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_CPUS_H */
