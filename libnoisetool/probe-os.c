/* Probe sources from the kernel: getrusage(RUSAGE_THREAD), /proc/thread-self/schedstat and the
 * thread CPU clock. Costs here: getrusage ~130 ns, schedstat pread ~260 ns. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <noisetool-private/schedstat.h>

#include "probe-source.h"

static uint32_t rusage_open(void **state, const struct nt_probe_config *cfg)
{
	(void)cfg;
	struct rusage ru;
	*state = NULL;
	return getrusage(RUSAGE_THREAD, &ru) == 0 ? NT_SRC_RUSAGE : 0;
}

static uint32_t rusage_read(void *state, struct nt_probe_sample *s)
{
	(void)state;
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	s->vol_switches = (uint64_t)ru.ru_nvcsw;
	s->invol_switches = (uint64_t)ru.ru_nivcsw;
	s->minor_faults = (uint64_t)ru.ru_minflt;
	s->major_faults = (uint64_t)ru.ru_majflt;
	s->sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
	return NT_SRC_RUSAGE;
}

static void no_close(void *state)
{
	(void)state;
}

const struct nt_probe_source_ops nt_probe_source_rusage = {
	.name = "getrusage",
	.bits = NT_SRC_RUSAGE,
	.min_level = NT_PROBE_OS,
	.open = rusage_open,
	.read = rusage_read,
	.close = no_close,
};

/* The fd stays bound to the thread that opened it, so reads from it are per-thread. */
static uint32_t schedstat_open(void **state, const struct nt_probe_config *cfg)
{
	(void)cfg;
	int *fd = malloc(sizeof *fd);
	if (!fd)
		return 0;
	*fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	*state = fd;
	if (*fd < 0)
		return 0;
	struct nt_probe_sample probe_try = { 0 };
	if (nt_probe_source_schedstat.read(fd, &probe_try) == 0)
		return 0;
	return NT_SRC_SCHEDSTAT | NT_SRC_THREAD_CPU;
}

/* "run_time_ns run_delay_ns run_count\n" (noisetool-private/schedstat.h) */
int nt_parse_schedstat(const char *buf, uint64_t *run_ns, uint64_t *delay_ns, uint64_t *count)
{
	uint64_t v[3];
	const char *p = buf;
	for (int i = 0; i < 3; i++) {
		char *end;
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		unsigned long long x = strtoull(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		v[i] = x;
		p = end;
	}
	*run_ns = v[0];
	*delay_ns = v[1];
	*count = v[2];
	return 0;
}

static uint32_t schedstat_read(void *state, struct nt_probe_sample *s)
{
	int fd = *(int *)state;
	char buf[96];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (nt_parse_schedstat(buf, &s->cpu_ns, &s->run_delay_ns, &s->run_count) != 0)
		return 0;
	return NT_SRC_SCHEDSTAT | NT_SRC_THREAD_CPU;
}

static void schedstat_close(void *state)
{
	int *fd = state;
	if (fd && *fd >= 0)
		close(*fd);
	free(fd);
}

const struct nt_probe_source_ops nt_probe_source_schedstat = {
	.name = "schedstat",
	.bits = NT_SRC_SCHEDSTAT | NT_SRC_THREAD_CPU,
	.min_level = NT_PROBE_OS,
	.open = schedstat_open,
	.read = schedstat_read,
	.close = schedstat_close,
};

/* Fallback for CPU time when schedstat is missing; probe.c skips it when schedstat works. */
static uint32_t thread_cpu_open(void **state, const struct nt_probe_config *cfg)
{
	(void)cfg;
	struct timespec ts;
	*state = NULL;
	return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? NT_SRC_THREAD_CPU : 0;
}

static uint32_t thread_cpu_read(void *state, struct nt_probe_sample *s)
{
	(void)state;
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	s->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return NT_SRC_THREAD_CPU;
}

const struct nt_probe_source_ops nt_probe_source_thread_cpu = {
	.name = "thread-cpu-clock",
	.bits = NT_SRC_THREAD_CPU,
	.min_level = NT_PROBE_OS,
	.open = thread_cpu_open,
	.read = thread_cpu_read,
	.close = no_close,
};
