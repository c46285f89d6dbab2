/* Call-stack capture for call sites: the full stack once, when a site is first seen (cheap
 * unw_backtrace, ~45 ns here), and, for comparison benchmarks only, an mpiP-style walk with
 * unw_step on every call (~2 us here). */
#ifndef WRAPPERS_STACK_H
#define WRAPPERS_STACK_H

#include <stddef.h>
#include <stdint.h>

#define NT_STACK_DEPTH 16

/* Fill ips with up to max return addresses of the calling thread, an address in this function
 * first (unw_backtrace on the main thread, glibc's backtrace on others: see stack.c). Returns
 * how many (0 when built without libunwind). */
int nt_stack_capture(uintptr_t *ips, int max);

/* mpiP-style: walk the stack frame by frame with unw_step; returns the depth reached. */
int nt_stack_walk(uintptr_t *ips, int max);

#endif /* WRAPPERS_STACK_H */
