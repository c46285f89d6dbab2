/* Call stacks: a call site's full stack once, when the site is first seen, and the program's
 * own caller of a call made through a language binding (on every such call). */
#ifndef WRAPPERS_STACK_H
#define WRAPPERS_STACK_H

#include <stddef.h>
#include <stdint.h>

#define NT_STACK_DEPTH 16

/* Fill ips with up to max return addresses of the calling thread, its caller's first: walked
 * frame by frame with libunwind's unw_step (6-10 us here; the benchmark's mpiP-style mode does
 * it on every call). Returns how many (0 when built without libunwind). */
int nt_stack_walk(uintptr_t *ips, int max);

/* The same with glibc's backtrace (libgcc's unwinder, no per-thread state: 0.04-0.4 us for 8
 * frames here), for the per-call path through a binding. */
int nt_stack_quick(uintptr_t *ips, int max);

#endif /* WRAPPERS_STACK_H */
