/* System facts recorded with every measurement, CPU pinning and steal time. */
#include "nt-config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if NT_HAVE_ZLIB
#include <zlib.h>
#endif

#include <noisetool/sysinfo.h>

#include <noisetool-private/cpus.h>

#include "procfile.h"

int nt_cpulist_format(const int *cpus, size_t n, char *buf, size_t size)
{
	if (!buf || size == 0)
		return -EINVAL;
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		int w = (j > i) ? snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", cpus[i],
					   cpus[j])
				: snprintf(buf + len, size - len, "%s%d", len ? "," : "", cpus[i]);
		if (w < 0 || (size_t)w >= size - len)
			return -ENOSPC;
		len += (size_t)w;
		i = j + 1;
	}
	return (int)len;
}

int nt_allowed_cpus(int *cpus, size_t max)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return -errno;
	size_t n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return (int)n;
}

int nt_pin_self(int cpu)
{
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0)
		return -errno;
	return 0;
}

int nt_cpu_steal_ns(int cpu, uint64_t *steal_ns)
{
	uint64_t busy;
	return nt_cpus_stat(&cpu, 1, &busy, steal_ns);
}

static int hz_from_line(const char *line)
{
	if (strncmp(line, "CONFIG_HZ=", 10) == 0)
		return atoi(line + 10);
	return 0;
}

static int kernel_hz(const char *release)
{
	char path[160], line[256];
	int hz = 0;
	snprintf(path, sizeof path, "/boot/config-%s", release);
	FILE *f = fopen(path, "r");
	if (f) {
		while (!hz && fgets(line, sizeof line, f))
			hz = hz_from_line(line);
		fclose(f);
		if (hz)
			return hz;
	}
#if NT_HAVE_ZLIB
	gzFile gz = gzopen("/proc/config.gz", "rb");
	if (gz) {
		while (!hz && gzgets(gz, line, sizeof line))
			hz = hz_from_line(line);
		gzclose(gz);
	}
#endif
	return hz;
}

static void cpu_model(char *buf, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		char *colon = strchr(line, ':');
		if (colon) {
			snprintf(buf, size, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
		}
		break;
	}
	fclose(f);
}

int nt_sysinfo_collect(struct nt_sysinfo *info)
{
	if (!info)
		return -EINVAL;
	memset(info, 0, sizeof *info);
	gethostname(info->hostname, sizeof info->hostname - 1);
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(info->kernel, sizeof info->kernel, "%s", u.release);
	cpu_model(info->cpu_model, sizeof info->cpu_model);
	nt_read_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			   info->clocksource, sizeof info->clocksource);
	nt_read_first_line("/sys/devices/system/cpu/isolated", info->isolcpus,
			   sizeof info->isolcpus);
	nt_read_first_line("/sys/devices/system/cpu/nohz_full", info->nohz_full,
			   sizeof info->nohz_full);
	if (strcmp(info->nohz_full, "(null)") == 0)
		info->nohz_full[0] = '\0';
	int cpus[CPU_SETSIZE];
	int n = nt_allowed_cpus(cpus, CPU_SETSIZE);
	if (n > 0)
		nt_cpulist_format(cpus, (size_t)n, info->allowed_cpus, sizeof info->allowed_cpus);
	info->kernel_hz = kernel_hz(info->kernel);
	info->online_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return 0;
}
