/* The template probe source: provides nothing, always works. Copy it to add a source. */
#include <stddef.h>

#include "probe-source.h"

static uint32_t null_open(void **state, const struct nt_probe_config *cfg)
{
	(void)cfg;
	*state = NULL; /* a real source allocates or opens its per-thread state here */
	return 0;      /* and returns the NT_SRC_* bits that work */
}

static uint32_t null_read(void *state, struct nt_probe_sample *sample)
{
	(void)state;
	(void)sample; /* a real source fills its fields of sample */
	return 0;     /* and returns the bits it read */
}

static void null_close(void *state)
{
	(void)state;
}

const struct nt_probe_source_ops nt_probe_source_null = {
	.name = "null",
	.bits = 0,
	.min_level = NT_PROBE_FULL,
	.open = null_open,
	.read = null_read,
	.close = null_close,
};
