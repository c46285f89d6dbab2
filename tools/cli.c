/* Argument parsing and the progress line of the noisetool subcommands. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <noisetool/sysinfo.h>

#include "cli.h"

void cli_init(struct cli *c, const char *cmd, int argc, char **argv)
{
	memset(c, 0, sizeof *c);
	c->cmd = cmd;
	c->argc = argc;
	c->argv = argv;
	c->i = 0;
}

void cli_usage_error(const struct cli *c, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", c->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see '%s --help')\n", c->cmd);
	exit(NT_EXIT_USAGE);
}

void cli_unknown(const struct cli *c)
{
	cli_usage_error(c, "unknown option '%s'", c->name);
}

bool cli_next(struct cli *c)
{
	static char name[64];
	if (c->i >= c->argc)
		return false;
	const char *a = c->argv[c->i++];
	if (strncmp(a, "--", 2) != 0 && !(a[0] == '-' && a[1] && a[2] == '\0'))
		cli_usage_error(c, "unexpected argument '%s'", a);
	const char *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	if (len >= sizeof name)
		len = sizeof name - 1;
	memcpy(name, a, len);
	name[len] = '\0';
	c->name = name;
	c->inline_value = eq ? eq + 1 : NULL;
	return true;
}

bool cli_is(const struct cli *c, const char *name)
{
	return strcmp(c->name, name) == 0;
}

const char *cli_value(struct cli *c)
{
	if (c->inline_value)
		return c->inline_value;
	if (c->i >= c->argc)
		cli_usage_error(c, "%s needs a value", c->name);
	return c->argv[c->i++];
}

void cli_flag(struct cli *c)
{
	if (c->inline_value)
		cli_usage_error(c, "%s takes no value", c->name);
}

double cli_double(struct cli *c, double min, double max)
{
	const char *s = cli_value(c);
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		cli_usage_error(c, "%s: expected a number, got '%s'", c->name, s);
	if (v < min || v > max)
		cli_usage_error(c, "%s: %s is out of range [%g, %g]", c->name, s, min, max);
	return v;
}

uint64_t cli_u64(struct cli *c, uint64_t min, uint64_t max)
{
	const char *s = cli_value(c);
	char *end;
	errno = 0;
	if (*s == '-' || *s == '+' || *s == ' ')
		cli_usage_error(c, "%s: expected a whole number, got '%s'", c->name, s);
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || *end || errno)
		cli_usage_error(c, "%s: expected a whole number, got '%s'", c->name, s);
	if (v < min || v > max)
		cli_usage_error(c, "%s: %s is out of range [%llu, %llu]", c->name, s,
				(unsigned long long)min, (unsigned long long)max);
	return v;
}

size_t cli_cpus(struct cli *c, int *cpus, size_t max)
{
	const char *s = cli_value(c);
	int allowed[CPU_SETSIZE];
	int na = nt_allowed_cpus(allowed, CPU_SETSIZE);
	if (na <= 0)
		cli_usage_error(c, "%s: cannot read this process's CPU affinity", c->name);
	char list[128];
	nt_cpulist_format(allowed, (size_t)na, list, sizeof list);
	if (strcmp(s, "all") == 0) {
		size_t n = (size_t)na < max ? (size_t)na : max;
		memcpy(cpus, allowed, n * sizeof *cpus);
		return n;
	}
	bool want[CPU_SETSIZE] = { false };
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10), b;
		if (end == p || errno || a < 0 || a >= CPU_SETSIZE || *p == '-' || *p == '+')
			cli_usage_error(c, "%s: expected 'all' or a CPU list like 0 or 0,2-3, got '%s'",
					c->name, s);
		b = a;
		p = end;
		if (*p == '-') {
			const char *q = p + 1;
			b = strtol(q, &end, 10);
			if (end == q || b < a || b >= CPU_SETSIZE)
				cli_usage_error(c, "%s: bad CPU range in '%s'", c->name, s);
			p = end;
		}
		for (long k = a; k <= b; k++)
			want[k] = true;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			cli_usage_error(c, "%s: expected 'all' or a CPU list like 0 or 0,2-3, got '%s'",
					c->name, s);
	}
	size_t n = 0;
	for (int k = 0; k < CPU_SETSIZE; k++) {
		if (!want[k])
			continue;
		bool ok = false;
		for (int j = 0; j < na; j++)
			ok |= allowed[j] == k;
		if (!ok)
			cli_usage_error(c, "%s: CPU %d is not available to this process (allowed: %s)",
					c->name, k, list);
		if (n < max)
			cpus[n++] = k;
	}
	return n;
}

size_t cli_all_cpus(const struct cli *c, int *cpus, size_t max)
{
	int n = nt_allowed_cpus(cpus, max);
	if (n <= 0) {
		fprintf(stderr, "%s: cannot read this process's CPU affinity\n", c->cmd);
		exit(NT_EXIT_FAIL);
	}
	return (size_t)n;
}

void progress_init(struct progress *p, const char *what, double seconds, int first_cpu)
{
	p->what = what;
	p->first_cpu = first_cpu;
	p->enabled = seconds > 3 && isatty(STDERR_FILENO);
}

void progress_cb(void *ctx, int cpu, double elapsed_s, double total_s)
{
	struct progress *p = ctx;
	if (!p->enabled || cpu != p->first_cpu)
		return;
	fprintf(stderr, "\r%s: %.0f of %.0f s ", p->what, elapsed_s, total_s);
	fflush(stderr);
}

void progress_done(struct progress *p)
{
	if (p->enabled)
		fprintf(stderr, "\r\033[K");
}

size_t cli_take_args(int *argc, char **argv, const char *const *valued, bool dash_is_arg,
		     char **out)
{
	size_t n = 0;
	int kept = 0;
	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || (dash_is_arg && !strcmp(a, "-"))) {
			out[n++] = argv[i];
			continue;
		}
		argv[kept++] = argv[i];
		if (a[1] != '-' || strchr(a, '=') || i + 1 >= *argc)
			continue;
		for (const char *const *v = valued; *v; v++)
			if (!strcmp(a, *v)) {
				argv[kept++] = argv[++i]; /* its value, whatever it looks like */
				break;
			}
	}
	*argc = kept;
	return n;
}
