/* The job's identity as its log records it (doc/ntlog-format.md, version 4): each rank's command
 * line, quoted so that a shell reads it back as the same arguments, and the MPI library's
 * version line, each bounded so that a rank's block grows by at most a few hundred bytes.
 * Private to the core (jobinfo.c) and the wrapper library, which records it. */
#ifndef NOISETOOL_PRIVATE_JOBINFO_H
#define NOISETOOL_PRIVATE_JOBINFO_H

#include <stdbool.h>
#include <stddef.h>


#ifdef __cplusplus
extern "C" {
#endif

#define NT_JOBINFO_COMMAND_BYTES 1024 /* a recorded command line, with its NUL */
#define NT_JOBINFO_MPI_BYTES 256      /* the MPI library's version line, with its NUL */
#define NT_JOBINFO_TOOL_BYTES 32      /* the tool's version, with its NUL */
#define NT_JOBINFO_CMDLINE_READ 4096  /* bytes of /proc/self/cmdline read: more than any
				       * quoted line that fits NT_JOBINFO_COMMAND_BYTES */
#define NT_JOBINFO_TRUNCATED " [truncated]" /* ends a line that did not fit */

/* The command line whose arguments are args (len bytes of NUL-separated arguments, as
 * /proc/PID/cmdline holds them: a final NUL ends the last argument) as one line of text: the
 * arguments joined by spaces, each quoted where a POSIX shell would not read it back as it is
 * (in '...', or in $'...' with \n, \t, \\, \' and \xHH escapes when it holds control
 * characters or bytes that are not UTF-8), so that the line never holds a control character.
 * more: args is only the start of a longer command line. At most size - 1 bytes and a NUL go
 * into out; a line that does not fit (or with more) is cut after its last whole character or
 * escape that leaves room for NT_JOBINFO_TRUNCATED, which ends it. Returns the line's length,
 * or -EINVAL (out NULL, size too small for the marker, args NULL with len > 0). */
int nt_jobinfo_command(const char *args, size_t len, bool more, char *out, size_t size);

/* The first line of text (an MPI library's version, which may run over many lines) as one
 * line: each run of blanks and control characters one space, none at either end, a byte that
 * is not UTF-8 '?'; cut as nt_jobinfo_command cuts, with NT_JOBINFO_TRUNCATED. Returns its
 * length, or -EINVAL (text or out NULL, size too small for the marker). */
int nt_jobinfo_line(const char *text, char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_JOBINFO_H */
