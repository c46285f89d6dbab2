/* Stack capture with libunwind, or nothing when it is not built in. */
#include "nt-config.h"

#include "stack.h"

#if NT_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>

int nt_stack_capture(uintptr_t *ips, int max)
{
	return unw_backtrace((void **)ips, max);
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
