/* noisetool hosts: which hosts make jobs late, across many jobs' logs (noisetool/hosts.h). */
#include "nt-config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <noisetool/hosts.h>
#include <noisetool/ntlog.h>
#include <noisetool/outfile.h>
#include <noisetool/report.h>
#include <noisetool-private/live-file.h>

#include "cli.h"
#include "commands.h"
#include "html.h"

static const char usage[] =
	"Usage: noisetool hosts LOG|DIR... [--json FILE] [--html FILE] [--top N]\n"
	"\n"
	"Which hosts make jobs late: over many jobs' logs (.ntlog files, and the .live directories\n"
	"of jobs that ended without a log), each DIR searched with its subdirectories (a site's\n"
	"DIR/YYYY/MM/DD/...), for each host the delay its ranks imposed on the jobs they were in by\n"
	"arriving last at collectives (as each job report's culprits by node), by cause; its share\n"
	"of all hosts' delay, that delay per hour of its ranks' wall time, what its ranks held up\n"
	"inside calls, the jobs it was in and hurt, and the jobs it hurt most; hosts with most delay\n"
	"first. A log that cannot be read is listed and left out.\n"
	"\n"
	"  --json FILE   also write the view as JSON (schema noisetool-hosts/1, doc/hosts.md);\n"
	"                - = stdout (then no text)\n"
	"  --html FILE   also draw the view as a page (Python with matplotlib, checked before\n"
	"                any log is read: doc/html.md)\n"
	"  --top N       print the N hosts with most delay (default 20, 0 = all; the JSON has all)\n"
	"  -h, --help    this text\n"
	"\n"
	"Exit status: 0; 1 when no log could be read, or the JSON could not be written; 2 on bad\n"
	"arguments.\n";

struct found {
	char **paths;
	size_t n, cap;
	int err; /* the first failure to walk, -errno */
};

static struct found *walking; /* nftw has no context argument */

static int add_path(struct found *f, const char *path)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		char **p = realloc(f->paths, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		f->paths = p;
		f->cap = cap;
	}
	if (!(f->paths[f->n] = strdup(path)))
		return -ENOMEM;
	f->n++;
	return 0;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), e = strlen(end);
	return n >= e && !strcmp(s + n - e, end);
}

/* A .live directory whose job also left its .ntlog is that log's: only the log counts. */
static bool log_beside(const char *live)
{
	char log[4096 + 16];
	struct stat st;
	snprintf(log, sizeof log, "%.*s.ntlog", (int)(strlen(live) - 5), live);
	return stat(log, &st) == 0;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode) && ends_with(path, ".ntlog")) {
		if (add_path(walking, path) != 0)
			return walking->err = -ENOMEM, FTW_STOP;
	} else if (type == FTW_D && ends_with(path, ".live")) {
		if (!log_beside(path) && add_path(walking, path) != 0)
			return walking->err = -ENOMEM, FTW_STOP;
		return FTW_SKIP_SUBTREE;
	}
	return FTW_CONTINUE;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_job(const char *path, struct nt_log *log, char *err, size_t errsz)
{
	struct stat st;
	if (ends_with(path, ".live") && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return nt_live_read_job(path, log, err, errsz);
	return nt_log_read_file(path, log, err, errsz);
}

/* The page's document (html_write's write_json). */
static int write_view(FILE *f, void *h)
{
	return nt_hosts_write_json(f, h);
}

int cmd_hosts(int argc, char **argv)
{
	const char *cmd = "noisetool hosts";
	const char *json_path = NULL, *html_path = NULL;
	size_t top = 20;
	struct found f = { 0 };
	char **inputs = calloc(argc > 0 ? (size_t)argc : 1, sizeof *inputs);
	size_t ninputs = 0;
	if (!inputs) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return NT_EXIT_FAIL;
	}
	/* The logs and directories may come anywhere; every other argument is an option. */
	static const char *const valued[] = { "--json", "--html", "--top", NULL };
	ninputs = cli_take_args(&argc, argv, valued, false, inputs);
	struct cli c;
	cli_init(&c, cmd, argc, argv);
	while (cli_next(&c)) {
		if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
			fputs(usage, stdout);
			free(inputs);
			return NT_EXIT_OK;
		} else if (cli_is(&c, "--json")) {
			json_path = cli_value(&c);
		} else if (cli_is(&c, "--html")) {
			html_path = cli_value(&c);
		} else if (cli_is(&c, "--top")) {
			top = (size_t)cli_u64(&c, 0, 1000000);
		} else {
			cli_unknown(&c);
		}
	}
	if (ninputs == 0)
		cli_usage_error(&c, "no log or directory given");

	/* The output is checked before any log is read: never one of the inputs. */
	char why[NT_OUTFILE_WHY_MAX];
	if (json_path && nt_outfile_check(json_path, (const char *const *)inputs, ninputs, why,
					  sizeof why) != 0) {
		fprintf(stderr, "%s: --json: %s\n", cmd, why);
		free(inputs);
		return NT_EXIT_FAIL;
	}
	struct html_out page = { 0 };
	if (html_path && html_open(&page, cmd, "hosts", html_path, (const char *const *)inputs,
				   ninputs) != NT_EXIT_OK) {
		free(inputs);
		return NT_EXIT_FAIL;
	}
	walking = &f;
	for (size_t i = 0; i < ninputs && !f.err; i++) {
		struct stat st;
		if (stat(inputs[i], &st) != 0) {
			fprintf(stderr, "%s: %s: %s\n", cmd, inputs[i], strerror(errno));
			free(inputs);
			return NT_EXIT_FAIL;
		}
		if (S_ISDIR(st.st_mode) && !ends_with(inputs[i], ".live")) {
			size_t before = f.n;
			if (nftw(inputs[i], visit, 32, FTW_PHYS | FTW_ACTIONRETVAL) != 0 && !f.err)
				f.err = -errno;
			qsort(f.paths + before, f.n - before, sizeof *f.paths, by_name);
		} else if (add_path(&f, inputs[i]) != 0) {
			f.err = -ENOMEM;
		}
	}
	free(inputs);
	struct nt_hosts *h = f.err ? NULL : nt_hosts_new();
	int status = NT_EXIT_OK;
	if (!h) {
		fprintf(stderr, "%s: %s\n", cmd, strerror(f.err ? -f.err : ENOMEM));
		status = NT_EXIT_FAIL;
		goto out;
	}
	size_t read = 0;
	for (size_t i = 0; i < f.n; i++) {
		struct nt_log log;
		struct nt_report rep;
		char err[512];
		int rc = read_job(f.paths[i], &log, err, sizeof err);
		if (rc != 0) {
			nt_hosts_add_unreadable(h, f.paths[i], err[0] ? err : strerror(-rc));
			continue;
		}
		rc = nt_report_build(&log, NULL, NULL, &rep);
		if (rc == 0) {
			rc = nt_hosts_add(h, &rep, f.paths[i]);
			nt_report_free(&rep);
		}
		nt_log_free(&log);
		if (rc != 0) {
			fprintf(stderr, "%s: %s: %s\n", cmd, f.paths[i], strerror(-rc));
			status = NT_EXIT_FAIL;
			goto out;
		}
		read++;
	}
	if (read == 0) {
		fprintf(stderr, "%s: no log could be read (%zu found)\n", cmd, f.n);
		for (size_t i = 0; i < f.n; i++) {
			struct nt_log log;
			char err[512];
			if (read_job(f.paths[i], &log, err, sizeof err) == 0)
				nt_log_free(&log);
			else
				fprintf(stderr, "  %s: %s\n", f.paths[i], err);
		}
		status = NT_EXIT_FAIL;
		goto out;
	}
	if (!json_path || strcmp(json_path, "-") != 0)
		nt_hosts_write_text(stdout, h, top);
	if (json_path) {
		struct nt_outfile of;
		int rc = nt_outfile_open(&of, json_path, false);
		if (rc == 0 && (rc = nt_hosts_write_json(of.f, h)) == 0)
			rc = nt_outfile_commit(&of);
		if (rc != 0) {
			fprintf(stderr, "%s: %s\n", cmd,
				of.why[0] ? of.why : strerror(-rc));
			nt_outfile_abort(&of);
			status = NT_EXIT_FAIL;
		}
	}
	if (html_path && status == NT_EXIT_OK) {
		if (html_write(&page, cmd, write_view, h) != NT_EXIT_OK)
			status = NT_EXIT_FAIL;
	}
out:
	if (html_path)
		html_abort(&page);
	nt_hosts_free(h);
	for (size_t i = 0; i < f.n; i++)
		free(f.paths[i]);
	free(f.paths);
	return status;
}
