/* What ran on each CPU while a measurement ran: /proc read before and after it (the tasks'
 * last CPU and run time, /proc/interrupts, /proc/softirqs), and the difference for one CPU
 * (struct nt_cpu_meanwhile, <noisetool/noise.h>). */
#ifndef NOISETOOL_PRIVATE_MEANWHILE_H
#define NOISETOOL_PRIVATE_MEANWHILE_H

#include <sys/types.h>

#include <noisetool/noise.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One reading of the tasks and the interrupt and softirq counters (opaque). */
struct nt_meanwhile_snap;

/* Read proc_root ("/proc" when NULL; a made-up tree in the tests): every task's last CPU, run
 * time (schedstat), kind and name, and the per-CPU counts of /proc/interrupts and
 * /proc/softirqs. What cannot be read is left out (a task that exited meanwhile, hidepid, a
 * missing file). Takes a few ms on a node of a hundred tasks. Returns 0, -EINVAL (out NULL),
 * -ENOMEM. */
int nt_meanwhile_snap_take(const char *proc_root, struct nt_meanwhile_snap **out);

/* The tasks read (for the tests). */
size_t nt_meanwhile_snap_tasks(const struct nt_meanwhile_snap *s);

void nt_meanwhile_snap_free(struct nt_meanwhile_snap *s);

/* What ran on cpu between a and b (a taken first): the processes other than self_pid whose
 * threads' run time grew and whose last CPU in b is cpu (a thread born meanwhile counts from
 * 0; one that moved away or exited is missed), their kind by self_uid; the interrupt lines and
 * softirq kinds counted on cpu. elapsed_ns is the time between the two readings. Returns 0 or
 * -EINVAL (a, b or out NULL, or a CPU neither reading counted: out->known false). */
int nt_meanwhile_fill(const struct nt_meanwhile_snap *a, const struct nt_meanwhile_snap *b,
		      int cpu, pid_t self_pid, uid_t self_uid, struct nt_cpu_meanwhile *out);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_MEANWHILE_H */
