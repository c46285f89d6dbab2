/* What the job is, collected once at MPI_Init for the log and the live file: this rank's
 * command line, its MPI library, the tool's version, its user and batch job
 * (noisetool-private/jobinfo.h). */
#ifndef WRAPPERS_JOBINFO_H
#define WRAPPERS_JOBINFO_H

#include <noisetool-private/jobinfo.h>

struct nt_job {
	char command[NT_JOBINFO_COMMAND_BYTES];  /* "" when /proc/self/cmdline cannot be read */
	char mpi_library[NT_JOBINFO_MPI_BYTES];  /* "" when the MPI does not say */
	char tool_version[NT_JOBINFO_TOOL_BYTES];
	struct nt_jobinfo_batch batch;            /* the user and the batch job */
};

/* Fill *job (after PMPI_Init: the MPI library's version may need it). Never fails: what cannot
 * be read is left empty. Takes ~12 KiB of stack for a moment and no other memory. */
void nt_job_collect(struct nt_job *job);

#endif /* WRAPPERS_JOBINFO_H */
