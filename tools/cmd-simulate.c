/* `noisetool simulate`: what a noise signature does to a collective at 10^5-10^6+ ranks
 * (LogGP, per-rank detours, absorption; doc/simulate.md), and `--calibrate` for LogGP. */
#include "nt-config.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <noisetool/clock.h>
#include <noisetool/outfile.h>
#include <noisetool/sim.h>
#include <noisetool/sysinfo.h>
#include <noisetool-private/sim-calibration.h>

#include "cli.h"
#include "commands.h"
#include "html.h"

extern char **environ;

#define MAX_SIGNATURES 256

static const char usage[] =
	"Usage: noisetool simulate --ranks N[,N...] --collective C [--algorithm A] [--bytes B]\n"
	"                          (--noise SPEC | --signature FILE[,FILE...])\n"
	"                          (--sync | --unsync | --sync-unsync) [--seed S]\n"
	"                          [--iterations N] [--compute-us C]\n"
	"                          [--loggp L,o,g,G | --loggp-file FILE]\n"
	"                          [--threads N] [--json FILE] [--html FILE]\n"
	"       noisetool simulate --calibrate [--repetitions N] [--save-loggp FILE]\n"
	"\n"
	"Predict what node noise does to a collective at scale: every rank follows the LogGP model\n"
	"(a message of k bytes: o busy on the sender, L + (k-1)G on the wire, o busy on the\n"
	"receiver; sends of one rank at least g apart), and detours delay a rank only while it is\n"
	"busy (compute, send and receive overhead), never while it waits. Each rank count is\n"
	"simulated without and with the noise; the table shows both and their ratio.\n"
	"\n"
	"  --ranks LIST        rank counts: 1024,4096 or ranges of powers of two, 2^10-2^21 or\n"
	"                      1024-2097152 (1 to 2^30)\n"
	"  --collective C      barrier, bcast, reduce, allreduce, allgather, alltoall\n"
	"  --algorithm A       barrier: dissemination; bcast, reduce: binomial (root 0);\n"
	"                      allreduce: recursive-doubling; allgather, alltoall: bruck (default)\n"
	"                      or ring (O(P^2) messages, at most 16384 ranks)\n"
	"  --bytes B           message size; per-rank block for allgather/alltoall (default 8;\n"
	"                      barrier messages are empty)\n"
	"  --noise SPEC        periodic detours, in the injector's words (NOISETOOL_INJECT):\n"
	"                      period=1ms,detour=25us (period the interval, detour the length;\n"
	"                      a bare number is us), or Engelmann's: freq=1kHz,length=25us\n"
	"                      (freq in Hz, kHz, MHz; length, or duration, needs its unit);\n"
	"                      either with mode=sync|unsync (as --sync/--unsync). The old\n"
	"                      freq=F,period=D (period the length, bare ns) still works, with a\n"
	"                      note; mixed spellings are refused (doc/simulate.md, one table)\n"
	"  --signature FILES   node signatures from `noisetool detour|ftq --json` (periodic\n"
	"                      components and rare long detours) or --trace (replayed in a loop);\n"
	"                      rank r follows model r mod n (one model per file and CPU)\n"
	"  --sync              every rank's detours at the same times (a --noise run starts just\n"
	"                      as a detour ends)\n"
	"  --unsync            each rank at its own seeded random phase / offset\n"
	"  --sync-unsync       both, one after the other: two tables, and the JSON is a\n"
	"                      noisetool-simulate-set/1 holding one document per mode\n"
	"  --seed S            seed of every random draw (default 1)\n"
	"  --iterations N      bulk-synchronous loop: N times compute, then the collective\n"
	"                      (default 1)\n"
	"  --compute-us C      compute per iteration on every rank, in us (default 0)\n"
	"  --loggp L,o,g,G     network in ns, G in ns per byte\n"
	"  --loggp-file FILE   the values a --calibrate --save-loggp FILE kept. Without either:\n"
	"                      $XDG_CONFIG_HOME/noisetool/loggp.json (else ~/.config/noisetool/\n"
	"                      loggp.json) when it exists, else the development VM's 22,78,71,0.123;\n"
	"                      `noisetool version` says which\n"
	"  --threads N         run each round's rank ranges on N threads, 1 to 64 (default: one\n"
	"                      per CPU this process may run on); the results do not depend on it\n"
	"  --json FILE         also write the results as JSON (doc/simulate.md); - = stdout only\n"
	"  --html FILE         a page with plots: magnification and times against ranks\n"
	"                      (doc/html.md; needs Python 3 with matplotlib, checked before\n"
	"                      anything is simulated); - = stdout only\n"
	"  --calibrate         measure L, o, g, G with a 2-rank MPI ping-pong (mpiexec.mpich\n"
	"                      -n 2 -bind-to core, or Open MPI's in a build without MPICH),\n"
	"                      N times; a batch of samples during which either rank was preempted\n"
	"                      is measured again, outlying repetitions are rejected; prints each\n"
	"                      repetition, each parameter's median, min, max and MAD, and the\n"
	"                      --loggp line. Exit 1 when fewer than 3 repetitions agree\n"
	"  --repetitions N     with --calibrate: 1 to 64 (default 5)\n"
	"  --save-loggp FILE   with --calibrate: write the result (values, spread, date, host,\n"
	"                      CPU, MPI) as JSON for --loggp-file (checked before measuring)\n"
	"  -h, --help          this text\n"
	"\n"
	"Events are message sends + receives + compute phases of one simulated run; events/s\n"
	"counts both runs (noise-free and noisy) per second of wall time, on the threads shown.\n"
	"\n"
	"Outputs (--json, --html, --save-loggp): a new or regular file is replaced atomically, a\n"
	"symlink of yours to a file beside it is written through, a character device, a FIFO\n"
	"(with a reader) or - is written in place; a directory, a missing directory, another\n"
	"user's symlink, a symlink out of its directory, a --signature file or both naming one\n"
	"file is refused before anything is read or simulated (doc/noisetool.md, \"Outputs\").\n"
	"A --signature is a regular file or a pipe (a FIFO without a writer reads as empty, never\n"
	"waited for), a --loggp-file a regular file; a device is never read.\n"
	"\n"
	"Exit status: 0 done, 1 a signature or LogGP file is unreadable, an output failed or a\n"
	"calibration cannot be trusted, 2 bad arguments (including a malformed signature or LogGP\n"
	"file).\n";

#ifdef NT_LOGGP_PINGPONG
/* One line of the ping-pong (tools/loggp-pingpong.c): "mpi ...", "clock ..." or "rep R L o g G
 * o_send o_recv half8 half1MiB allreduce retried preempted"; a repetition is printed. */
static void calib_line(const char *line, struct nt_loggp_calib *cal, struct nt_sim_loggp *reps,
		       bool *preempted, size_t *n)
{
	int r, pre;
	unsigned retried;
	double L, o, g, G, os, orv, h8, hm, ar;
	if (strncmp(line, "mpi ", 4) == 0) {
		snprintf(cal->mpi, sizeof cal->mpi, "%.*s", (int)strcspn(line + 4, "\n"), line + 4);
	} else if (sscanf(line, "rep %d %lf %lf %lf %lf %lf %lf %lf %lf %lf %u %d", &r, &L, &o, &g,
			  &G, &os, &orv, &h8, &hm, &ar, &retried, &pre) == 12 &&
		   *n < NT_LOGGP_MAX_REPS) {
		reps[*n] = (struct nt_sim_loggp){ L, o, g, G };
		preempted[*n] = pre != 0;
		(*n)++;
		printf("%4d %8.1f %8.1f %8.1f %10.4f %8.1f %8.1f %9.1f %11.1f %9.1f %7u%s\n", r, L, o,
		       g, G, os, orv, h8, hm / 1e3, ar, retried, pre ? "  preempted" : "");
		fflush(stdout);
	}
}
#endif

/* --calibrate [--repetitions N] [--save-loggp FILE]: measure, combine, print, save. */
static int calibrate(const char *cmd, unsigned nrep, const char *save)
{
#ifdef NT_LOGGP_PINGPONG
	char err[512];
	/* The output is checked before anything is measured. */
	if (save && nt_outfile_check(save, NULL, 0, err, sizeof err) != 0) {
		fprintf(stderr, "%s: --save-loggp: %s\n", cmd, err);
		return NT_EXIT_FAIL;
	}
	const char *candidates[] = { NT_LOGGP_PINGPONG, NT_LOGGP_PINGPONG_INSTALLED };
	const char *prog = NULL;
	for (size_t i = 0; i < 2 && !prog; i++)
		if (access(candidates[i], X_OK) == 0)
			prog = candidates[i];
	if (!prog) {
		fprintf(stderr, "%s: the ping-pong program is missing (%s)\n", cmd,
			NT_LOGGP_PINGPONG_INSTALLED);
		return NT_EXIT_FAIL;
	}
	char nbuf[16];
	snprintf(nbuf, sizeof nbuf, "%u", nrep);
	char *argv[] = { NT_LOGGP_MPIEXEC, "-n", "2", NT_LOGGP_BIND, "core", (char *)prog, nbuf,
			 NULL };
	int fds[2];
	if (pipe(fds) != 0) {
		fprintf(stderr, "%s: pipe: %s\n", cmd, strerror(errno));
		return NT_EXIT_FAIL;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	pid_t pid;
	int rc = posix_spawnp(&pid, NT_LOGGP_MPIEXEC, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		fprintf(stderr, "%s: cannot run %s: %s\n", cmd, NT_LOGGP_MPIEXEC, strerror(rc));
		return NT_EXIT_FAIL;
	}
	struct nt_loggp_calib cal = { 0 };
	struct nt_sim_loggp reps[NT_LOGGP_MAX_REPS];
	bool pre[NT_LOGGP_MAX_REPS];
	size_t n = 0;
	printf("%u repetitions of a 2-rank ping-pong (%s -n 2 %s core)\n", nrep, NT_LOGGP_MPIEXEC,
	       NT_LOGGP_BIND);
	printf(" rep     L ns     o ns     g ns     G ns/B   o_send   o_recv  half 8 B  "
	       "half 1 MiB  allreduce retried\n"
	       "                                               ns       ns        ns          us"
	       "         ns\n");
	fflush(stdout);
	FILE *in = fdopen(fds[0], "r");
	char line[1024];
	while (in && fgets(line, sizeof line, in))
		calib_line(line, &cal, reps, pre, &n);
	if (in)
		fclose(in);
	else
		close(fds[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return NT_EXIT_FAIL;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || n != nrep) {
		fprintf(stderr, "%s: the ping-pong failed (%zu of %u repetitions)\n", cmd, n, nrep);
		return NT_EXIT_FAIL;
	}
	if (nt_loggp_combine(reps, pre, n, &cal, err, sizeof err) != 0) {
		fprintf(stderr, "%s: the calibration cannot be trusted: %s\n", cmd, err);
		return NT_EXIT_FAIL;
	}
	if (cal.preempt_ignored)
		printf("\n%u of %zu repetitions were preempted (a batch lost over 10 %% of its time "
		       "to run delay after 3 tries): too few clean ones, so all were used and only "
		       "outliers rejected\n", cal.preempted, n);
	else if (cal.preempted)
		printf("\n%u of %zu repetitions were preempted and rejected\n", cal.preempted, n);
	printf("\nparameter       median        min        max        MAD  kept/rejected\n");
	const char *names[] = { "L (ns)", "o (ns)", "g (ns)", "G (ns/B)" };
	const struct nt_loggp_spread *sp[] = { &cal.L, &cal.o, &cal.g, &cal.G };
	for (int i = 0; i < 4; i++)
		printf("%-10s %11.4g %10.4g %10.4g %10.3g  %u/%u\n", names[i], sp[i]->median,
		       sp[i]->min, sp[i]->max, sp[i]->mad, sp[i]->kept, sp[i]->rejected);
	printf("--loggp %.4g,%.4g,%.4g,%.4g\n", cal.loggp.L_ns, cal.loggp.o_ns, cal.loggp.g_ns,
	       cal.loggp.G_ns_per_byte);
	if (fflush(stdout) != 0)
		return NT_EXIT_FAIL;
	if (!save)
		return NT_EXIT_OK;
	struct nt_sysinfo si;
	nt_sysinfo_collect(&si);
	snprintf(cal.host, sizeof cal.host, "%s", si.hostname);
	snprintf(cal.cpu, sizeof cal.cpu, "%s", si.cpu_model);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(cal.date, sizeof cal.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	struct nt_outfile of;
	if (nt_outfile_open(&of, save, false) != 0) {
		fprintf(stderr, "%s: %s\n", cmd, of.why);
		return NT_EXIT_FAIL;
	}
	if (nt_loggp_write(of.f, &cal) != 0) {
		fprintf(stderr, "%s: writing '%s' failed\n", cmd, save);
		nt_outfile_abort(&of);
		return NT_EXIT_FAIL;
	}
	if (nt_outfile_commit(&of) != 0) {
		fprintf(stderr, "%s: %s\n", cmd, of.why);
		return NT_EXIT_FAIL;
	}
	fprintf(stderr, "%s: saved to %s (read by --loggp-file)\n", cmd, save);
	return NT_EXIT_OK;
#else
	(void)nrep, (void)save;
	fprintf(stderr, "%s: --calibrate needs MPI; this noisetool was built without it\n", cmd);
	return NT_EXIT_FAIL;
#endif
}

/* `simulate --calibrate ...`: only the calibration's options. */
static int calibrate_main(const char *cmd, int argc, char **argv)
{
	struct cli c;
	unsigned nrep = 5;
	const char *save = NULL;
	cli_init(&c, cmd, argc, argv);
	while (cli_next(&c)) {
		if (cli_is(&c, "--calibrate")) {
			cli_flag(&c);
		} else if (cli_is(&c, "--repetitions")) {
			nrep = (unsigned)cli_u64(&c, 1, NT_LOGGP_MAX_REPS);
		} else if (cli_is(&c, "--save-loggp")) {
			save = cli_value(&c);
		} else if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
			fputs(usage, stdout);
			return NT_EXIT_OK;
		} else {
			cli_usage_error(&c, "--calibrate takes only --repetitions and --save-loggp");
		}
	}
	return calibrate(cmd, nrep, save);
}

struct progress_state {
	struct progress p;
	uint64_t ranks;
	uint64_t t0_ns, last_ns;
};

static void on_progress(void *ctx, double fraction)
{
	struct progress_state *s = ctx;
	uint64_t now = nt_clock_monotonic_ns();
	if (now - s->last_ns < 250000000u || now - s->t0_ns < 3000000000u)
		return;
	s->last_ns = now;
	fprintf(stderr, "\r%s: %llu ranks, %.0f %% ", s->p.what, (unsigned long long)s->ranks,
		fraction * 100);
	fflush(stderr);
}

/* The results of one or both modes (--sync-unsync). */
struct sim_doc {
	const struct nt_sim_report *reps;
	size_t nreps;
};

/* The JSON of d: one noisetool-simulate/1 document, or a noisetool-simulate-set/1 holding one
 * per mode. 0 or -EIO. */
static int write_doc(FILE *f, void *ctx)
{
	const struct sim_doc *d = ctx;
	if (d->nreps == 1)
		return nt_sim_write_json(f, &d->reps[0]);
	fprintf(f, "{\n  \"schema\": \"noisetool-simulate-set/1\",\n  \"runs\": [\n");
	for (size_t i = 0; i < d->nreps; i++) {
		if (nt_sim_write_json(f, &d->reps[i]) != 0)
			return -EIO;
		fputs(i + 1 < d->nreps ? ",\n" : "", f);
	}
	fprintf(f, "  ]\n}\n");
	return ferror(f) ? -EIO : 0;
}

static bool on_stdout(const char *path)
{
	return path && (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"));
}

/* Split "a,b,c" into paths (in place). Returns the count. */
static size_t split_list(char *s, const char **out, size_t max)
{
	size_t n = 0;
	for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
		out[n++] = tok;
	return n;
}

/* What a `simulate` command line asks for (read_options, check_args). */
struct sim_args {
	struct nt_sim_config cfg;
	uint64_t ranks[NT_SIM_MAX_RANK_COUNTS]; /* ascending */
	int nranks;
	bool sync, both;                 /* the mode; both: synchronized, then not */
	uint64_t seed;
	const char *noise_spec;          /* --noise as given, or NULL: --signature */
	struct nt_sim_noise_spec nspec;  /* --noise parsed */
	char *sig_list;                  /* --signature's value (malloc'd), split in place: */
	const char *sigs[MAX_SIGNATURES];
	size_t nsigs;
	const char *json_path, *html_path;
	const char *loggp_file;          /* --loggp-file */
	bool have_coll, have_sync, have_loggp; /* --collective, a mode, --loggp given */
};

/* Read the options into *a, each checked alone (a bad one is a usage error: cli_usage_error
 * ends the process). Returns true to go on, else false with *status: the exit status after
 * --help, or NT_EXIT_FAIL when memory ran out. */
static bool read_options(const char *cmd, struct cli *c, int argc, char **argv,
			 struct sim_args *a, int *status)
{
	*a = (struct sim_args){
		.cfg = { .bytes = 8, .loggp = NT_SIM_LOGGP_DEFAULT, .iterations = 1 },
		.seed = 1,
	};
	char err[512];
	cli_init(c, cmd, argc, argv);
	if (argc == 0)
		cli_usage_error(c, "missing --ranks and --collective");
	while (cli_next(c)) {
		if (cli_is(c, "--help") || cli_is(c, "-h")) {
			fputs(usage, stdout);
			*status = NT_EXIT_OK;
			return false;
		} else if (cli_is(c, "--ranks")) {
			a->nranks = nt_sim_parse_ranks(cli_value(c), a->ranks,
						       NT_SIM_MAX_RANK_COUNTS, err, sizeof err);
			if (a->nranks < 0)
				cli_usage_error(c, "--ranks %s", err);
		} else if (cli_is(c, "--collective")) {
			const char *v = cli_value(c);
			if (nt_sim_collective_parse(v, &a->cfg.collective))
				cli_usage_error(c, "--collective: '%s' is not one of barrier, "
						   "bcast, reduce, allreduce, allgather, "
						   "alltoall", v);
			a->have_coll = true;
		} else if (cli_is(c, "--algorithm")) {
			const char *v = cli_value(c);
			if (nt_sim_algorithm_parse(v, &a->cfg.algorithm))
				cli_usage_error(c, "--algorithm: '%s' is not one of dissemination, "
						   "binomial, recursive-doubling, ring, bruck", v);
		} else if (cli_is(c, "--bytes")) {
			a->cfg.bytes = cli_u64(c, 0, 1ull << 40);
		} else if (cli_is(c, "--noise")) {
			a->noise_spec = cli_value(c);
			if (nt_sim_parse_noise_spec(a->noise_spec, &a->nspec, err, sizeof err))
				cli_usage_error(c, "--noise %s", err);
		} else if (cli_is(c, "--signature")) {
			free(a->sig_list);
			a->sig_list = strdup(cli_value(c));
			if (!a->sig_list) {
				*status = NT_EXIT_FAIL;
				return false;
			}
		} else if (cli_is(c, "--sync-unsync")) {
			cli_flag(c);
			if (a->have_sync && !a->both)
				cli_usage_error(c, "--sync-unsync excludes --sync and --unsync");
			a->have_sync = a->both = true;
		} else if (cli_is(c, "--sync") || cli_is(c, "--unsync")) {
			cli_flag(c);
			if (a->both)
				cli_usage_error(c, "--sync-unsync excludes --sync and --unsync");
			if (a->have_sync && a->sync != cli_is(c, "--sync"))
				cli_usage_error(c, "--sync and --unsync exclude each other");
			a->sync = cli_is(c, "--sync");
			a->have_sync = true;
		} else if (cli_is(c, "--seed")) {
			a->seed = cli_u64(c, 0, UINT64_MAX);
		} else if (cli_is(c, "--threads")) {
			a->cfg.threads = (unsigned)cli_u64(c, 1, NT_SIM_MAX_THREADS);
		} else if (cli_is(c, "--iterations")) {
			a->cfg.iterations = cli_u64(c, 1, 1000000000);
		} else if (cli_is(c, "--compute-us")) {
			a->cfg.compute_ns = (uint64_t)llround(cli_double(c, 0, 3.6e9) * 1000.0);
		} else if (cli_is(c, "--loggp")) {
			if (nt_sim_parse_loggp(cli_value(c), &a->cfg.loggp, err, sizeof err))
				cli_usage_error(c, "--loggp %s", err);
			a->have_loggp = true;
		} else if (cli_is(c, "--loggp-file")) {
			a->loggp_file = cli_value(c);
		} else if (cli_is(c, "--json")) {
			a->json_path = cli_value(c);
		} else if (cli_is(c, "--html")) {
			a->html_path = cli_value(c);
		} else {
			cli_unknown(c);
		}
	}
	return true;
}

/* The options read checked together: what is missing, what conflicts, the mode, the LogGP
 * values resolved (--loggp, else --loggp-file, the default file or the built-in values), every
 * rank count against the configuration, the signature files listed. A usage error ends the
 * process; a LogGP file that cannot be used is one line on stderr and its exit status, else
 * NT_EXIT_OK. */
static int check_args(const char *cmd, const struct cli *c, struct sim_args *a)
{
	char err[512];
	if (a->nranks <= 0)
		cli_usage_error(c, "missing --ranks");
	if (!a->have_coll)
		cli_usage_error(c, "missing --collective");
	if (!a->noise_spec == !a->sig_list)
		cli_usage_error(c, "give one of --noise and --signature");
	if (a->have_loggp && a->loggp_file)
		cli_usage_error(c, "--loggp and --loggp-file exclude each other");
	if (a->nspec.mode != NT_SIM_MODE_UNSET) {
		bool spec_sync = a->nspec.mode == NT_SIM_MODE_SYNC;
		if (a->have_sync && (a->both || a->sync != spec_sync))
			cli_usage_error(c, "--noise mode=%s conflicts with --%s",
					spec_sync ? "sync" : "unsync",
					a->both ? "sync-unsync" : a->sync ? "sync" : "unsync");
		a->have_sync = true;
		a->sync = spec_sync;
	}
	if (!a->have_sync)
		cli_usage_error(c, "give one of --sync, --unsync and --sync-unsync (or mode= in "
				   "--noise)");
	if (!a->have_loggp) {
		struct nt_loggp_calib cal;
		enum nt_loggp_origin origin;
		char path[NT_PATH_MAX];
		int rc = nt_loggp_resolve(a->loggp_file, &cal, &origin, path, sizeof path, err,
					  sizeof err);
		if (rc) {
			fprintf(stderr, "%s: LogGP file '%s': %s\n", cmd, path, err);
			return rc == -EINVAL ? NT_EXIT_USAGE : NT_EXIT_FAIL;
		}
		a->cfg.loggp = cal.loggp;
	}
	if (on_stdout(a->json_path) && on_stdout(a->html_path))
		cli_usage_error(c, "--json and --html cannot both go to stdout");
	for (int i = 0; i < a->nranks; i++)
		if (nt_sim_check(&a->cfg, a->ranks[i], err, sizeof err))
			cli_usage_error(c, "%s", err);
	if (a->sig_list) {
		a->nsigs = split_list(a->sig_list, a->sigs, MAX_SIGNATURES);
		if (a->nsigs == 0)
			cli_usage_error(c, "--signature needs a file name");
	}
	return NT_EXIT_OK;
}

/* The outputs checked before anything is read or simulated; a signature file is an input they
 * must not replace. NT_EXIT_OK, or one line on stderr and NT_EXIT_FAIL. */
static int check_outputs(const char *cmd, const struct sim_args *a)
{
	char err[512];
	size_t n = a->nsigs;
	if (a->json_path && nt_outfile_check(a->json_path, a->sigs, n, err, sizeof err) != 0) {
		fprintf(stderr, "%s: %s\n", cmd, err);
		return NT_EXIT_FAIL;
	}
	if (a->json_path && a->html_path && nt_outfile_collide(a->json_path, a->html_path)) {
		fprintf(stderr, "%s: --json and --html name the same file '%s'\n", cmd,
			a->html_path);
		return NT_EXIT_FAIL;
	}
	if (a->html_path && nt_outfile_check(a->html_path, a->sigs, n, err, sizeof err) != 0) {
		fprintf(stderr, "%s: --html: %s\n", cmd, err);
		return NT_EXIT_FAIL;
	}
	return NT_EXIT_OK;
}

/* The noise the ranks follow into *noise (nt_sim_noise_free it whatever the status): --noise's
 * comb (its frequency and detour into rep; a detour not shorter than the period is a usage
 * error), or the signature files' models. NT_EXIT_OK, or one line on stderr and NT_EXIT_USAGE
 * (a malformed file) or NT_EXIT_FAIL. */
static int make_noise(const char *cmd, const struct cli *c, const struct sim_args *a,
		      struct nt_sim_report *rep, struct nt_sim_noise **noise)
{
	char err[512];
	if (nt_sim_noise_new(noise)) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return NT_EXIT_FAIL;
	}
	if (a->noise_spec) {
		if (a->nspec.deprecated)
			fprintf(stderr, "%s: note: --noise freq=F,period=D is deprecated (period= is "
					"the injector's interval): write freq=F,length=D or "
					"period=1/F,detour=D\n", cmd);
		rep->freq_hz = a->nspec.freq_hz;
		rep->detour_ns = a->nspec.detour_ns;
		uint64_t period = a->nspec.period_ns;
		int m = nt_sim_noise_add_model(*noise);
		/* Synchronized: the run starts just as every rank's detour ends. */
		if (m < 0 || nt_sim_noise_add_comb(*noise, m, rep->freq_hz, rep->detour_ns,
						   period - rep->detour_ns) != 0)
			cli_usage_error(c, "--noise '%s': the detour must be shorter than the "
					   "period", a->noise_spec);
		return NT_EXIT_OK;
	}
	for (size_t i = 0; i < a->nsigs; i++) {
		int rc = nt_sim_noise_load(*noise, a->sigs[i], err, sizeof err);
		if (rc == -EINVAL) {
			fprintf(stderr, "%s: %s: %s\n", cmd, a->sigs[i], err);
			return NT_EXIT_USAGE;
		} else if (rc < 0) {
			fprintf(stderr, "%s: cannot read '%s': %s\n", cmd, a->sigs[i],
				strerror(-rc));
			return NT_EXIT_FAIL;
		}
	}
	return NT_EXIT_OK;
}

/* Simulate every rank count in each of nmodes modes into reps[m] (their results in res, nmodes
 * x a->nranks of them), with a progress line on a terminal after 3 s. NT_EXIT_OK, or one line
 * on stderr and NT_EXIT_FAIL. */
static int run_modes(const char *cmd, struct sim_args *a, struct nt_sim_noise *noise,
		     struct nt_sim_report *reps, size_t nmodes, struct nt_sim_result *res)
{
	struct progress_state ps = { .t0_ns = nt_clock_monotonic_ns() };
	progress_init(&ps.p, cmd, 1e9, 0); /* enabled on a terminal; shown after 3 s */
	if (ps.p.enabled) {
		a->cfg.progress = on_progress;
		a->cfg.progress_ctx = &ps;
	}
	size_t nranks = (size_t)a->nranks;
	for (size_t m = 0; m < nmodes; m++) {
		nt_sim_noise_set_sync(noise, reps[m].sync, a->seed);
		reps[m].results = res + m * nranks;
		reps[m].nresults = nranks;
		for (size_t i = 0; i < nranks; i++) {
			ps.ranks = a->ranks[i];
			int rc = nt_sim_run(&a->cfg, a->ranks[i], &res[m * nranks + i]);
			if (rc) {
				progress_done(&ps.p);
				fprintf(stderr, "%s: %llu ranks: %s\n", cmd,
					(unsigned long long)a->ranks[i],
					rc == -ENOMEM ? (nt_sim_noise_stateful(noise)
								 ? "out of memory (56 bytes per rank)"
								 : "out of memory (24 bytes per rank)")
						      : strerror(-rc));
				return NT_EXIT_FAIL;
			}
		}
	}
	if (ps.p.enabled && nt_clock_monotonic_ns() - ps.t0_ns >= 3000000000u)
		progress_done(&ps.p);
	return NT_EXIT_OK;
}

/* The results written: the table on stdout (unless --json or --html goes there), then the JSON
 * (json: opened; committed or given up here) and the page (html: opened). NT_EXIT_OK, or one
 * line on stderr for each output that failed and NT_EXIT_FAIL. */
static int write_results(const char *cmd, const struct sim_args *a, struct sim_doc *doc,
			 struct nt_outfile *json, struct html_out *html)
{
	int status = NT_EXIT_OK;
	if (!on_stdout(a->json_path) && !on_stdout(a->html_path)) {
		for (size_t m = 0; m < doc->nreps; m++) {
			if ((m && fputc('\n', stdout) == EOF) ||
			    nt_sim_write_text(stdout, &doc->reps[m]) != 0 || fflush(stdout) != 0) {
				fprintf(stderr, "%s: writing the table failed\n", cmd);
				status = NT_EXIT_FAIL;
			}
		}
	}
	if (a->json_path) {
		if (write_doc(json->f, doc) != 0) {
			fprintf(stderr, "%s: writing '%s' failed\n", cmd, a->json_path);
			nt_outfile_abort(json);
			status = NT_EXIT_FAIL;
		} else if (nt_outfile_commit(json) != 0) {
			fprintf(stderr, "%s: %s\n", cmd, json->why);
			status = NT_EXIT_FAIL;
		}
	}
	if (a->html_path && html_write(html, cmd, write_doc, doc) != NT_EXIT_OK)
		status = NT_EXIT_FAIL;
	return status;
}

int cmd_simulate(int argc, char **argv)
{
	const char *cmd = "noisetool simulate";
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--calibrate"))
			return calibrate_main(cmd, argc, argv);

	struct sim_args a;
	struct cli c;
	int status;
	if (!read_options(cmd, &c, argc, argv, &a, &status) ||
	    (status = check_args(cmd, &c, &a)) != NT_EXIT_OK ||
	    (status = check_outputs(cmd, &a)) != NT_EXIT_OK) {
		free(a.sig_list);
		return status;
	}
	struct nt_sim_report rep = { .cfg = &a.cfg, .sync = a.sync, .seed = a.seed };
	if (a.sig_list) {
		rep.signatures = a.sigs;
		rep.nsignatures = a.nsigs;
	}
	struct nt_sim_noise *noise = NULL;
	struct html_out html = { 0 };
	struct nt_outfile json;
	bool json_open = false;
	struct nt_sim_result *res = NULL;
	status = make_noise(cmd, &c, &a, &rep, &noise);
	if (status != NT_EXIT_OK)
		goto out;
	a.cfg.noise = noise;

	/* The page before anything is simulated: its output and a Python that can draw. */
	if (a.html_path && html_open(&html, cmd, "simulate", a.html_path, a.sigs, a.nsigs) !=
				   NT_EXIT_OK) {
		status = NT_EXIT_FAIL;
		goto out;
	}
	if (a.json_path) {
		if (nt_outfile_open(&json, a.json_path, false) != 0) {
			fprintf(stderr, "%s: %s\n", cmd, json.why);
			status = NT_EXIT_FAIL;
			goto out;
		}
		json_open = true;
	}
	size_t nmodes = a.both ? 2 : 1;
	struct nt_sim_report reps[2] = { rep, rep };
	reps[0].sync = a.both ? true : a.sync;
	reps[1].sync = false;
	res = calloc(nmodes * (size_t)a.nranks, sizeof *res);
	if (!res) {
		status = NT_EXIT_FAIL;
		goto out;
	}
	status = run_modes(cmd, &a, noise, reps, nmodes, res);
	if (status != NT_EXIT_OK)
		goto out;
	struct sim_doc doc = { reps, nmodes };
	status = write_results(cmd, &a, &doc, &json, &html);
	json_open = false; /* committed or given up */
out:
	free(res);
	if (json_open)
		nt_outfile_abort(&json);
	html_abort(&html);
	nt_sim_noise_free(noise);
	free(a.sig_list);
	return status;
}
