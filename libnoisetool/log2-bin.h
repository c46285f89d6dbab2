/* The log2 bins durations are counted in: a detour list's histogram (stats.c) and the duration
 * octaves the signature analysis searches (signature.c). Private to the core. */
#ifndef LIBNOISETOOL_LOG2_BIN_H
#define LIBNOISETOOL_LOG2_BIN_H

#include <stdint.h>

/* log2 bin of v: 0 for v < 2, else floor(log2 v), clamped to nbins - 1. */
static inline unsigned nt_log2_bin(uint64_t v, unsigned nbins)
{
	unsigned b = v < 2 ? 0 : 63u - (unsigned)__builtin_clzll(v);
	return b < nbins ? b : nbins - 1;
}

#endif /* LIBNOISETOOL_LOG2_BIN_H */
