/* Call stacks: libunwind's frame-by-frame walk for a site's stack (once per site) and the
 * every-call benchmark mode, glibc's backtrace for the caller of a binding (every call through
 * a Fortran binding); nothing when libunwind is not built in. */
#include "nt-config.h"

#include <execinfo.h>

#include "stack.h"

int nt_stack_quick(uintptr_t *ips, int max)
{
	return max > 0 ? backtrace((void **)ips, max) : 0;
}

#if NT_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>

/* Not unw_backtrace: it keeps a 256 KiB frame cache per thread (the largest part of what the
 * tool's first call site added to a rank's resident memory), which libunwind (1.6.2, and
 * upstream still) frees in the last round of thread-exit destructors, after ThreadSanitizer
 * has torn the thread down (every TSan run of a threaded job crashed there). unw_step takes
 * 6-10 us for a stack here, once per call site. */
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
int nt_stack_walk(uintptr_t *ips, int max)
{
	(void)ips;
	(void)max;
	return 0;
}
#endif
