/* A job's timeline for Perfetto (ui.perfetto.dev) and chrome://tracing: the Chrome trace-event
 * JSON format, one track per rank grouped by host (doc/perfetto.md). */
#ifndef NOISETOOL_PERFETTO_H
#define NOISETOOL_PERFETTO_H

#include <stdio.h>

#include <noisetool/common.h>
#include <noisetool/report.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write rep's log as a trace: every record a slice on its rank's track, the OS counters of the
 * probe windows as counter tracks, injected detours as slices. 0, -EINVAL, -EIO. */
NT_API int nt_perfetto_write(FILE *f, const struct nt_report *rep);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PERFETTO_H */
