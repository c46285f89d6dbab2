/* The job's identity at MPI_Init: /proc/self/cmdline quoted for a shell, the first line of
 * PMPI_Get_library_version, NT_VERSION, the user and batch job from the environment. Once per
 * rank, off every hot path. */
#include "nt-config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "jobinfo.h"

/* This process's arguments, NUL-separated, at most size bytes; *more when there were more.
 * Returns the bytes read (0 when the file cannot be read). */
static size_t read_cmdline(char *buf, size_t size, bool *more)
{
	*more = false;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t got = 0;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	char one;
	if (got == size)
		*more = read(fd, &one, 1) == 1;
	close(fd);
	return got;
}

void nt_job_collect(struct nt_job *job)
{
	char args[NT_JOBINFO_CMDLINE_READ];
	bool more;
	size_t n = read_cmdline(args, sizeof args, &more);
	if (nt_jobinfo_command(args, n, more, job->command, sizeof job->command) < 0)
		job->command[0] = '\0';
	char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
	int len = 0;
	if (PMPI_Get_library_version(version, &len) != MPI_SUCCESS)
		version[0] = '\0';
	version[sizeof version - 1] = '\0';
	if (nt_jobinfo_line(version, job->mpi_library, sizeof job->mpi_library) < 0)
		job->mpi_library[0] = '\0';
	snprintf(job->tool_version, sizeof job->tool_version, "%s", NT_VERSION);
	nt_jobinfo_batch_from_env(getenv, (unsigned)getuid(), &job->batch);
}
