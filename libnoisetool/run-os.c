/* What the OS did to a measuring thread over a whole run (run-os.h): its CPUs, schedstat's
 * run delay and run count, its CPU's steal. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include <noisetool/sysinfo.h>
#include <noisetool-private/schedstat.h>

#include "run-os.h"

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

void nt_run_os_open(struct nt_run_os_meter *rs)
{
	memset(rs, 0, sizeof *rs);
	rs->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	uint64_t d, c;
	if (rs->schedstat_fd >= 0 && read_schedstat(rs->schedstat_fd, &d, &c) != 0) {
		close(rs->schedstat_fd);
		rs->schedstat_fd = -1;
	}
}

void nt_run_os_begin(struct nt_run_os_meter *rs)
{
	rs->out.cpu_start = sched_getcpu();
	rs->steal_ok = nt_cpu_steal_ns(rs->out.cpu_start, &rs->steal0) == 0;
	if (rs->schedstat_fd >= 0)
		read_schedstat(rs->schedstat_fd, &rs->run_delay0, &rs->run_count0);
}

void nt_run_os_end(struct nt_run_os_meter *rs)
{
	uint64_t d, c, steal;
	if (rs->schedstat_fd >= 0 && read_schedstat(rs->schedstat_fd, &d, &c) == 0) {
		rs->out.run_delay_known = true;
		rs->out.run_delay_ns = d - rs->run_delay0;
		rs->out.run_count_delta = c - rs->run_count0;
	}
	rs->out.cpu_end = sched_getcpu();
	if (rs->steal_ok && rs->out.cpu_end == rs->out.cpu_start &&
	    nt_cpu_steal_ns(rs->out.cpu_end, &steal) == 0) {
		rs->out.steal_known = true;
		rs->out.steal_ns = steal - rs->steal0;
	}
}

void nt_run_os_close(struct nt_run_os_meter *rs)
{
	if (rs->schedstat_fd >= 0)
		close(rs->schedstat_fd);
	rs->schedstat_fd = -1;
}

int nt_run_os_run_count(const struct nt_run_os_meter *rs, uint64_t *count)
{
	uint64_t d;
	if (rs->schedstat_fd < 0)
		return -ENOENT;
	return read_schedstat(rs->schedstat_fd, &d, count);
}
