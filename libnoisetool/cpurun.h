/* Run one function on several CPUs at once: one pinned thread each, released together. */
#ifndef LIBNOISETOOL_CPURUN_H
#define LIBNOISETOOL_CPURUN_H

#include <stddef.h>

/* fn(arg, i) runs on its own thread for each i in [0, n); fn pins itself to its CPU, prepares,
 * then calls nt_cpurun_ready() which returns once every thread is ready. Returns 0, -EINVAL,
 * -ENOMEM, or -errno from thread creation (then no fn gets past nt_cpurun_ready). */
typedef void (*nt_cpurun_fn)(void *arg, size_t index);
int nt_cpurun(size_t n, nt_cpurun_fn fn, void *arg);

/* measure(ctx, i, cpu) runs on a thread already pinned to cpus[i], one per CPU, all at once; it
 * must call nt_cpurun_ready() once prepared. Returns 0, the first error of a measure call, or
 * -errno from pinning or thread creation. */
typedef int (*nt_cpurun_measure_fn)(void *ctx, size_t index, int cpu);
int nt_cpurun_measure(const int *cpus, size_t n, nt_cpurun_measure_fn measure, void *ctx);

/* Wait for the other threads of this run. Returns 0 to go on, -ECANCELED when the run was
 * abandoned (fn must return at once). Outside nt_cpurun it returns 0 at once. */
int nt_cpurun_ready(void);

#endif /* LIBNOISETOOL_CPURUN_H */
