/* `noisetool run [OPTIONS] -- CMD ...`: run an MPI job with the wrapper library preloaded and
 * print its report. */
#include "nt-config.h"

#include <dirent.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <noisetool/inject.h>
#include <noisetool/ntlog.h>
#include <noisetool/outfile.h>
#include <noisetool-private/live-file.h>

#include "cli.h"
#include "commands.h"
#include "mpi-pick.h"

static const char usage[] =
	"Usage: noisetool run [--out DIR] [--level timing|os|full] [--wait W] [--inject SPEC]\n"
	"                     [--mpi mpich|openmpi] [--json FILE] [--html FILE]\n"
	"                     [--perfetto FILE] [--csv DIR] [--top N] [--late N]\n"
	"                     -- CMD [ARGS...]\n"
	"\n"
	"Run CMD (usually mpiexec ...) with the MPI wrapper library preloaded into every process\n"
	"it starts, then print the report of the job's log. Examples:\n"
	"  noisetool run --out logs -- mpiexec.mpich -n 2 -bind-to core ./app\n"
	"  noisetool run -- mpiexec.openmpi -n 2 --bind-to core python3 script.py\n"
	"\n"
	"  --out DIR       directory for the job log (created with its parents if missing, before\n"
	"                  the job starts; default .)\n"
	"  --level L       timing (counter only), os (default: + OS counters), full (+ hardware)\n"
	"  --mpi M         the job's MPI: mpich (and its ABI: Intel MPI, MVAPICH) or openmpi;\n"
	"                  default: found from CMD's launcher, else from what its program is\n"
	"                  linked with (the line before the job says which and why)\n"
	"  --wait W        blocking MPI calls wait by the MPI's own progress (mpi, the default;\n"
	"                  mpich is its old name), a spinning test loop (busy), or the adaptive\n"
	"                  loop that sleeps between tests while the CPU is shared (adaptive), or\n"
	"                  a test loop that always naps between tests (sleep, for comparison)\n"
	"  --inject SPEC   inject noise into the job, e.g.\n"
	"                  period=10ms,detour=100us,mode=sync|unsync,ranks=1,3,seed=42\n"
	"                  (a period of 1 ms or more, a detour of at most 90 % of it: each\n"
	"                  detour also costs a timer signal, ~19 us here)\n"
	"                  or trace=FILE (a trace from noisetool detour --trace, a regular\n"
	"                  file of at most 16 MiB); see doc/environment.md, NOISETOOL_INJECT\n"
	"  --json FILE     also write the report as JSON (doc/report-json.md); - = stdout only.\n"
	"                  Its path is checked before the job starts, by the rules of every\n"
	"                  output: another user's symlink, or one out of its directory, is\n"
	"                  refused (doc/noisetool.md, \"Outputs\")\n"
	"  --html FILE     also the report as an HTML page with plots (doc/html.md; needs\n"
	"                  Python 3 and matplotlib, checked before the job starts)\n"
	"  --perfetto FILE also the job's timeline for ui.perfetto.dev (doc/perfetto.md)\n"
	"  --csv DIR       also the report's tables as CSV files in DIR (doc/report-csv.md)\n"
	"  --top N         call sites in the printed report (default 20, 0 = all)\n"
	"  --late N        latest collective instances in the printed report (default 10)\n"
	"  -h, --help      this text\n"
	"\n"
	"The library is the one built for the job's MPI (libnoisetool-mpich.so,\n"
	"libnoisetool-ompi.so), found next to this program (build tree) or in the installed\n"
	"library directory, or the file NOISETOOL_LIB names; it is put first in LD_PRELOAD, after\n"
	"the sanitizer runtime (libasan, libtsan) that leads LD_PRELOAD or that this program was\n"
	"built with.\n"
	"Open MPI's mpirun/mpiexec is given -x for LD_PRELOAD and the NOISETOOL_ variables, in\n"
	"every part of an MPMD job (its ranks on other nodes get only those); MPICH's and Slurm's\n"
	"srun pass the whole environment on (srun --export=NONE does not: doc/noisetool.md).\n"
	"\n"
	"The job is given an id (NOISETOOL_JOB) that names its log, so that the report is of this\n"
	"job even when others write into the same directory. SIGTERM, SIGHUP, SIGQUIT, and SIGINT\n"
	"sent by a process (Ctrl-C reaches the job from the terminal), are passed to the job; a\n"
	"job that ends without MPI_Finalize (killed, a rank crashed, MPI_Abort, a time limit) is\n"
	"reported from the live files its ranks left, marked partial. Exit status: the job's, or\n"
	"1 when it left no log, 2 for bad arguments.\n";

/* The library to preload, into lib, and a line saying which and why on stderr: NOISETOOL_LIB;
 * else the one for --mpi (named), the MPI of the job's launcher or program (mpi-pick.h), the
 * only one built, or the MPI of the default `mpiexec`. Fills *pick. NT_EXIT_OK, or one line
 * and NT_EXIT_FAIL. */
static int choose_library(const char *cmd, const char *named, char *const *job,
			  struct mpi_pick *pick, char *lib, size_t size)
{
	const char *env = getenv("NOISETOOL_LIB");
	mpi_pick(job, pick);
	if (env && *env) {
		snprintf(lib, size, "%s", env);
		struct stat st;
		if (access(lib, R_OK) != 0 || stat(lib, &st) != 0) {
			fprintf(stderr, "%s: NOISETOOL_LIB=%s: %s\n", cmd, env, strerror(errno));
			return NT_EXIT_FAIL;
		}
		if (!S_ISREG(st.st_mode)) { /* the loader would skip it and the job run untraced */
			fprintf(stderr,
				"%s: NOISETOOL_LIB=%s: not a file; give the library's own path "
				"(libnoisetool-mpich.so or libnoisetool-ompi.so)\n",
				cmd, env);
			return NT_EXIT_FAIL;
		}
		fprintf(stderr, "%s: preloading %s (NOISETOOL_LIB)\n", cmd, lib);
		return NT_EXIT_OK;
	}
	if (named) {
		pick->kind = mpi_kind_named(named);
		snprintf(pick->why, sizeof pick->why, "--mpi %s", named);
	}
	if (pick->kind == MPI_KIND_UNKNOWN) {
		/* the only library built, else the MPI of the default launcher */
		char mpich[PATH_MAX], ompi[PATH_MAX];
		bool have_mpich = mpi_library(MPI_KIND_MPICH, mpich, sizeof mpich) == 0;
		bool have_ompi = mpi_library(MPI_KIND_OMPI, ompi, sizeof ompi) == 0;
		char *const dflt[] = { "mpiexec", NULL };
		if (have_mpich != have_ompi) {
			pick->kind = have_mpich ? MPI_KIND_MPICH : MPI_KIND_OMPI;
			snprintf(pick->why, sizeof pick->why, "the only MPI with a wrapper library here");
		} else {
			struct mpi_pick by_default;
			mpi_pick(dflt, &by_default);
			if (by_default.kind != MPI_KIND_UNKNOWN) {
				pick->kind = by_default.kind;
				snprintf(pick->why, sizeof pick->why,
					 "neither %s nor its program names an MPI; the default mpiexec "
					 "is %s's",
					 job[0], mpi_kind_title(by_default.kind));
			}
		}
	}
	if (pick->kind == MPI_KIND_UNKNOWN) {
		fprintf(stderr, "%s: cannot tell which MPI '%s' runs on: say --mpi mpich or "
				"--mpi openmpi\n",
			cmd, job[0]);
		return NT_EXIT_FAIL;
	}
	if (mpi_library(pick->kind, lib, size) != 0) {
		fprintf(stderr, "%s: the job runs on %s (%s) but its wrapper library is not built "
				"(tried %s; build with -Dmpi=all, or set NOISETOOL_LIB)\n",
			cmd, mpi_kind_title(pick->kind), pick->why, lib);
		return NT_EXIT_FAIL;
	}
	fprintf(stderr, "%s: %s (%s): preloading %s\n", cmd, mpi_kind_title(pick->kind),
		pick->why, lib);
	return NT_EXIT_OK;
}

/* The job's command with Open MPI's "-x NAME" for LD_PRELOAD and every NOISETOOL_ variable
 * after the launcher and after every ':' of an MPMD job (Open MPI applies an -x to the app
 * context it is in, and its ranks on other nodes get only what -x names); malloc'd, NULL when
 * out of memory. */
static char **ompi_command(char **job)
{
	extern char **environ;
	size_t n = 0, nenv = 1, contexts = 1;
	while (job[n])
		contexts += !strcmp(job[n++], ":");
	for (char **e = environ; *e; e++)
		nenv += !strncmp(*e, "NOISETOOL_", 10);
	char **names = calloc(nenv, sizeof *names);
	char **out = calloc(n + 2 * nenv * contexts + 1, sizeof *out);
	if (!names || !out) {
		free(names);
		free(out);
		return NULL;
	}
	size_t k = 0;
	names[k++] = "LD_PRELOAD";
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "NOISETOOL_", 10) && (names[k] = strndup(*e, strcspn(*e, "="))))
			k++; /* the names live until exec */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		out[m++] = job[i];
		if (i == 0 || !strcmp(job[i], ":"))
			for (size_t v = 0; v < k; v++) {
				out[m++] = "-x";
				out[m++] = names[v];
			}
	}
	free(names);
	return out;
}

/* Whether a path names a sanitizer's runtime (GCC's libasan, libtsan, ..., clang's
 * libclang_rt.*); with `first`, only one that must be loaded before any other library (ASan
 * and TSan refuse to start when an instrumented library precedes them). */
static bool is_sanitizer_runtime(const char *path, size_t len, bool first)
{
	static const struct {
		const char *prefix;
		bool first;
	} runtimes[] = {
		{ "libasan", true },	       { "libtsan", true },	     { "libhwasan", true },
		{ "libclang_rt.asan", true },  { "libclang_rt.tsan", true }, { "libubsan", false },
		{ "liblsan", false },	       { "libclang_rt.", false },
	};
	const char *base = path;
	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			base = path + i + 1;
	size_t base_len = len - (size_t)(base - path);
	for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
		size_t n = strlen(runtimes[i].prefix);
		if (base_len >= n && strncmp(base, runtimes[i].prefix, n) == 0)
			return runtimes[i].first || !first;
	}
	return false;
}

static int find_own_runtime(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name;
	if (name && *name && is_sanitizer_runtime(name, strlen(name), true)) {
		*(const char **)data = name;
		return 1;
	}
	return 0;
}

/* The job's LD_PRELOAD, malloc'd: the sanitizer runtimes that lead `old`, or else the one this
 * program runs with (a noisetool built with ASan or TSan finds the wrapper library of its own
 * build, built the same way), then lib, then the rest of `old` (entries split at ':' or ' '). */
static char *job_preload(const char *lib, const char *old)
{
	const char *own = NULL;
	dl_iterate_phdr(find_own_runtime, &own);
	if (!old)
		old = "";
	char *out = malloc(strlen(lib) + strlen(old) + (own ? strlen(own) : 0) + 3);
	if (!out)
		return NULL;
	size_t n = 0;
	const char *p = old;
	for (;;) {
		p += strspn(p, ": ");
		size_t len = strcspn(p, ": ");
		if (len == 0 || !is_sanitizer_runtime(p, len, false))
			break;
		memcpy(out + n, p, len);
		n += len;
		out[n++] = ':';
		p += len;
	}
	if (n == 0 && own) {
		strcpy(out, own);
		n = strlen(own);
		out[n++] = ':';
	}
	strcpy(out + n, lib);
	n += strlen(lib);
	p += strspn(p, ": ");
	if (*p) {
		out[n++] = ':';
		strcpy(out + n, p);
	}
	return out;
}

/* Whether name is PROG-STAMP-ID[-N]EXT: the log (or live directory) of the job ID. */
static bool of_job(const char *name, const char *id, const char *ext)
{
	size_t n = strlen(name), e = strlen(ext), k = strlen(id);
	if (n <= e + k + 1 || strcmp(name + n - e, ext) != 0)
		return false;
	n -= e;
	size_t digits = 0; /* the -N a name taken twice in one second gets */
	while (digits < n && name[n - 1 - digits] >= '0' && name[n - 1 - digits] <= '9')
		digits++;
	for (int with_n = 0; with_n < 2; with_n++) {
		size_t end = with_n ? (digits && n > digits && name[n - 1 - digits] == '-'
					       ? n - 1 - digits
					       : 0)
				    : n;
		if (end > k && name[end - k - 1] == '-' && memcmp(name + end - k, id, k) == 0)
			return true;
	}
	return false;
}

/* The job's log in dir, found by the id it was given (NOISETOOL_JOB), never by time: another
 * job's log in the same directory is not this one's. When the job wrote none (it was killed,
 * or a rank died), the live files it left (NAME.live, noisetool report reads them). */
static int find_job_log(const char *dir, const char *id, char *out, size_t size)
{
	int found = -ENOENT;
	for (int pass = 0; pass < 2 && found != 0; pass++) {
		DIR *d = opendir(dir);
		if (!d)
			return -errno;
		for (struct dirent *e; (e = readdir(d));) {
			if (!of_job(e->d_name, id, pass ? ".live" : ".ntlog"))
				continue;
			if (snprintf(out, size, "%s/%s", dir, e->d_name) < (int)size)
				found = 0;
			break;
		}
		closedir(d);
	}
	return found;
}

/* The job's logs in dir (by its id) and how many of them hold one rank (from their headers):
 * a launcher that did not give MPI its process manager (srun --mpi=none with MPICH, one MPI's
 * mpiexec starting a program built with the other) starts N separate jobs of 1 rank, each of
 * which leaves a log. */
static void count_job_logs(const char *dir, const char *id, size_t *logs, size_t *single)
{
	*logs = *single = 0;
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		char path[PATH_MAX];
		if (!of_job(e->d_name, id, ".ntlog") ||
		    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
			continue;
		(*logs)++;
		unsigned char h[NT_LOG_HEADER_BYTES];
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h && memcmp(h, "NTLOG\r\n\x1a", 8) == 0 &&
		    (h[16] | h[17] << 8 | h[18] << 16 | (uint32_t)h[19] << 24) == 1)
			(*single)++;
		close(fd);
	}
	closedir(d);
}

/* Whether a rank's live file names a process of this host that still runs. Opened without
 * blocking and read only when it is a regular file: a FIFO named rank-N in the directory would
 * otherwise hang the command before its report. */
static bool rank_alive(const char *path)
{
	struct nt_live_header h;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return false;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		  pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
	close(fd);
	return ok && memcmp(h.magic, NT_LIVE_MAGIC, sizeof h.magic) == 0 && nt_live_process_runs(&h);
}

/* A launcher may end before its ranks do (Open MPI's mpirun, signalled, exits while its ranks
 * still finish their current calls): before the live files are read, wait until no rank of
 * this host that left one still runs, for at most limit_ms. Returns the ms waited. */
static long wait_for_ranks(const char *live_dir, long limit_ms)
{
	long waited = 0;
	for (;;) {
		DIR *d = opendir(live_dir);
		if (!d)
			return waited;
		bool any = false;
		for (struct dirent *e; !any && (e = readdir(d));) {
			char path[PATH_MAX];
			if (strncmp(e->d_name, "rank-", 5) ||
			    snprintf(path, sizeof path, "%s/%s", live_dir, e->d_name) >= (int)sizeof path)
				continue;
			any = rank_alive(path);
		}
		closedir(d);
		if (!any || waited >= limit_ms)
			return waited;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		waited += 10;
	}
}

/* The signal the job was sent on our behalf (0: none). */
static volatile sig_atomic_t job_pid, forwarded;

/* SIGTERM, SIGHUP, SIGQUIT from a scheduler, timeout or kill: passed to the job, which ends and
 * leaves its live files; SIGINT too when a process sent it (the terminal's Ctrl-C reaches the
 * job itself). */
static void forward(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (sig == SIGINT && si->si_code != SI_USER && si->si_code != SI_QUEUE)
		return;
	forwarded = sig;
	if (job_pid > 0)
		kill((pid_t)job_pid, sig);
}

/* Before the job starts, so that a bad path never costs a whole run (doc/noisetool.md,
 * "Outputs"): create the log directory with its parents, and check the report's outputs by
 * the rules of every output, a trace the job replays (--inject trace=FILE) being an input
 * they must not replace. Returns 0, or prints one line and returns the exit status. */
static int prepare_outputs(const char *cmd, const char *out, const struct report_outputs *outs,
			   const char *inject)
{
	char why[NT_OUTFILE_WHY_MAX];
	if (nt_outfile_mkdirs(out, why, sizeof why) != 0) {
		fprintf(stderr, "%s: %s\n", cmd, why);
		return NT_EXIT_FAIL;
	}
	const char *inputs[1];
	size_t ninputs = 0;
	struct nt_inject_spec spec;
	if (inject && nt_inject_parse(inject, &spec, why, sizeof why) == 0 && spec.trace[0])
		inputs[ninputs++] = spec.trace;
	if (!outs->json && !outs->html && !outs->perfetto && !outs->csv_dir)
		return 0;
	return report_check_outputs(cmd, outs, inputs, ninputs);
}

int cmd_run(int argc, char **argv)
{
	const char *cmd = "noisetool run";
	const char *out = ".", *level = NULL, *inject = NULL, *wait = NULL;
	struct report_outputs outs = { 0 };
	const char *mpi = NULL;
	size_t top = 20, late = 10;
	int dashdash = -1;
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dashdash = i;
			break;
		}
	struct cli c;
	cli_init(&c, cmd, dashdash < 0 ? argc : dashdash, argv);
	while (cli_next(&c)) {
		if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
			fputs(usage, stdout);
			return NT_EXIT_OK;
		} else if (cli_is(&c, "--out")) {
			out = cli_value(&c);
		} else if (cli_is(&c, "--wait")) {
			wait = cli_value(&c);
			if (strcmp(wait, "mpi") && strcmp(wait, "mpich") && strcmp(wait, "busy") &&
			    strcmp(wait, "adaptive") && strcmp(wait, "sleep"))
				cli_usage_error(&c,
						"--wait: expected mpi, busy, adaptive or sleep, got '%s'",
						wait);
		} else if (cli_is(&c, "--mpi")) {
			mpi = cli_value(&c);
			if (mpi_kind_named(mpi) == MPI_KIND_UNKNOWN)
				cli_usage_error(&c, "--mpi: expected mpich or openmpi, got '%s'", mpi);
		} else if (cli_is(&c, "--inject")) {
			inject = cli_value(&c);
			struct nt_inject_spec spec;
			char why[1536];
			if (nt_inject_parse(inject, &spec, why, sizeof why) < 0)
				cli_usage_error(&c, "--inject: %s", why);
			/* Read here as each rank would inside MPI_Init: a trace the injector refuses
			 * (a FIFO, a device, too large, out of bounds) is said before the job. */
			if (spec.trace[0] && nt_inject_check_trace(spec.trace, why, sizeof why) < 0)
				cli_usage_error(&c, "--inject: %s", why);
		} else if (cli_is(&c, "--level")) {
			level = cli_value(&c);
			if (strcmp(level, "timing") && strcmp(level, "os") && strcmp(level, "full"))
				cli_usage_error(&c, "--level: expected timing, os or full, got '%s'", level);
		} else if (cli_is(&c, "--json")) {
			outs.json = cli_value(&c);
		} else if (cli_is(&c, "--html")) {
			outs.html = cli_value(&c);
		} else if (cli_is(&c, "--perfetto")) {
			outs.perfetto = cli_value(&c);
		} else if (cli_is(&c, "--csv")) {
			outs.csv_dir = cli_value(&c);
		} else if (cli_is(&c, "--top")) {
			top = (size_t)cli_u64(&c, 0, 1000000);
		} else if (cli_is(&c, "--late")) {
			late = (size_t)cli_u64(&c, 0, 1000000);
		} else {
			cli_unknown(&c);
		}
	}
	if (dashdash < 0 || dashdash + 1 >= argc)
		cli_usage_error(&c, "no command: use noisetool run [OPTIONS] -- CMD [ARGS...]");
	char **job = argv + dashdash + 1;

	int prepared = prepare_outputs(cmd, out, &outs, inject);
	if (prepared != 0)
		return prepared;
	char lib[PATH_MAX];
	struct mpi_pick pick;
	if (choose_library(cmd, mpi, job, &pick, lib, sizeof lib) != NT_EXIT_OK)
		return NT_EXIT_FAIL;
	char abs_lib[PATH_MAX];
	if (!realpath(lib, abs_lib))
		snprintf(abs_lib, sizeof abs_lib, "%s", lib);
	char abs_out[PATH_MAX];
	if (!realpath(out, abs_out)) {
		fprintf(stderr, "%s: cannot write in '%s': %s\n", cmd, out, strerror(errno));
		return NT_EXIT_FAIL;
	}
	/* The job's id, in its log's name: how we find that log among others. */
	char id[64];
	snprintf(id, sizeof id, "run%ld-%ld", (long)getpid(), (long)time(NULL));

	/* The environment every process of the job inherits (mpiexec passes it on). */
	char *preload = job_preload(abs_lib, getenv("LD_PRELOAD"));
	if (!preload) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return NT_EXIT_FAIL;
	}
	setenv("LD_PRELOAD", preload, 1);
	free(preload);
	setenv("NOISETOOL_OUT", abs_out, 1);
	setenv("NOISETOOL_SUMMARY", "0", 1); /* the report below says it all */
	setenv("NOISETOOL_JOB", id, 1);
	if (level)
		setenv("NOISETOOL_LEVEL", level, 1);
	if (inject)
		setenv("NOISETOOL_INJECT", inject, 1);
	if (wait)
		setenv("NOISETOOL_WAIT", wait, 1);
	if (pick.ompi_launcher && !(job = ompi_command(job))) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return NT_EXIT_FAIL;
	}

	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", cmd, strerror(errno));
		return NT_EXIT_FAIL;
	}
	if (pid == 0) {
		execvp(job[0], job);
		fprintf(stderr, "%s: cannot run '%s': %s\n", cmd, job[0], strerror(errno));
		_exit(127);
	}
	/* Signals for the job go to it; we wait for it to end and report whatever it left. */
	job_pid = pid;
	struct sigaction sa = { .sa_sigaction = forward, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &sa, NULL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	job_pid = 0;
	unsetenv("LD_PRELOAD");
	int job_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (forwarded)
		fprintf(stderr, "%s: the job was sent signal %d (%s) and ended with status %d\n", cmd,
			(int)forwarded, strsignal(forwarded), job_rc);

	char log_path[PATH_MAX + 512];
	int rc = find_job_log(abs_out, id, log_path, sizeof log_path);
	size_t len = rc == 0 ? strlen(log_path) : 0;
	if (len > 5 && !strcmp(log_path + len - 5, ".live")) {
		long waited = wait_for_ranks(log_path, 10000);
		if (waited > 0) {
			fprintf(stderr, "%s: the job's ranks outlived its launcher by %ld ms\n", cmd,
				waited);
			rc = find_job_log(abs_out, id, log_path, sizeof log_path); /* a log now? */
		}
	}
	if (rc != 0) {
		fprintf(stderr, "%s: the job (exit status %d) left no log in %s; was it an MPI program "
				"(MPI_Init ... MPI_Finalize)?\n",
			cmd, job_rc, abs_out);
		return job_rc ? job_rc : NT_EXIT_FAIL;
	}
	size_t logs, single;
	count_job_logs(abs_out, id, &logs, &single);
	if (logs > 1 && single == logs)
		fprintf(stderr,
			"%s: the job left %zu logs of 1 rank each: its processes did not form one MPI "
			"job but %zu jobs of 1 rank, which the launcher started without MPI's process "
			"manager (with srun, MPICH needs --mpi=pmi2 and Open MPI --mpi=pmix; an MPI's "
			"own mpiexec starts only programs built with that MPI). The report below is of "
			"one of them; all are in %s\n",
			cmd, logs, logs, abs_out);
	else if (logs > 1)
		fprintf(stderr,
			"%s: the job made %zu MPI jobs, each with a log in %s; the report below is of "
			"one of them (noisetool report reads the others)\n",
			cmd, logs, abs_out);
	printf("\n");
	int report_rc = report_print(cmd, log_path, &outs, top, late, true);
	return job_rc ? job_rc : report_rc;
}
