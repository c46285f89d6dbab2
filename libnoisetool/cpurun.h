/* Run one function on several CPUs at once: one pinned thread each, released together. */
#ifndef LIBNOISETOOL_CPURUN_H
#define LIBNOISETOOL_CPURUN_H

#include <stddef.h>

/* fn(arg, i) runs on its own thread for each i in [0, n); fn pins itself to its CPU, prepares,
 * then calls nt_cpurun_ready() which returns once every thread is ready. Returns 0, -EINVAL,
 * -ENOMEM, or -errno from thread creation (then no fn gets past nt_cpurun_ready). */
typedef void (*nt_cpurun_fn)(void *arg, size_t index);
int nt_cpurun(size_t n, nt_cpurun_fn fn, void *arg);

/* Wait for the other threads of this run. Returns 0 to go on, -ECANCELED when the run was
 * abandoned (fn must return at once). Outside nt_cpurun it returns 0 at once. */
int nt_cpurun_ready(void);

#endif /* LIBNOISETOOL_CPURUN_H */
