/* Modules of a log, checked against the files now there. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "modcheck.h"

/* Whether s is in the first n of names. */
static int seen(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return 1;
	return 0;
}

/* Check one module; 1 when a line was written. */
static int check(FILE *err, const char *cmd, const char *path, const struct nt_log *log)
{
	const char *py_file;
	if (nt_log_python_site(path, NULL, NULL, &py_file))
		path = py_file; /* a Python site: its .py file (doc/python.md) */
	if (!path[0] || path[0] == '[' || path[0] == '<')
		return 0;
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(err, "%s: module %s: %s: its call sites are named by offset\n", cmd, path,
			strerror(errno));
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(err, "%s: module %s is not a regular file: its call sites are named by offset\n",
			cmd, path);
		return 1;
	}
	uint64_t mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	if (log->created_unix_ns && mtime_ns > log->created_unix_ns) {
		char when[64];
		struct tm tm;
		time_t t = st.st_mtim.tv_sec;
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
		fprintf(err, "%s: module %s changed after the job ran (modified %s): its file:line "
			     "names may be wrong\n",
			cmd, path, when);
		return 1;
	}
	return 0;
}

int modcheck_warn(FILE *err, const char *cmd, const struct nt_log *log)
{
	/* The distinct modules, each checked once (a job names tens of them). */
	size_t cap = 64, n = 0;
	const char **names = malloc(cap * sizeof *names);
	int said = 0;
	for (uint32_t r = 0; names && r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		for (uint32_t s = 0; names && s < k->nsites; s++) {
			const struct nt_log_site *site = &k->sites[s];
			for (uint32_t f = 0; names && f <= site->depth && f <= NT_LOG_MAX_DEPTH; f++) {
				const char *m = f == 0 ? site->module : site->frames[f - 1].module;
				if (!m || seen(names, n, m))
					continue;
				if (n == cap) {
					const char **more = realloc(names, 2 * cap * sizeof *names);
					if (!more)
						break;
					names = more;
					cap *= 2;
				}
				names[n++] = m;
				said += check(err, cmd, m, log);
			}
		}
	}
	free(names);
	return said;
}
