/* Stack capture with libunwind (glibc's backtrace on threads other than the main one), or
 * nothing when libunwind is not built in. */
#include "nt-config.h"

#include "stack.h"

#if NT_HAVE_LIBUNWIND
#include <execinfo.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

/* 1 on the process's main thread, -1 on any other, 0 until this thread first asked. */
static __thread __attribute__((tls_model("initial-exec"))) signed char main_thread;

/* unw_backtrace keeps a 256 KB frame cache per thread that libunwind (1.6.2, and upstream
 * still) frees in the last round of thread-exit destructors, the round in which ThreadSanitizer
 * has already torn the thread down: the cache's mutex then crashed every TSan run of a threaded
 * job. The main thread never runs those destructors; other threads use glibc's backtrace
 * (libgcc's unwinder, no per-thread state): 0.04 to 0.4 us for 8 frames here, where a walk
 * with unw_step took 6 to 10 us, too slow for calls through a Fortran binding. */
int nt_stack_capture(uintptr_t *ips, int max)
{
	if (main_thread == 0)
		main_thread = gettid() == getpid() ? 1 : -1;
	if (main_thread > 0)
		return unw_backtrace((void **)ips, max);
	return max > 0 ? backtrace((void **)ips, max) : 0;
}

int nt_stack_walk(uintptr_t *ips, int max)
{
	unw_context_t ctx;
	unw_cursor_t cursor;
	if (unw_getcontext(&ctx) != 0 || unw_init_local(&cursor, &ctx) != 0)
		return 0;
	int n = 0;
	while (n < max && unw_step(&cursor) > 0) {
		unw_word_t ip;
		unw_get_reg(&cursor, UNW_REG_IP, &ip);
		ips[n++] = (uintptr_t)ip;
	}
	return n;
}
#else
int nt_stack_capture(uintptr_t *ips, int max)
{
	(void)ips;
	(void)max;
	return 0;
}

int nt_stack_walk(uintptr_t *ips, int max)
{
	(void)ips;
	(void)max;
	return 0;
}
#endif
