/* NOISETOOL_* environment parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/ntlog.h>

#include "arena.h"
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

/* One of a fixed list of words: *out = its index. Unset leaves *out alone. A bad value appends
 * "NAME='v': accepted values are a, b, c; using DEFAULT" and returns 1. */
static int choice(const char *(*getenv_fn)(const char *), const char *name,
		  const char *const *words, int *out, char *errors, size_t size)
{
	const char *v = getenv_fn(name);
	if (!v || !*v)
		return 0;
	char list[128] = "";
	for (int i = 0; words[i]; i++) {
		if (!strcmp(v, words[i])) {
			*out = i;
			return 0;
		}
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", words[i]);
	}
	complain(errors, size, "%s='%s': accepted values are %s; using %s\n", name, v, list,
		 words[*out]);
	return 1;
}

int nt_env_parse(struct nt_env *env, const char *(*getenv_fn)(const char *), char *errors,
		 size_t size)
{
	static const char *const off_on[] = { "0", "1", NULL };
	static const char *const levels[] = { "timing", "os", "full", NULL };
	/* "mpiio": the old name of "shared", which wrote through MPI-IO */
	static const char *const logs[] = { "shared", "per-rank", "mpiio", NULL };
	static const char *const callsites[] = { "cached", "every-call", NULL };
	/* The log's names of wait modes (noisetool/ntlog.h), by code, then "mpich": the old name of
	 * "mpi", the MPI's own blocking calls */
#define NT_WAIT_NAME_(id, code, name) [code] = name,
	static const char *const waits[] = { NT_LOG_WAIT_MODES(NT_WAIT_NAME_)[NT_LOG_WAIT_COUNT] =
						     "mpich",
					     NULL };
#undef NT_WAIT_NAME_
	if (errors && size)
		errors[0] = '\0';
	*env = (struct nt_env){ .level = NT_PROBE_OS, .mem_bytes = 16u << 20, .out_dir = ".",
				.summary = true, .poll_sample = NT_ENV_POLL_SAMPLE_DEFAULT };
	int disable = 0, level = NT_PROBE_OS, log = 0, summary = 1, callsite = 0, wait = 0, live = 1;
	int bad = choice(getenv_fn, "NOISETOOL_DISABLE", off_on, &disable, errors, size);
	bad += choice(getenv_fn, "NOISETOOL_LEVEL", levels, &level, errors, size);
	bad += choice(getenv_fn, "NOISETOOL_LOG", logs, &log, errors, size);
	bad += choice(getenv_fn, "NOISETOOL_SUMMARY", off_on, &summary, errors, size);
	bad += choice(getenv_fn, "NOISETOOL_LIVE", off_on, &live, errors, size);
	bad += choice(getenv_fn, "NOISETOOL_CALLSITE", callsites, &callsite, errors, size);
	bad += choice(getenv_fn, "NOISETOOL_WAIT", waits, &wait, errors, size);
	env->wait = wait == NT_LOG_WAIT_COUNT ? NT_LOG_WAIT_MPI : wait; /* mpich = mpi */
	env->disable = disable;
	env->level = (enum nt_probe_level)level;
	env->log_per_rank = log == 1;
	env->summary = summary;
	env->live = live;
	env->callsite_every_call = callsite == 1;

	const char *v = getenv_fn("NOISETOOL_MEM");
	if (v && *v) {
		uint64_t b = parse_size(v);
		if (b < NT_ARENA_MIN || b > NT_ARENA_MAX) {
			complain(errors, size,
				 "NOISETOOL_MEM='%s': accepted values are 1M to 4G (suffix K, M or G); "
				 "using 16M\n",
				 v);
			bad++;
		} else {
			env->mem_bytes = b;
		}
	}
	v = getenv_fn("NOISETOOL_POLL_SAMPLE");
	if (v && *v) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(v, &end, 10);
		if (*v < '0' || *v > '9' || errno || *end || n < 1 || n > NT_ENV_POLL_SAMPLE_MAX) {
			complain(errors, size,
				 "NOISETOOL_POLL_SAMPLE='%s': accepted values are 1 (time every test "
				 "call) to %u; using %u\n",
				 v, NT_ENV_POLL_SAMPLE_MAX, env->poll_sample);
			bad++;
		} else {
			env->poll_sample = (unsigned)n;
		}
	}
	v = getenv_fn("NOISETOOL_INJECT");
	if (v && *v) {
		char why[256];
		if (nt_inject_parse(v, &env->inject_spec, why, sizeof why) < 0) {
			complain(errors, size, "NOISETOOL_INJECT: %s; injection is off\n", why);
			bad++;
		} else {
			env->inject = true;
		}
	}
	v = getenv_fn("NOISETOOL_OUT");
	if (v && *v)
		env->out_dir = v;
	v = getenv_fn("NOISETOOL_JOB");
	if (v && *v) {
		/* It goes into a file name: letters, digits, '.', '_', '-' only. */
		size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
		if (v[n] != '\0' || n > NT_ENV_JOB_MAX || v[0] == '.') {
			complain(errors, size,
				 "NOISETOOL_JOB='%s': accepted values are 1 to %d letters, digits, '.', "
				 "'_' and '-', not starting with '.'; using rank 0's host and pid\n",
				 v, NT_ENV_JOB_MAX);
			bad++;
		} else {
			env->job = v;
		}
	}
	return bad;
}
