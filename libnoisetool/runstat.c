/* Run-level OS statistics of a measuring thread. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include <noisetool/sysinfo.h>

#include "probe-source.h"
#include "runstat.h"

static int read_schedstat(int fd, uint64_t *delay, uint64_t *count)
{
	char buf[96];
	uint64_t run;
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return nt_parse_schedstat(buf, &run, delay, count);
}

void nt_runstat_open(struct nt_runstat *rs)
{
	memset(rs, 0, sizeof *rs);
	rs->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	uint64_t d, c;
	if (rs->schedstat_fd >= 0 && read_schedstat(rs->schedstat_fd, &d, &c) != 0) {
		close(rs->schedstat_fd);
		rs->schedstat_fd = -1;
	}
}

void nt_runstat_begin(struct nt_runstat *rs)
{
	rs->cpu_start = sched_getcpu();
	rs->steal_ok = nt_cpu_steal_ns(rs->cpu_start, &rs->steal0) == 0;
	if (rs->schedstat_fd >= 0)
		read_schedstat(rs->schedstat_fd, &rs->run_delay0, &rs->run_count0);
}

void nt_runstat_end(struct nt_runstat *rs)
{
	uint64_t d, c, steal;
	if (rs->schedstat_fd >= 0 && read_schedstat(rs->schedstat_fd, &d, &c) == 0) {
		rs->run_delay_known = true;
		rs->run_delay_ns = d - rs->run_delay0;
		rs->run_count_delta = c - rs->run_count0;
	}
	rs->cpu_end = sched_getcpu();
	if (rs->steal_ok && rs->cpu_end == rs->cpu_start &&
	    nt_cpu_steal_ns(rs->cpu_end, &steal) == 0) {
		rs->steal_known = true;
		rs->steal_ns = steal - rs->steal0;
	}
}

void nt_runstat_close(struct nt_runstat *rs)
{
	if (rs->schedstat_fd >= 0)
		close(rs->schedstat_fd);
	rs->schedstat_fd = -1;
}

int nt_runstat_run_count(const struct nt_runstat *rs, uint64_t *count)
{
	uint64_t d;
	if (rs->schedstat_fd < 0)
		return -ENOENT;
	return read_schedstat(rs->schedstat_fd, &d, count);
}
