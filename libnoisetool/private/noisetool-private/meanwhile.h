/* What ran on each CPU while a measurement ran: /proc read before and after it (the tasks' run
 * time and last CPU through tasks.h, /proc/interrupts, /proc/softirqs), and the difference for
 * each measured CPU (struct nt_cpu_meanwhile, <noisetool/noise.h>). */
#ifndef NOISETOOL_PRIVATE_MEANWHILE_H
#define NOISETOOL_PRIVATE_MEANWHILE_H

#include <sys/types.h>

#include <noisetool/noise.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One reading of the tasks and the interrupt and softirq counters (opaque). */
struct nt_meanwhile_snap;

/* Read proc_root ("/proc" when NULL; a made-up tree in the tests): every thread's run time
 * (schedstat; 65,536 threads at most, 16 bytes each) and the per-CPU counts of
 * /proc/interrupts and /proc/softirqs. What cannot be read is left out (a task that exited
 * meanwhile, hidepid, a missing file). Takes a few ms on a node of a hundred tasks. Returns 0,
 * -EINVAL (out NULL), -ENOMEM. */
int nt_meanwhile_snap_take(const char *proc_root, struct nt_meanwhile_snap **out);

/* The tasks read (for the tests). */
size_t nt_meanwhile_snap_tasks(const struct nt_meanwhile_snap *s);

void nt_meanwhile_snap_free(struct nt_meanwhile_snap *s);

/* Read proc_root again and fill out[i] with what ran on cpus[i] since before: the processes
 * other than self_pid whose threads' run time grew and whose last CPU is cpus[i] now (a
 * thread born meanwhile counts from 0; one that moved away or exited is missed), their kind by
 * self_uid; the interrupt lines and softirq kinds counted there. out[i].known is false for a
 * CPU nothing was read about (a negative cpus[i], none of the files). Returns 0, -EINVAL
 * (before or out NULL, cpus NULL with ncpus > 0), -ENOMEM. */
int nt_meanwhile_finish(const char *proc_root, const struct nt_meanwhile_snap *before,
			const int *cpus, size_t ncpus, pid_t self_pid, uid_t self_uid,
			struct nt_cpu_meanwhile *out);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_MEANWHILE_H */
