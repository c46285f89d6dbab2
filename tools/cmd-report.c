/* `noisetool report LOG...`: the job report of one or more .ntlog files (or of the live files
 * of a job that wrote none). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
	"Usage: noisetool report LOG... [--json FILE] [--top N] [--late N] [--no-symbols]\n"
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
	"Several logs (logs/prog-*.ntlog) are reported one after the other, in the order given,\n"
	"each under a heading line '=== log K of N: LOG ==='; a log that cannot be read is one\n"
	"line on stderr (and 'not reported: WHY' under its heading), the others are still\n"
	"reported, and the exit status is 1.\n"
	"\n"
	"  --json FILE     also write the report as JSON (doc/report-json.md); - = stdout only.\n"
	"                  With several logs: a JSON array of their reports in the order given,\n"
	"                  each with \"log\": its path; written only when every log was read\n"
	"                  (else no FILE, and nothing on stdout with -)\n"
	"  --top N         print the N largest call sites (default 20, 0 = all)\n"
	"  --late N        print the N latest collective instances (default 10, 0 = none)\n"
	"  --no-symbols    do not run addr2line: every call site is named module+offset\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0 done, 1 a log is unreadable or corrupt (one line says why) or an output\n"
	"failed, 2 bad arguments.\n";

struct report_opts {
	const char *cmd;
	const char *json_path; /* NULL: no JSON; "-": JSON on stdout, no text */
	size_t top, late;
	bool symbols;
};

/* Whether path names the same file as the JSON output (an input is never an output). */
static bool is_json_output(const char *path, const char *json_path)
{
	if (!json_path || !strcmp(json_path, "-"))
		return false;
	if (!strcmp(path, json_path))
		return true;
	struct stat a, b;
	return stat(path, &a) == 0 && stat(json_path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

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

/* Report logs[0..nlogs) in turn: text on stdout (unless JSON goes there), JSON to
 * o->json_path, all or nothing. Returns the exit status. */
static int report_logs(const struct report_opts *o, char *const *logs, size_t nlogs)
{
	const char *cmd = o->cmd;
	bool text = !o->json_path || strcmp(o->json_path, "-") != 0;
	bool several = nlogs > 1;
	for (size_t i = 0; i < nlogs; i++) {
		if (is_json_output(logs[i], o->json_path)) {
			fprintf(stderr, "%s: '%s' is both a log to read and the JSON output\n", cmd,
				logs[i]);
			return NT_EXIT_USAGE;
		}
	}
	/* The output is checked before any work: a temporary file beside FILE, renamed over it
	 * at the end (outfile.h). Several reports on stdout wait in an anonymous file until every
	 * log was read, so that a bad last log leaves no half array there. */
	struct nt_outfile json;
	FILE *jf = NULL;
	if (o->json_path) {
		int rc = nt_outfile_open(&json, o->json_path, false);
		if (rc) {
			fprintf(stderr, "%s: cannot write '%s': %s\n", cmd, o->json_path, strerror(-rc));
			return NT_EXIT_FAIL;
		}
		jf = several && json.is_stdout ? tmpfile() : json.f;
		if (!jf) {
			fprintf(stderr, "%s: cannot buffer the JSON: %s\n", cmd, strerror(errno));
			nt_outfile_abort(&json);
			return NT_EXIT_FAIL;
		}
	}
	/* One symbolizer for every log: each module's addr2line and its answers serve all the
	 * logs of one program. Without it (out of memory) sites are named module+offset. */
	struct symbolizer *sym = NULL;
	if (o->symbols && symbolizer_open(&sym, &(struct symbolizer_config){ .who = cmd }) != 0)
		fprintf(stderr, "%s: out of memory for symbols; call sites are named module+offset\n",
			cmd);
	size_t failed = 0, written = 0;
	bool json_failed = false;
	for (size_t i = 0; i < nlogs; i++) {
		if (text && several) {
			printf("%s=== log %zu of %zu: %s ===\n", i ? "\n" : "", i + 1, nlogs, logs[i]);
			fflush(stdout); /* before this log's error line, if any, on a terminal */
		}
		struct nt_log log;
		char err[256];
		int rc = read_job(logs[i], &log, err, sizeof err);
		if (rc) {
			fprintf(stderr, "%s: %s: %s\n", cmd, logs[i], err);
			if (text && several) /* in place too, for a report read from a file */
				printf("not reported: %s\n", err);
			failed++;
			continue;
		}
		if (o->symbols)
			modcheck_warn(stderr, cmd, &log);
		struct nt_report rep;
		rc = nt_report_build(&log, sym ? symbolize_addr2line : NULL, sym, &rep);
		if (rc) {
			fprintf(stderr, "%s: %s: %s\n", cmd, logs[i], strerror(-rc));
			if (text && several)
				printf("not reported: %s\n", strerror(-rc));
			nt_log_free(&log);
			failed++;
			continue;
		}
		if (text) {
			nt_report_write_text(stdout, &rep, logs[i], o->top);
			nt_report_write_late(stdout, &rep, o->late);
		}
		if (jf && !failed && !json_failed) {
			rc = several ? nt_report_write_json_item(jf, &rep, logs[i], written == 0)
				     : nt_report_write_json(jf, &rep);
			json_failed = rc != 0;
			written++;
		}
		nt_report_free(&rep);
		nt_log_free(&log);
	}
	symbolizer_close(sym);
	if (jf && !failed && !json_failed && several)
		json_failed = nt_report_write_json_array_end(jf) != 0;
	if (jf && !failed && !json_failed && jf != json.f) { /* the buffered array to stdout */
		rewind(jf);
		char buf[65536];
		size_t n;
		while ((n = fread(buf, 1, sizeof buf, jf)) > 0)
			if (fwrite(buf, 1, n, json.f) != n)
				break;
		json_failed = ferror(jf) || ferror(json.f);
	}
	if (jf && jf != json.f)
		fclose(jf);
	int status = failed ? NT_EXIT_FAIL : NT_EXIT_OK;
	if (o->json_path) {
		if (!failed && !json_failed && nt_outfile_commit(&json) == 0)
			return status;
		if (!failed)
			fprintf(stderr, "%s: writing '%s' failed\n", cmd, o->json_path);
		else if (several)
			fprintf(stderr, "%s: %zu of %zu logs could not be read: %s%s%s not written\n",
				cmd, failed, nlogs, json.is_stdout ? "their JSON" : "'",
				json.is_stdout ? "" : o->json_path, json.is_stdout ? "" : "'");
		nt_outfile_abort(&json);
		status = NT_EXIT_FAIL;
	}
	return status;
}

int report_print(const char *cmd, const char *log_path, const char *json_path, size_t top,
		 size_t late, bool symbols)
{
	struct report_opts o = { cmd, json_path, top, late, symbols };
	char *logs[] = { (char *)log_path };
	return report_logs(&o, logs, 1);
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { .cmd = "noisetool report", .top = 20, .late = 10,
				 .symbols = true };
	char **logs = calloc(argc > 0 ? (size_t)argc : 1, sizeof *logs);
	size_t nlogs = 0;
	if (!logs) {
		fprintf(stderr, "%s: out of memory\n", o.cmd);
		return NT_EXIT_FAIL;
	}
	struct cli c;
	/* The logs may come anywhere; every other argument is an option. */
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] != '-' || !strcmp(argv[i], "-")) {
			logs[nlogs++] = argv[i];
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
	cli_init(&c, o.cmd, argc, argv);
	while (cli_next(&c)) {
		if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
			fputs(usage, stdout);
			free(logs);
			return NT_EXIT_OK;
		} else if (cli_is(&c, "--json")) {
			o.json_path = cli_value(&c);
		} else if (cli_is(&c, "--top")) {
			o.top = (size_t)cli_u64(&c, 0, 1000000);
		} else if (cli_is(&c, "--late")) {
			o.late = (size_t)cli_u64(&c, 0, 1000000);
		} else if (cli_is(&c, "--no-symbols")) {
			cli_flag(&c);
			o.symbols = false;
		} else {
			cli_unknown(&c);
		}
	}
	if (!nlogs)
		cli_usage_error(&c, "no log given");
	int status = report_logs(&o, logs, nlogs);
	free(logs);
	return status;
}
