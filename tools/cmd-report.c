/* `noisetool report LOG`: the job report from a .ntlog file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <noisetool/live.h>
#include <noisetool/ntlog.h>
#include <noisetool/outfile.h>
#include <noisetool/report.h>

#include "cli.h"
#include "commands.h"
#include "modcheck.h"
#include "symbolize.h"

static const char usage[] =
	"Usage: noisetool report LOG [--json FILE] [--top N] [--late N] [--no-symbols]\n"
	"\n"
	"Print the report of a job log (.ntlog) written by the MPI wrapper library, or of a job\n"
	"that ended without one (killed, crashed, stopped at a time limit): LOG is then its\n"
	"NAME.live directory of per-rank live files, or the NAME.ntlog it did not write. Per rank the\n"
	"wall and MPI time, and the call sites merged across ranks, by MPI time, with their\n"
	"spread across ranks; then the late arrivals: which ranks made collectives late and why\n"
	"(preemption, blocked, page faults, extra work, injected noise, unexplained;\n"
	"doc/attribution.md). Call sites are named file.c:line when the program has debug\n"
	"information, else function or module+offset: one addr2line (binutils) per module,\n"
	"reading the module file named in the log (doc/noisetool.md, \"noisetool report\").\n"
	"\n"
	"  --json FILE     also write the report as JSON (doc/report-json.md); - = stdout only\n"
	"  --top N         print the N largest call sites (default 20, 0 = all)\n"
	"  --late N        print the N latest collective instances (default 10, 0 = none)\n"
	"  --no-symbols    do not run addr2line: every call site is named module+offset\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0 done, 1 the log is unreadable or corrupt (one line says why), 2 bad\n"
	"arguments.\n";

/* A job log, or the live files of a job that wrote none (noisetool/live.h): PATH as the
 * directory NAME.live, or NAME.ntlog when it does not exist and NAME.live does. */
static int read_job(const char *path, struct nt_log *log, char *err, size_t errsz)
{
	struct stat st;
	size_t n = strlen(path);
	if (n > 5 && strcmp(path + n - 5, ".live") == 0 && stat(path, &st) == 0 &&
	    S_ISDIR(st.st_mode))
		return nt_live_read_job(path, log, err, errsz);
	int rc = nt_log_read_file(path, log, err, errsz);
	if (rc == -ENOENT && n > 6 && strcmp(path + n - 6, ".ntlog") == 0) {
		char live[4096 + 16];
		snprintf(live, sizeof live, "%.*s.live", (int)(n - 6), path);
		if (stat(live, &st) == 0 && S_ISDIR(st.st_mode))
			return nt_live_read_job(live, log, err, errsz);
	}
	return rc;
}

int report_print(const char *cmd, const char *log_path, const char *json_path, size_t top,
		 size_t late, bool symbols)
{
	struct nt_outfile json;
	if (json_path) {
		int rc = nt_outfile_open(&json, json_path, false);
		if (rc) {
			fprintf(stderr, "%s: cannot write '%s': %s\n", cmd, json_path, strerror(-rc));
			return NT_EXIT_FAIL;
		}
	}
	struct nt_log log;
	char err[256];
	int rc = read_job(log_path, &log, err, sizeof err);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", cmd, log_path, err);
		if (json_path)
			nt_outfile_abort(&json);
		return NT_EXIT_FAIL;
	}
	if (symbols)
		modcheck_warn(stderr, cmd, &log);
	/* One addr2line per module for the whole report, all reaped before anything is written;
	 * without a symbolizer (out of memory) the sites are named module+offset. */
	struct symbolizer *sym = NULL;
	if (symbols && symbolizer_open(&sym, &(struct symbolizer_config){ .who = cmd }) != 0)
		fprintf(stderr, "%s: out of memory for symbols; call sites are named module+offset\n",
			cmd);
	struct nt_report rep;
	rc = nt_report_build(&log, sym ? symbolize_addr2line : NULL, sym, &rep);
	symbolizer_close(sym);
	int status = NT_EXIT_OK;
	if (rc) {
		fprintf(stderr, "%s: %s\n", cmd, strerror(-rc));
		status = NT_EXIT_FAIL;
	} else {
		if (!json_path || strcmp(json_path, "-") != 0) {
			nt_report_write_text(stdout, &rep, log_path, top);
			nt_report_write_late(stdout, &rep, late);
		}
		if (json_path && (nt_report_write_json(json.f, &rep) != 0 ||
				  nt_outfile_commit(&json) != 0)) {
			fprintf(stderr, "%s: writing '%s' failed\n", cmd, json_path);
			nt_outfile_abort(&json);
			status = NT_EXIT_FAIL;
		}
		json_path = NULL;
	}
	if (json_path)
		nt_outfile_abort(&json);
	nt_report_free(&rep);
	nt_log_free(&log);
	return status;
}

int cmd_report(int argc, char **argv)
{
	const char *cmd = "noisetool report";
	const char *log_path = NULL, *json_path = NULL;
	size_t top = 20, late = 10;
	bool symbols = true;
	struct cli c;
	/* The log path may come anywhere; every other argument is an option. */
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] != '-' || !strcmp(argv[i], "-")) {
			if (log_path) {
				cli_init(&c, cmd, argc, argv);
				cli_usage_error(&c, "more than one log given ('%s')", argv[i]);
			}
			log_path = argv[i];
			for (int k = i; k + 1 < argc; k++)
				argv[k] = argv[k + 1];
			argc--;
			i--;
		} else if (argv[i][1] == '-' && strchr(argv[i], '=') == NULL &&
			   (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--top") ||
			    !strcmp(argv[i], "--late")) && i + 1 < argc) {
			i++; /* skip the option's value */
		}
	}
	cli_init(&c, cmd, argc, argv);
	while (cli_next(&c)) {
		if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
			fputs(usage, stdout);
			return NT_EXIT_OK;
		} else if (cli_is(&c, "--json")) {
			json_path = cli_value(&c);
		} else if (cli_is(&c, "--top")) {
			top = (size_t)cli_u64(&c, 0, 1000000);
		} else if (cli_is(&c, "--late")) {
			late = (size_t)cli_u64(&c, 0, 1000000);
		} else if (cli_is(&c, "--no-symbols")) {
			cli_flag(&c);
			symbols = false;
		} else {
			cli_unknown(&c);
		}
	}
	if (!log_path)
		cli_usage_error(&c, "no log given");

	return report_print(cmd, log_path, json_path, top, late, symbols);
}
