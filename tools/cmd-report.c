/* `noisetool report LOG...`: the job report of one or more .ntlog files (or of the live files
 * of a job that wrote none). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <noisetool/compare.h>
#include <noisetool/ntlog.h>
#include <noisetool/outfile.h>
#include <noisetool/perfetto.h>
#include <noisetool/report-csv.h>
#include <noisetool/report.h>
#include <noisetool-private/live-file.h>
#include <noisetool-private/report-page.h>

#include "cli.h"
#include "commands.h"
#include "html.h"
#include "modcheck.h"
#include "symbolize.h"

static const char usage[] =
	"Usage: noisetool report LOG [--json FILE] [--html FILE] [--perfetto FILE] [--csv DIR]\n"
	"                        [--top N] [--late N] [--no-symbols] [--debug-dir DIR]\n"
	"       noisetool report A B [--json FILE] [--html FILE] [--csv DIR] ...\n"
	"       noisetool report LOG... --each [--json FILE] ...\n"
	"\n"
	"Print the report of a job log (.ntlog) written by the MPI wrapper library, or of a job\n"
	"that ended without one (killed, crashed, stopped at a time limit): LOG is then its\n"
	"NAME.live directory of per-rank live files, or the NAME.ntlog it did not write. Per rank the\n"
	"wall and MPI time, and the call sites merged across ranks, by MPI time, with their\n"
	"spread across ranks; then the late arrivals: which ranks made collectives late and why\n"
	"(preemption, blocked, page faults, extra work, injected noise, unexplained;\n"
	"doc/attribution.md). Call sites are named file.c:line when the program has debug\n"
	"information (its own, or a separate debug file), else function+0xoffset in the function\n"
	"that contains them, else module+0xoffset (in a stripped program the nearest exported\n"
	"symbol before a site is not taken for its function): one addr2line (binutils) per\n"
	"module, reading the module file named in the log (doc/noisetool.md, \"noisetool\n"
	"report\").\n"
	"\n"
	"Two logs A B (two runs of one program: before, after) are compared: per call site and per\n"
	"rank what changed (time, calls, spread, culprits), each change against the runs' own\n"
	"run-to-run spread, marked significant or within noise (doc/compare.md).\n"
	"\n"
	"With --each, or three logs or more (logs/prog-*.ntlog), each log is reported in turn,\n"
	"under a heading line '=== log K of N: LOG ==='; a log that cannot be read is one line on\n"
	"stderr (and 'not reported: WHY' under its heading), the others are still reported, and\n"
	"the exit status is 1.\n"
	"\n"
	"  --json FILE      also write the report (or the comparison) as JSON (doc/report-json.md);\n"
	"                   - = stdout only. Logs reported in turn: a JSON array of their reports\n"
	"                   in the order given, each with \"log\": its path; written only when\n"
	"                   every log was read (else no FILE, and nothing on stdout with -)\n"
	"  --html FILE      a self-contained HTML page with plots (doc/html.md; needs Python 3 and\n"
	"                   matplotlib: apt install python3-matplotlib)\n"
	"  --perfetto FILE  the job's timeline as Chrome trace-event JSON, for ui.perfetto.dev or\n"
	"                   chrome://tracing (doc/perfetto.md); one log only\n"
	"  --csv DIR        the site, rank, culprit and late-instance tables (or the comparison's)\n"
	"                   as CSV files with a header row in DIR, made if missing\n"
	"                   (doc/report-csv.md)\n"
	"  --each           report each log in turn, even two\n"
	"  --top N          print the N largest call sites (default 20, 0 = all)\n"
	"  --late N         print the N latest collective instances (default 10, 0 = none)\n"
	"  --no-symbols     do not run addr2line: every call site is named module+offset\n"
	"  --debug-dir DIR  also look for a module's debug file by its build ID in\n"
	"                   DIR/.build-id/xx/rest.debug (as /usr/lib/debug, where addr2line\n"
	"                   looks by itself: -dbgsym packages unpacked elsewhere)\n"
	"  -h, --help       this text\n"
	"\n"
	"Every output is checked before any log is read; a FILE is never one of the logs; '-' is\n"
	"stdout (then the text report is not printed), for one output at most. An output (also a\n"
	"file in --csv DIR) is written through a symlink only when the link is yours and leads to\n"
	"a file beside it; another user's link, or one out of its directory, is refused\n"
	"(doc/noisetool.md, \"Outputs\").\n"
	"\n"
	"Exit status: 0 done, 1 a log is unreadable or corrupt (one line says why) or an output\n"
	"failed, 2 bad arguments.\n";

struct report_opts {
	const char *cmd;
	const char *json_path;     /* NULL: no JSON; "-": JSON on stdout, no text */
	const char *html_path;     /* NULL: no page */
	const char *perfetto_path; /* NULL: no timeline */
	const char *csv_dir;       /* NULL: no CSV */
	const char *debug_dir;     /* --debug-dir: NULL, none beside addr2line's own */
	size_t top, late;
	bool symbols, each;
};

/* Whether path names the same file as an output (an input is never an output). */
static bool is_output(const char *path, const char *out_path)
{
	if (!out_path || !strcmp(out_path, "-"))
		return false;
	if (!strcmp(path, out_path))
		return true;
	struct stat a, b;
	return stat(path, &a) == 0 && stat(out_path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* A job log, or the live files of a job that wrote none (noisetool-private/live-file.h): PATH as the
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

/* The symbolizer for a report's logs, or NULL: --no-symbols, or out of memory (then sites are
 * named module+offset, and one line says so). */
static struct symbolizer *open_symbols(const struct report_opts *o)
{
	struct symbolizer *sym = NULL;
	if (o->symbols && symbolizer_open(&sym, &(struct symbolizer_config){
				      .who = o->cmd, .debug_dir = o->debug_dir }) != 0)
		fprintf(stderr, "%s: out of memory for symbols; call sites are named module+offset\n",
			o->cmd);
	return sym;
}

/* Report logs[0..nlogs) in turn: text on stdout (unless JSON goes there), JSON to
 * o->json_path, all or nothing. Returns the exit status. */
static int report_logs(const struct report_opts *o, char *const *logs, size_t nlogs)
{
	const char *cmd = o->cmd;
	bool text = !o->json_path || strcmp(o->json_path, "-") != 0;
	bool several = nlogs > 1;
	for (size_t i = 0; i < nlogs; i++) {
		if (is_output(logs[i], o->json_path)) {
			fprintf(stderr, "%s: '%s' is both a log to read and the JSON output\n", cmd,
				logs[i]);
			return NT_EXIT_FAIL;
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
	struct symbolizer *sym = open_symbols(o);
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

/* A log read and reported, for one report or one side of a comparison. */
struct job {
	const char *path;
	struct nt_log log;
	struct nt_report rep;
	bool read, built;
};

/* Read path and build its report (sym may be NULL). One line on stderr when it fails. */
static int job_open(struct job *j, const char *cmd, const char *path, struct symbolizer *sym,
		    bool symbols)
{
	memset(j, 0, sizeof *j);
	j->path = path;
	char err[256];
	int rc = read_job(path, &j->log, err, sizeof err);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", cmd, path, err);
		return rc;
	}
	j->read = true;
	if (symbols)
		modcheck_warn(stderr, cmd, &j->log);
	rc = nt_report_build(&j->log, sym ? symbolize_addr2line : NULL, sym, &j->rep);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", cmd, path, strerror(-rc));
		return rc;
	}
	j->built = true;
	return 0;
}

static void job_close(struct job *j)
{
	if (j->built)
		nt_report_free(&j->rep);
	if (j->read)
		nt_log_free(&j->log);
	j->built = j->read = false;
}

/* The file outputs of one report or comparison, checked and opened before any log is read:
 * none of them an input, no two the same file, at most one on stdout; with check_only, checked
 * and nothing opened (noisetool run, before its job). */
struct outputs {
	struct nt_outfile json, perfetto;
	struct html_out html;
	bool json_open, perfetto_open, html_open;
};

static int outputs_open(struct outputs *out, const struct report_opts *o, char *const *logs,
			size_t nlogs, const char *html_kind, bool check_only)
{
	const char *cmd = o->cmd;
	memset(out, 0, sizeof *out);
	const char *names[3] = { "--json", "--html", "--perfetto" };
	const char *paths[3] = { o->json_path, o->html_path, o->perfetto_path };
	int to_stdout = 0;
	for (int i = 0; i < 3; i++) {
		if (!paths[i])
			continue;
		to_stdout += !strcmp(paths[i], "-") || !strcmp(paths[i], "/dev/stdout");
		for (int k = 0; k < i; k++)
			if (paths[k] && nt_outfile_collide(paths[i], paths[k])) {
				fprintf(stderr, "%s: %s and %s name the same file '%s'\n", cmd,
					names[k], names[i], paths[i]);
				return NT_EXIT_USAGE;
			}
		char why[NT_OUTFILE_WHY_MAX];
		if (nt_outfile_check(paths[i], (const char *const *)logs, nlogs, why,
				     sizeof why) != 0) {
			fprintf(stderr, "%s: %s: %s\n", cmd, names[i], why);
			return NT_EXIT_FAIL;
		}
	}
	if (to_stdout > 1) {
		fprintf(stderr, "%s: only one output can go to stdout\n", cmd);
		return NT_EXIT_USAGE;
	}
	if (o->csv_dir) {
		char why[NT_OUTFILE_WHY_MAX];
		if (nt_outfile_mkdirs(o->csv_dir, why, sizeof why) != 0) {
			fprintf(stderr, "%s: --csv: %s\n", cmd, why);
			return NT_EXIT_FAIL;
		}
	}
	if (o->html_path && check_only)
		return html_check(&out->html, cmd, html_kind, o->html_path,
				  (const char *const *)logs, nlogs);
	if (check_only)
		return NT_EXIT_OK;
	if (o->html_path) {
		int st = html_open(&out->html, cmd, html_kind, o->html_path,
				   (const char *const *)logs, nlogs);
		if (st != NT_EXIT_OK)
			return st;
		out->html_open = true;
	}
	struct {
		const char *path, *name;
		struct nt_outfile *of;
		bool *open;
	} files[2] = { { o->json_path, "--json", &out->json, &out->json_open },
		       { o->perfetto_path, "--perfetto", &out->perfetto, &out->perfetto_open } };
	for (int i = 0; i < 2; i++) {
		if (!files[i].path)
			continue;
		if (nt_outfile_open(files[i].of, files[i].path, false) != 0) {
			fprintf(stderr, "%s: %s: %s\n", cmd, files[i].name, files[i].of->why);
			return NT_EXIT_FAIL;
		}
		*files[i].open = true;
	}
	return NT_EXIT_OK;
}

static void outputs_abort(struct outputs *out)
{
	if (out->json_open)
		nt_outfile_abort(&out->json);
	if (out->perfetto_open)
		nt_outfile_abort(&out->perfetto);
	if (out->html_open)
		html_abort(&out->html);
	out->json_open = out->perfetto_open = out->html_open = false;
}

/* Finish a file output written by write(): commit it, or say why not. */
static int output_finish(const char *cmd, const char *name, struct nt_outfile *of, bool *open,
			 int write_rc)
{
	*open = false;
	if (write_rc == 0 && nt_outfile_commit(of) == 0)
		return NT_EXIT_OK;
	if (write_rc)
		fprintf(stderr, "%s: %s: writing '%s' failed: %s\n", cmd, name, of->path,
			strerror(-write_rc));
	else
		fprintf(stderr, "%s: %s: %s\n", cmd, name, of->why);
	nt_outfile_abort(of);
	return NT_EXIT_FAIL;
}

static bool on_stdout(const char *path)
{
	return path && (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"));
}

static int write_page(FILE *f, void *ctx)
{
	const struct job *j = ctx;
	return nt_report_write_page_json(f, &j->rep, j->path);
}

/* One log: the text report unless an output goes to stdout, then each output asked for. */
static int report_one(const struct report_opts *o, char *log)
{
	const char *cmd = o->cmd;
	struct outputs out;
	int status = outputs_open(&out, o, &log, 1, "report", false);
	if (status != NT_EXIT_OK) {
		outputs_abort(&out);
		return status;
	}
	struct symbolizer *sym = open_symbols(o);
	struct job j;
	if (job_open(&j, cmd, log, sym, o->symbols) != 0) {
		job_close(&j);
		symbolizer_close(sym);
		outputs_abort(&out);
		return NT_EXIT_FAIL;
	}
	if (!on_stdout(o->json_path) && !on_stdout(o->html_path) && !on_stdout(o->perfetto_path)) {
		nt_report_write_text(stdout, &j.rep, log, o->top);
		nt_report_write_late(stdout, &j.rep, o->late);
		fflush(stdout);
	}
	if (out.json_open &&
	    output_finish(cmd, "--json", &out.json, &out.json_open,
			  nt_report_write_json(out.json.f, &j.rep)) != NT_EXIT_OK)
		status = NT_EXIT_FAIL;
	if (out.perfetto_open &&
	    output_finish(cmd, "--perfetto", &out.perfetto, &out.perfetto_open,
			  nt_perfetto_write(out.perfetto.f, &j.rep)) != NT_EXIT_OK)
		status = NT_EXIT_FAIL;
	if (o->csv_dir) {
		char why[NT_OUTFILE_WHY_MAX];
		if (nt_report_write_csv(&j.rep, o->csv_dir, why, sizeof why) != 0) {
			fprintf(stderr, "%s: --csv: %s\n", cmd, why);
			status = NT_EXIT_FAIL;
		}
	}
	if (out.html_open) {
		out.html_open = false;
		if (html_write(&out.html, cmd, write_page, &j) != NT_EXIT_OK)
			status = NT_EXIT_FAIL;
	}
	job_close(&j);
	symbolizer_close(sym);
	outputs_abort(&out);
	return status;
}

struct compared {
	const struct nt_compare *c;
	const char *a, *b;
};

static int write_compare(FILE *f, void *ctx)
{
	const struct compared *k = ctx;
	return nt_compare_write_json(f, k->c, k->a, k->b);
}

/* Two logs: B compared with A, as text unless an output goes to stdout, and as each output
 * asked for. */
static int compare_two(const struct report_opts *o, char **logs)
{
	const char *cmd = o->cmd;
	struct outputs out;
	int status = outputs_open(&out, o, logs, 2, "compare", false);
	if (status != NT_EXIT_OK) {
		outputs_abort(&out);
		return status;
	}
	struct symbolizer *sym = open_symbols(o);
	struct job a, b;
	struct nt_compare *c = NULL;
	int rc = job_open(&a, cmd, logs[0], sym, o->symbols);
	if (rc == 0)
		rc = job_open(&b, cmd, logs[1], sym, o->symbols);
	else
		memset(&b, 0, sizeof b);
	if (rc == 0) {
		rc = nt_compare_build(&a.rep, &b.rep, &c);
		if (rc)
			fprintf(stderr, "%s: comparing %s with %s: %s\n", cmd, logs[1], logs[0],
				strerror(-rc));
	}
	if (rc == 0) {
		if (!on_stdout(o->json_path) && !on_stdout(o->html_path))
			nt_compare_write_text(stdout, c, logs[0], logs[1], o->top);
		fflush(stdout);
		if (out.json_open &&
		    output_finish(cmd, "--json", &out.json, &out.json_open,
				  nt_compare_write_json(out.json.f, c, logs[0], logs[1])) !=
			    NT_EXIT_OK)
			status = NT_EXIT_FAIL;
		if (o->csv_dir) {
			char why[NT_OUTFILE_WHY_MAX];
			if (nt_compare_write_csv(c, o->csv_dir, why, sizeof why) != 0) {
				fprintf(stderr, "%s: --csv: %s\n", cmd, why);
				status = NT_EXIT_FAIL;
			}
		}
		if (out.html_open) {
			struct compared k = { c, logs[0], logs[1] };
			out.html_open = false;
			if (html_write(&out.html, cmd, write_compare, &k) != NT_EXIT_OK)
				status = NT_EXIT_FAIL;
		}
	} else {
		status = NT_EXIT_FAIL;
	}
	nt_compare_free(c);
	job_close(&b);
	job_close(&a);
	symbolizer_close(sym);
	outputs_abort(&out);
	return status;
}

int report_print(const char *cmd, const char *log_path, const struct report_outputs *outs,
		 size_t top, size_t late, bool symbols)
{
	struct report_opts o = { .cmd = cmd, .json_path = outs->json, .html_path = outs->html,
				 .perfetto_path = outs->perfetto, .csv_dir = outs->csv_dir,
				 .top = top, .late = late, .symbols = symbols };
	return report_one(&o, (char *)log_path);
}

int report_check_outputs(const char *cmd, const struct report_outputs *outs,
			 const char *const *inputs, size_t ninputs)
{
	struct report_opts o = { .cmd = cmd, .json_path = outs->json, .html_path = outs->html,
				 .perfetto_path = outs->perfetto, .csv_dir = outs->csv_dir };
	struct outputs out;
	return outputs_open(&out, &o, (char *const *)inputs, ninputs, "report", true);
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
	static const char *const valued[] = { "--json", "--top", "--late", "--html", "--perfetto",
					      "--csv", "--debug-dir", NULL };
	nlogs = cli_take_args(&argc, argv, valued, true, logs);
	cli_init(&c, o.cmd, argc, argv);
	while (cli_next(&c)) {
		if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
			fputs(usage, stdout);
			free(logs);
			return NT_EXIT_OK;
		} else if (cli_is(&c, "--json")) {
			o.json_path = cli_value(&c);
		} else if (cli_is(&c, "--html")) {
			o.html_path = cli_value(&c);
		} else if (cli_is(&c, "--perfetto")) {
			o.perfetto_path = cli_value(&c);
		} else if (cli_is(&c, "--csv")) {
			o.csv_dir = cli_value(&c);
		} else if (cli_is(&c, "--each")) {
			cli_flag(&c);
			o.each = true;
		} else if (cli_is(&c, "--top")) {
			o.top = (size_t)cli_u64(&c, 0, 1000000);
		} else if (cli_is(&c, "--late")) {
			o.late = (size_t)cli_u64(&c, 0, 1000000);
		} else if (cli_is(&c, "--debug-dir")) {
			o.debug_dir = cli_value(&c);
		} else if (cli_is(&c, "--no-symbols")) {
			cli_flag(&c);
			o.symbols = false;
		} else {
			cli_unknown(&c);
		}
	}
	if (!nlogs)
		cli_usage_error(&c, "no log given");
	/* A mistyped directory would only leave sites unnamed, without a word. */
	struct stat dst;
	if (o.debug_dir && (stat(o.debug_dir, &dst) != 0 || !S_ISDIR(dst.st_mode)))
		cli_usage_error(&c, "--debug-dir '%s' is not a directory", o.debug_dir);
	bool compare = nlogs == 2 && !o.each;
	if (nlogs > 1 && !compare && (o.html_path || o.perfetto_path || o.csv_dir))
		cli_usage_error(&c, "--html, --perfetto and --csv take one log (or two to compare)");
	if (compare && o.perfetto_path)
		cli_usage_error(&c, "--perfetto takes one log (a timeline of one job)");
	int status = nlogs == 1 && !o.each ? report_one(&o, logs[0])
		     : compare	       ? compare_two(&o, logs)
					       : report_logs(&o, logs, nlogs);
	free(logs);
	return status;
}
