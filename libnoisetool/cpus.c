/* A rank's CPUs: their times from /proc/stat, and CPU lists parsed (noisetool-private/cpus.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <noisetool-private/cpus.h>

/* Whether cpu is one of cpus[0..n) (ascending: a binary search). */
static bool listed(const int *cpus, size_t n, long cpu)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cpus[mid] == cpu)
			return true;
		if (cpus[mid] < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* One line of /proc/stat (NUL-terminated, no newline): a listed CPU's ticks join the sums. */
static int stat_line(const char *line, const int *cpus, size_t n, uint64_t *busy, uint64_t *steal,
		     size_t *seen)
{
	if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
		return 0;
	char *end;
	errno = 0;
	long cpu = strtol(line + 3, &end, 10);
	if (errno || !listed(cpus, n, cpu))
		return 0;
	/* user nice system idle iowait irq softirq steal (guest time is inside user) */
	unsigned long long v[8];
	const char *p = end;
	for (int i = 0; i < 8; i++) {
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		p = end;
	}
	*busy += v[0] + v[1] + v[2] + v[5] + v[6];
	*steal += v[7];
	(*seen)++;
	return 0;
}

int nt_cpus_stat(const int *cpus, size_t n, uint64_t *busy_ns, uint64_t *steal_ns)
{
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[4096];
	size_t have = 0, seen = 0;
	uint64_t busy = 0, steal = 0;
	int rc = 0;
	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof buf - 1 - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			break;
		}
		have += (size_t)got;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n')) != NULL && rc == 0) {
			*nl = '\0';
			rc = stat_line(line, cpus, n, &busy, &steal, &seen);
			line = nl + 1;
		}
		if (rc)
			break;
		size_t rest = have - (size_t)(line - buf);
		if (got == 0) { /* the end: a last line without a newline */
			if (rest)
				rc = stat_line(line, cpus, n, &busy, &steal, &seen);
			break;
		}
		if (rest == sizeof buf - 1) { /* a line longer than the buffer: not a CPU's */
			if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
				rc = -EINVAL;
				break;
			}
			rest = 0;
		}
		memmove(buf, line, rest);
		have = rest;
	}
	close(fd);
	if (rc)
		return rc;
	if (seen != n)
		return -ENOENT;
	long tck = sysconf(_SC_CLK_TCK);
	uint64_t ns = 1000000000ull / (uint64_t)(tck > 0 ? tck : 100);
	*busy_ns = busy * ns;
	*steal_ns = steal * ns;
	return 0;
}

/* A CPU number of a list at *p: decimal digits that fit 32 bits. */
static int number(const char **p, uint32_t *out)
{
	if (**p < '0' || **p > '9')
		return -EINVAL;
	uint64_t v = 0;
	while (**p >= '0' && **p <= '9') {
		v = v * 10 + (uint64_t)(**p - '0');
		if (v > UINT32_MAX)
			return -EINVAL;
		(*p)++;
	}
	*out = (uint32_t)v;
	return 0;
}

int nt_cpulist_parse(const char *list, struct nt_cpu_range *runs, size_t max)
{
	size_t n = 0;
	const char *p = list;
	if (!p)
		return -EINVAL;
	while (*p) {
		struct nt_cpu_range r;
		if (number(&p, &r.lo))
			return -EINVAL;
		r.hi = r.lo;
		if (*p == '-') {
			p++;
			if (number(&p, &r.hi) || r.hi < r.lo)
				return -EINVAL;
		}
		if (n == max || (n > 0 && r.lo <= runs[n - 1].hi))
			return -EINVAL;
		runs[n++] = r;
		if (*p == ',' && p[1] != '\0')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return (int)n;
}

uint64_t nt_cpulist_count(const struct nt_cpu_range *runs, size_t n)
{
	uint64_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += (uint64_t)runs[i].hi - runs[i].lo + 1;
	return c;
}

bool nt_cpulist_within(const struct nt_cpu_range *a, size_t na, const struct nt_cpu_range *b,
		       size_t nb)
{
	size_t j = 0;
	for (size_t i = 0; i < na; i++) {
		while (j < nb && b[j].hi < a[i].lo)
			j++;
		if (j == nb || b[j].lo > a[i].lo || b[j].hi < a[i].hi)
			return false;
	}
	return true;
}

bool nt_cpulist_overlap(const struct nt_cpu_range *a, size_t na, const struct nt_cpu_range *b,
			size_t nb)
{
	size_t i = 0, j = 0;
	while (i < na && j < nb) {
		if (a[i].hi < b[j].lo)
			i++;
		else if (b[j].hi < a[i].lo)
			j++;
		else
			return true;
	}
	return false;
}
