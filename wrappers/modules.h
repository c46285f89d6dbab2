/* The module (executable or shared library) an address is in: its absolute path, so that a
 * report names the same file:line from any directory, and its base, the address dladdr gives
 * as dli_fbase (an address a is at a - base in the module's file). */
#ifndef WRAPPERS_MODULES_H
#define WRAPPERS_MODULES_H

#include <stdint.h>

struct nt_module {
	uintptr_t lo, hi; /* the module's loaded segments, [lo, hi) */
	uintptr_t base;
	const char *path; /* absolute when it can be found, else as the loader names it; valid
			   * until the process ends */
};

/* The module addr is in. 0, or -ENOENT (in no module: then m->path is "" and m->base 0). A
 * module is looked up once (the loader's list, realpath); thread-safe. */
int nt_module_of(uintptr_t addr, struct nt_module *m);

#endif /* WRAPPERS_MODULES_H */
