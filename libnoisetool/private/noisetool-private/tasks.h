/* The node's tasks as /proc shows them: each thread's run time (schedstat) read once into a
 * table, then the threads read again and the growth of the ones whose last CPU is in a set of
 * CPUs summed per process (struct nt_task_top, <noisetool/noise.h>). `noisetool detour`
 * (meanwhile.h) and the wrappers (what else ran on a rank's CPUs) use it. */
#ifndef NOISETOOL_PRIVATE_TASKS_H
#define NOISETOOL_PRIVATE_TASKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <noisetool/noise.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One thread's run time at the first reading. */
struct nt_task_time {
	int32_t pid, tid;
	uint64_t run_ns;
};

/* Read every thread under proc_root ("/proc" when NULL) into out[0..cap), sorted by tid: *n
 * read, *more left out for want of room (threads that exited or cannot be read are skipped).
 * Returns 0, or -EINVAL (out, n or more NULL with cap > 0), or opendir's error on proc_root. */
int nt_tasks_times(const char *proc_root, struct nt_task_time *out, size_t cap, size_t *n,
		   size_t *more);

/* Read the threads again and, for each slot, sum per process the run time its threads gained
 * since before[0..n) (one born since counts from 0; with complete false, a thread missing from
 * before, which may have been left out for want of room, is not counted) where their last CPU
 * c (stat field 39) has slot_of_cpu[c] == slot (c < map_len; -1: no slot). The process
 * self_pid is left out; a kernel thread or another user's process (its /proc/PID owner is not
 * self_uid) is marked so. tops[0..nslots) are filled (zeroed first). Returns 0, -EINVAL (a
 * NULL array where one is needed), -ENOMEM, or opendir's error on proc_root. */
int nt_tasks_ran_on(const char *proc_root, const struct nt_task_time *before, size_t n,
		    bool complete, const int *slot_of_cpu, size_t map_len, pid_t self_pid,
		    uid_t self_uid, struct nt_task_top *tops, size_t nslots);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_TASKS_H */
