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

/* Write rep's log as a trace, streamed to f: every record a slice on its rank's track (on the
 * global time base), the OS counters of the probe windows as counter tracks, injected noise as
 * slices per window. Memory: one rank's records and the late instances, O(records). 0, -EINVAL
 * (NULL arguments, a rank with records or sites but no array of them), -ENOMEM, -EIO (a write
 * failed: ferror(f)). */
NT_API int nt_perfetto_write(FILE *f, const struct nt_report *rep);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PERFETTO_H */
