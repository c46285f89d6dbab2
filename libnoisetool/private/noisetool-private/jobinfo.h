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
#define NT_JOBINFO_USER_BYTES 64      /* the user's name, with its NUL (version 8) */
#define NT_JOBINFO_BATCH_BYTES 16     /* the batch system's name */
#define NT_JOBINFO_BATCH_JOB_BYTES 64 /* its job's id */
#define NT_JOBINFO_NODES_BYTES 256    /* the job's node list */

/* Who ran the job and the batch job it ran in (version 8): "" where not known. */
struct nt_jobinfo_batch {
	char user[NT_JOBINFO_USER_BYTES];          /* "alice", or the uid: "uid 1000" */
	char system[NT_JOBINFO_BATCH_BYTES];       /* "slurm", "pbs", "lsf", "flux" */
	char job[NT_JOBINFO_BATCH_JOB_BYTES];      /* "1234.0": Slurm's job and step */
	char nodes[NT_JOBINFO_NODES_BYTES];        /* "node[01-04]", as the batch system says */
};

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

/* The user and the batch job, from the environment as get reads it (getenv; a test's table),
 * without a name service lookup (thousands of ranks at once would load it): the first batch
 * system whose job variable is set, in this order --
 *   Slurm: SLURM_JOB_ID, with ".SLURM_STEP_ID" when set ("batch", "extern", "interactive" for
 *          its special steps), SLURM_JOB_NODELIST, SLURM_JOB_USER;
 *   PBS/Torque: PBS_JOBID; LSF: LSB_JOBID (with "[LSB_JOBINDEX]" for an array's element);
 *   Flux: FLUX_JOB_ID --
 * and the user from that batch system's variable, else USER, else LOGNAME, else "uid UID".
 * Each value as one line (nt_jobinfo_line), cut to its field with NT_JOBINFO_TRUNCATED. */
void nt_jobinfo_batch_from_env(char *(*get)(const char *name), unsigned uid,
			       struct nt_jobinfo_batch *out);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_JOBINFO_H */
