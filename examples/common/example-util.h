/* What the examples' programs share (udp-pingpong, dsm-pages): the stop flag their signal
 * handler sets, clocks, argument parsing that exits 2 with one line naming the program, pinning
 * to a CPU, a CPU-time spin, another process's CPU time, medians, and the two CPUs a
 * server/client pair runs on by default. Define EXAMPLE_NAME (the program's name, a string
 * literal) before including. */
#ifndef EXAMPLES_EXAMPLE_UTIL_H
#define EXAMPLES_EXAMPLE_UTIL_H

#ifndef EXAMPLE_NAME
#error "define EXAMPLE_NAME before including example-util.h"
#endif

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>

static volatile sig_atomic_t stop;

static inline void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static inline uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline uint64_t cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((format(printf, 1, 2), noreturn)) static inline void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, EXAMPLE_NAME ": ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n(see " EXAMPLE_NAME " --help)\n");
	va_end(ap);
	exit(2);
}

static inline long num(const char *opt, const char *v, long min, long max)
{
	char *end;
	if (!v)
		die("%s needs a value", opt);
	errno = 0;
	long x = strtol(v, &end, 10);
	if (end == v || *end || errno || x < min || x > max)
		die("%s: expected a whole number from %ld to %ld", opt, min, max);
	return x;
}

static inline double real(const char *opt, const char *v, double min, double max)
{
	char *end;
	if (!v)
		die("%s needs a value", opt);
	double x = strtod(v, &end);
	if (end == v || *end || !(x >= min && x <= max))
		die("%s: expected a number from %g to %g", opt, min, max);
	return x;
}

static inline void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		fprintf(stderr, EXAMPLE_NAME ": cannot run on CPU %d: %s\n", cpu, strerror(errno));
		_exit(1);
	}
}

static inline void work_us(long us)
{
	uint64_t end = cpu_ns() + (uint64_t)us * 1000;
	while (cpu_ns() < end)
		;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static inline uint64_t proc_cpu_ns(pid_t pid)
{
	char path[64], buf[128];
	snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

static inline void reap(pid_t pid, int sig)
{
	if (pid <= 0)
		return;
	kill(pid, sig);
	waitpid(pid, NULL, 0);
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static inline double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline void default_cpus(int *server_cpu, int *client_cpu)
{
	cpu_set_t set;
	*server_cpu = *client_cpu = -1;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return;
	for (int c = 0; c < CPU_SETSIZE && *server_cpu < 0; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (*client_cpu < 0)
			*client_cpu = c;
		else
			*server_cpu = c;
	}
	if (*server_cpu < 0)
		*server_cpu = *client_cpu;
}

#endif /* EXAMPLES_EXAMPLE_UTIL_H */
