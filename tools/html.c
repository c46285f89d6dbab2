/* The plotting helper as a child process: `PYTHON -m noisetool_plot KIND`, the JSON document
 * on its stdin, the page on its stdout (the output file's temporary file, or the stream). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "html.h"

extern char **environ;

#define PLOT_MISSING 3 /* noisetool_plot's exit status when matplotlib does not import */

/* Where the noisetool_plot package is: NOISETOOL_PLOT_DIR; the source tree's tools/plot for
 * the noisetool of the build tree; else the installed copy, beside the program
 * (BIN/../share/noisetool/python) or at the configured prefix. */
static void find_plot_dir(char *out, size_t size)
{
	const char *env = getenv("NOISETOOL_PLOT_DIR");
	if (env && *env) {
		snprintf(out, size, "%s", env);
		return;
	}
	char self[PATH_MAX / 2];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (strcmp(self, NT_BUILD_TOOLS_DIR) == 0) {
				snprintf(out, size, "%s", NT_SOURCE_PLOT_DIR);
				return;
			}
			snprintf(out, size, "%s/../share/noisetool/python/noisetool_plot", self);
			if (access(out, R_OK) == 0) {
				snprintf(out, size, "%s/../share/noisetool/python", self);
				return;
			}
		}
	}
	snprintf(out, size, "%s", NT_PLOT_DIR_INSTALLED);
}

/* PYTHONPATH with dir first, into buf ("PYTHONPATH=..."). */
static void python_path(char *buf, size_t size, const char *dir)
{
	const char *old = getenv("PYTHONPATH");
	snprintf(buf, size, "PYTHONPATH=%s%s%s", dir, old && *old ? ":" : "", old ? old : "");
}

/* The environment with PYTHONPATH replaced by pp; NULL when out of memory. */
static char **child_env(char *pp)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "PYTHONPATH=", 11) != 0)
			env[k++] = environ[i];
	env[k++] = pp;
	return env;
}

/* Run PYTHON -m noisetool_plot ARGS with stdin from in_fd (-1: /dev/null) and stdout to
 * out_fd (-1: a check, its stdout and stderr to /dev/null). Returns the child's pid or -errno. */
static pid_t spawn_plot(const struct html_out *h, const char *const *args, int in_fd, int out_fd)
{
	char pp[2 * NT_PATH_MAX];
	python_path(pp, sizeof pp, h->plot_dir);
	char **env = child_env(pp);
	if (!env)
		return -ENOMEM;
	const char *argv[8] = { h->python, "-m", "noisetool_plot" };
	size_t argc = 3;
	for (size_t i = 0; args[i] && argc < 7; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (in_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	else /* a check: quiet (html_open says what is missing) */
		for (int fd = 1; fd <= 2; fd++)
			posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, h->python, &fa, NULL, (char *const *)argv, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	return rc ? -rc : pid;
}

/* The child's exit status, or -1 when it did not exit (a signal). */
static int reap(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whether python can draw: `python -m noisetool_plot selftest --check` exits 0. */
static int check_python(struct html_out *h, const char *python)
{
	snprintf(h->python, sizeof h->python, "%s", python);
	const char *args[] = { "selftest", "--check", NULL };
	pid_t pid = spawn_plot(h, args, -1, -1);
	return pid < 0 ? -1 : reap(pid);
}

int html_check(struct html_out *h, const char *cmd, const char *kind, const char *path,
	       const char *const *inputs, size_t ninputs)
{
	memset(h, 0, sizeof *h);
	snprintf(h->kind, sizeof h->kind, "%s", kind);
	char why[NT_OUTFILE_WHY_MAX];
	if (nt_outfile_check(path, inputs, ninputs, why, sizeof why) != 0) {
		fprintf(stderr, "%s: --html: %s\n", cmd, why);
		return NT_EXIT_FAIL;
	}
	find_plot_dir(h->plot_dir, sizeof h->plot_dir);
	const char *env = getenv("NOISETOOL_PYTHON");
	int rc = -1;
	if (env && *env) {
		rc = check_python(h, env);
	} else {
		rc = check_python(h, "python3");
		if (rc != 0 && access("/usr/bin/python3", X_OK) == 0)
			rc = check_python(h, "/usr/bin/python3");
	}
	if (rc != 0) {
		fprintf(stderr,
			"%s: --html needs Python 3 with matplotlib (Debian/Ubuntu: apt install "
			"python3-matplotlib; NOISETOOL_PYTHON names another interpreter) and the "
			"plotting helper in %s; the text and JSON outputs do not\n",
			cmd, h->plot_dir);
		return NT_EXIT_FAIL;
	}
	return NT_EXIT_OK;
}

int html_open(struct html_out *h, const char *cmd, const char *kind, const char *path,
	      const char *const *inputs, size_t ninputs)
{
	int st = html_check(h, cmd, kind, path, inputs, ninputs);
	if (st != NT_EXIT_OK)
		return st;
	int rc = nt_outfile_open(&h->of, path, false);
	if (rc) {
		fprintf(stderr, "%s: --html: %s\n", cmd, h->of.why);
		return NT_EXIT_FAIL;
	}
	h->open = true;
	return NT_EXIT_OK;
}

int html_write(struct html_out *h, const char *cmd, int (*write_json)(FILE *f, void *ctx),
	       void *ctx)
{
	if (!h->open)
		return NT_EXIT_FAIL;
	fflush(h->of.f);
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		fprintf(stderr, "%s: --html: %s\n", cmd, strerror(errno));
		html_abort(h);
		return NT_EXIT_FAIL;
	}
	const char *args[] = { h->kind, NULL };
	pid_t pid = spawn_plot(h, args, fds[0], fileno(h->of.f));
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		fprintf(stderr, "%s: --html: cannot run %s: %s\n", cmd, h->python, strerror(-pid));
		html_abort(h);
		return NT_EXIT_FAIL;
	}
	/* A helper that dies early must not kill us with SIGPIPE: the write fails instead. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigaction(SIGPIPE, &ign, &old);
	FILE *f = fdopen(fds[1], "w");
	int wrc = f ? write_json(f, ctx) : -errno;
	if (f && fclose(f) != 0 && wrc == 0)
		wrc = -errno;
	else if (!f)
		close(fds[1]);
	sigaction(SIGPIPE, &old, NULL);
	int status = reap(pid);
	if (status != 0 || wrc != 0) {
		if (status != 0)
			fprintf(stderr, "%s: --html: drawing the page failed (%s -m noisetool_plot "
					"%s exited %d)\n",
				cmd, h->python, h->kind, status);
		else
			fprintf(stderr, "%s: --html: writing the page's data failed: %s\n", cmd,
				strerror(-wrc));
		html_abort(h);
		return NT_EXIT_FAIL;
	}
	h->open = false;
	if (nt_outfile_commit(&h->of) != 0) {
		fprintf(stderr, "%s: --html: %s\n", cmd, h->of.why);
		return NT_EXIT_FAIL;
	}
	return NT_EXIT_OK;
}

void html_abort(struct html_out *h)
{
	if (h->open)
		nt_outfile_abort(&h->of);
	h->open = false;
}
