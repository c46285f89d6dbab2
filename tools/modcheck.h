/* Whether the modules a log names are still the ones the job ran: a report names call sites by
 * reading each module's file (its debug information), so a module that is gone or was rebuilt
 * since the job ran gives no names or wrong ones. */
#ifndef TOOLS_MODCHECK_H
#define TOOLS_MODCHECK_H

#include <stdio.h>

#include <noisetool/ntlog.h>

/* One line on err per module of log's sites (and their stacks) that is missing, not a regular
 * file, or modified after the log was created (file times have the kernel's coarse resolution,
 * a tick: a module rebuilt within a tick of the job's end is not told), each naming the
 * module; "[...]" names and the
 * empty name are not files. stat() alone: nothing is opened. Returns how many it named. */
int modcheck_warn(FILE *err, const char *cmd, const struct nt_log *log);

#endif /* TOOLS_MODCHECK_H */
