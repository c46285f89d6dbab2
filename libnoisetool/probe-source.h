/* Private interface of one probe source (getrusage, schedstat, PAPI, ...). To add a source,
 * copy probe-null.c, fill in its three functions and list it in probe.c's `sources`. */
#ifndef LIBNOISETOOL_PROBE_SOURCE_H
#define LIBNOISETOOL_PROBE_SOURCE_H

#include <noisetool/probe.h>

struct nt_probe_source_ops {
	const char *name;
	uint32_t bits;                     /* NT_SRC_* bits this source may provide */
	enum nt_probe_level min_level;     /* lowest level that enables it */
	/* Open for the calling thread; *state is the source's own. Returns the NT_SRC_* bits
	 * that work (0 = unusable, the source is then skipped). */
	uint32_t (*open)(void **state, const struct nt_probe_config *cfg);
	/* Fill its fields of sample; return the NT_SRC_* bits actually read (0 = failed). */
	uint32_t (*read)(void *state, struct nt_probe_sample *sample);
	void (*close)(void *state);
};

extern const struct nt_probe_source_ops nt_probe_source_rusage;
extern const struct nt_probe_source_ops nt_probe_source_schedstat;
extern const struct nt_probe_source_ops nt_probe_source_thread_cpu;
extern const struct nt_probe_source_ops nt_probe_source_papi;
extern const struct nt_probe_source_ops nt_probe_source_null;

#endif /* LIBNOISETOOL_PROBE_SOURCE_H */
