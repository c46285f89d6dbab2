/* A SPANK plugin for Slurm (issue 36 item 2): `srun --noisetool[=LEVEL]` / `sbatch --noisetool`
 * measures a job with noisetool, and a site may measure every job by default (plugstack.conf
 * `default=on`) with `--no-noisetool` as the opt-out. In each task, just before it runs, the
 * plugin preloads the wrapper library of the task's MPI (from what its program is linked
 * with) and sends the log to the site's directory, DIR/YYYY/MM/DD (created as the user), named
 * by the job and step (NOISETOOL_JOB=slurm-JOBID.STEPID). A user's own NOISETOOL_OUT wins; a
 * directory that cannot be made or written, or a program of no known MPI, turns the tool off
 * for the job with one line (from task 0), never failing it. doc/admins.md.
 *
 * plugstack.conf:  optional PATH/noisetool-spank.so [default=on|off] [dir=DIR] [level=LEVEL]
 *                  [mpich=LIB] [ompi=LIB]
 * (LIB: the wrapper libraries, by default those installed beside this plugin.) */
#include "nt-config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "../tools/mpi-pick.h"

SPANK_PLUGIN(noisetool, 1);

static int opt_on = -1;        /* the job's choice: 1 --noisetool, 0 --no-noisetool, -1 none */
static char opt_level[16] = ""; /* --noisetool=LEVEL */

static bool valid_level(const char *l)
{
	return !strcmp(l, "timing") || !strcmp(l, "os") || !strcmp(l, "full");
}

static int on_option(int val, const char *optarg, int remote)
{
	(void)remote;
	if (val == 0) {
		opt_on = 1;
		/* sbatch passes an option given without its value on to the job's steps as
		 * the text "(null)" (Slurm 22.05). */
		if (optarg && *optarg && strcmp(optarg, "(null)") != 0) {
			if (!valid_level(optarg)) {
				slurm_error("noisetool: --noisetool=%s: expected timing, os or full",
					    optarg);
				return -1;
			}
			snprintf(opt_level, sizeof opt_level, "%s", optarg);
		}
	} else {
		opt_on = 0;
	}
	return 0;
}

static struct spank_option options[] = {
	{ "noisetool", "[LEVEL]",
	  "Measure this job with noisetool: which rank made collectives late, and why (LEVEL: "
	  "timing, os or full; default os)",
	  2, 0, on_option },
	{ "no-noisetool", NULL, "Do not measure this job with noisetool (where the site does)", 0, 1,
	  on_option },
	SPANK_OPTIONS_TABLE_END
};

/* The site's settings (plugstack.conf arguments). */
struct site {
	bool on;
	const char *dir, *level, *mpich, *ompi;
};

static int read_args(int ac, char **av, struct site *s)
{
	*s = (struct site){ .on = false, .dir = NULL, .level = "os" };
	for (int i = 0; i < ac; i++) {
		const char *a = av[i];
		if (!strcmp(a, "default=on"))
			s->on = true;
		else if (!strcmp(a, "default=off"))
			s->on = false;
		else if (!strncmp(a, "dir=", 4) && a[4])
			s->dir = a + 4;
		else if (!strncmp(a, "level=", 6) && valid_level(a + 6))
			s->level = a + 6;
		else if (!strncmp(a, "mpich=", 6) && a[6])
			s->mpich = a + 6;
		else if (!strncmp(a, "ompi=", 5) && a[5])
			s->ompi = a + 5;
		else {
			slurm_error("noisetool: plugstack.conf: unknown argument '%s'", a);
			return -1;
		}
	}
	return 0;
}

/* mkdir -p, as the task's user. 0 or -errno. */
static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = mkdir(path, 0755);
		*p = '/';
		if (rc != 0 && errno != EEXIST)
			return -errno;
	}
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -errno;
	return access(path, W_OK | X_OK) == 0 ? 0 : -errno;
}

/* argv[0] as a path, searched in the job's PATH when it has no '/'. */
static bool program_path(spank_t sp, const char *arg0, char *out, size_t size)
{
	if (strchr(arg0, '/'))
		return snprintf(out, size, "%s", arg0) < (int)size;
	char path[4096];
	if (spank_getenv(sp, "PATH", path, sizeof path) != ESPANK_SUCCESS)
		snprintf(path, sizeof path, "/usr/local/bin:/usr/bin:/bin");
	for (char *dir = strtok(path, ":"); dir; dir = strtok(NULL, ":")) {
		if (snprintf(out, size, "%s/%s", dir, arg0) < (int)size && access(out, X_OK) == 0)
			return true;
	}
	return false;
}

/* The wrapper library of kind: the site's, else the one installed beside this plugin. */
static const char *library(const struct site *s, enum mpi_kind kind, char *buf, size_t size)
{
	const char *given = kind == MPI_KIND_MPICH ? s->mpich : s->ompi;
	if (given)
		return given;
	snprintf(buf, size, "%s/libnoisetool-%s.so", NT_SPANK_LIBDIR, mpi_kind_lib(kind));
	return buf;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	struct site s;
	if (read_args(ac, av, &s) != 0)
		return 0; /* a site's mistake never fails a job: logged, tool off */
	bool on = opt_on >= 0 ? opt_on == 1 : s.on;
	if (!on)
		return 0;
	uint32_t task = 0, job = 0, step = 0;
	spank_get_item(sp, S_TASK_GLOBAL_ID, &task);
	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	bool say = task == 0;
	int argc = 0;
	char **argv = NULL;
	char prog[PATH_MAX];
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 ||
	    !program_path(sp, argv[0], prog, sizeof prog)) {
		if (say)
			fprintf(stderr, "noisetool: cannot find the job's program; not measured\n");
		return 0;
	}
	char *job_argv[] = { prog, NULL };
	struct mpi_pick pick;
	mpi_pick(job_argv, &pick);
	if (pick.kind == MPI_KIND_UNKNOWN) {
		if (say)
			fprintf(stderr, "noisetool: %s is linked with no MPI it knows; not measured\n",
				prog);
		return 0;
	}
	char buf[PATH_MAX];
	const char *lib = library(&s, pick.kind, buf, sizeof buf);
	if (access(lib, R_OK) != 0) {
		if (say)
			fprintf(stderr, "noisetool: no wrapper library %s (%s); not measured\n", lib,
				strerror(errno));
		return 0;
	}
	/* The log: the user's NOISETOOL_OUT, else the site's directory by date. */
	char out[PATH_MAX];
	if (spank_getenv(sp, "NOISETOOL_OUT", out, sizeof out) != ESPANK_SUCCESS && s.dir) {
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		snprintf(out, sizeof out, "%s/%04d/%02d/%02d", s.dir, tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday);
		int rc = mkdirs(out);
		if (rc != 0) {
			if (say)
				fprintf(stderr, "noisetool: cannot write in %s (%s); not measured\n",
					out, strerror(-rc));
			return 0;
		}
		spank_setenv(sp, "NOISETOOL_OUT", out, 1);
	}
	char preload[8192];
	char old[4096];
	if (spank_getenv(sp, "LD_PRELOAD", old, sizeof old) == ESPANK_SUCCESS && old[0])
		snprintf(preload, sizeof preload, "%s:%s", lib, old);
	else
		snprintf(preload, sizeof preload, "%s", lib);
	char id[64];
	snprintf(id, sizeof id, "slurm-%u.%u", job, step);
	spank_setenv(sp, "NOISETOOL_JOB", id, 0);
	if (opt_level[0]) /* the job's --noisetool=LEVEL, over its environment's */
		spank_setenv(sp, "NOISETOOL_LEVEL", opt_level, 1);
	else
		spank_setenv(sp, "NOISETOOL_LEVEL", s.level, 0);
	spank_setenv(sp, "LD_PRELOAD", preload, 1);
	return 0;
}

/* The options, registered here rather than by a spank_options table: sbatch and salloc
 * (the allocator context) know only registered ones. */
int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	for (struct spank_option *o = options; o->name; o++)
		if (spank_option_register(sp, o) != ESPANK_SUCCESS)
			return -1;
	return 0;
}
