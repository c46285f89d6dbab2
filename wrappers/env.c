/* NOISETOOL_* environment parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

static void complain(char *errors, size_t size, const char *fmt, ...)
{
	size_t len = strlen(errors);
	if (len + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errors + len, size - len, fmt, ap);
	va_end(ap);
}

/* "16M", "1048576", "2G" -> bytes; 0 on any error. */
static uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	if (*s < '0' || *s > '9')
		return 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	uint64_t mult = 1;
	if (*end == 'K' || *end == 'k')
		mult = 1ull << 10;
	else if (*end == 'M' || *end == 'm')
		mult = 1ull << 20;
	else if (*end == 'G' || *end == 'g')
		mult = 1ull << 30;
	if (mult != 1)
		end++;
	if (*end || v > UINT64_MAX / mult)
		return 0;
	return v * mult;
}

int nt_env_parse(struct nt_env *env, const char *(*getenv_fn)(const char *), char *errors,
		 size_t size)
{
	int bad = 0;
	if (errors && size)
		errors[0] = '\0';
	*env = (struct nt_env){ .level = NT_PROBE_OS, .mem_bytes = 16u << 20, .out_dir = ".",
				.summary = true };

	const char *v = getenv_fn("NOISETOOL_DISABLE");
	if (v && *v) {
		if (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true"))
			env->disable = true;
		else if (strcmp(v, "0") && strcmp(v, "no") && strcmp(v, "false")) {
			complain(errors, size, "NOISETOOL_DISABLE='%s': accepted values are 0 or 1\n", v);
			bad++;
		}
	}
	v = getenv_fn("NOISETOOL_LEVEL");
	if (v && *v) {
		if (!strcmp(v, "timing"))
			env->level = NT_PROBE_TIMING;
		else if (!strcmp(v, "os"))
			env->level = NT_PROBE_OS;
		else if (!strcmp(v, "full"))
			env->level = NT_PROBE_FULL;
		else {
			complain(errors, size,
				 "NOISETOOL_LEVEL='%s': accepted values are timing, os, full; using os\n",
				 v);
			bad++;
		}
	}
	v = getenv_fn("NOISETOOL_MEM");
	if (v && *v) {
		uint64_t b = parse_size(v);
		if (b < (64u << 10) || b > (4ull << 30)) {
			complain(errors, size,
				 "NOISETOOL_MEM='%s': accepted values are 64K to 4G (suffix K, M or G); "
				 "using 16M\n",
				 v);
			bad++;
		} else {
			env->mem_bytes = b;
		}
	}
	v = getenv_fn("NOISETOOL_LOG");
	if (v && *v) {
		if (!strcmp(v, "per-rank"))
			env->log_per_rank = true;
		else if (strcmp(v, "mpiio")) {
			complain(errors, size,
				 "NOISETOOL_LOG='%s': accepted values are mpiio, per-rank; using mpiio\n",
				 v);
			bad++;
		}
	}
	v = getenv_fn("NOISETOOL_SUMMARY");
	if (v && *v) {
		if (!strcmp(v, "0"))
			env->summary = false;
		else if (strcmp(v, "1")) {
			complain(errors, size, "NOISETOOL_SUMMARY='%s': accepted values are 0 or 1\n", v);
			bad++;
		}
	}
	v = getenv_fn("NOISETOOL_CALLSITE");
	if (v && *v) {
		if (!strcmp(v, "every-call"))
			env->callsite_every_call = true;
		else if (strcmp(v, "cached")) {
			complain(errors, size,
				 "NOISETOOL_CALLSITE='%s': accepted values are cached, every-call; "
				 "using cached\n",
				 v);
			bad++;
		}
	}
	v = getenv_fn("NOISETOOL_OUT");
	if (v && *v)
		env->out_dir = v;
	return bad;
}
