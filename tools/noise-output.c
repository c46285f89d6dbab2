/* Outputs of the noise subcommands: table, JSON, trace and page. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <noisetool-private/meanwhile.h>

#include "noise-output.h"

static int open_or_report(struct nt_outfile *of, const char *cmd, const char *path)
{
	int rc = nt_outfile_open(of, path, false);
	if (rc)
		fprintf(stderr, "%s: %s\n", cmd, of->why);
	return rc;
}

/* The trace file of the i-th CPU. */
static void trace_name(const struct noise_outputs *o, const int *cpus, size_t ncpus, size_t i,
		       char *path, size_t size)
{
	/* Several CPUs: one trace per CPU, FILE.cpuN. */
	if (ncpus == 1)
		snprintf(path, size, "%s", o->trace_path);
	else
		snprintf(path, size, "%s.cpu%d", o->trace_path, cpus[i]);
}

static bool on_stdout(const char *path)
{
	return path && (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"));
}

void noise_outputs_open(struct noise_outputs *o, const struct cli *c, const int *cpus,
			size_t ncpus)
{
	const char *cmd = c->cmd;
	if (o->trace_path && strcmp(o->trace_path, "-") == 0 && ncpus > 1)
		cli_usage_error(c, "--trace - (stdout) needs a single --cpu");
	if (on_stdout(o->html_path) && (on_stdout(o->json_path) || on_stdout(o->trace_path)))
		cli_usage_error(c, "--html - (stdout) and another output on stdout exclude each "
				   "other");
	/* Every path is checked before any is opened, so that a FIFO's reader is not connected
	 * to (and then sees an empty output) when another output is refused. */
	char why[NT_OUTFILE_WHY_MAX];
	if (o->json_path && nt_outfile_check(o->json_path, NULL, 0, why, sizeof why) != 0) {
		fprintf(stderr, "%s: %s\n", cmd, why);
		exit(NT_EXIT_FAIL);
	}
	if (o->html_path && o->json_path && nt_outfile_collide(o->json_path, o->html_path)) {
		fprintf(stderr, "%s: cannot write '%s': --json and --html name the same file; "
				"name two files\n", cmd, o->html_path);
		exit(NT_EXIT_FAIL);
	}
	for (size_t i = 0; o->trace_path && i < ncpus; i++) {
		char path[NT_PATH_MAX];
		trace_name(o, cpus, ncpus, i, path, sizeof path);
		if (nt_outfile_check(path, NULL, 0, why, sizeof why) != 0) {
			fprintf(stderr, "%s: %s\n", cmd, why);
			exit(NT_EXIT_FAIL);
		}
		/* The JSON and a trace renamed over one file: one of them would be lost. */
		if (o->json_path && nt_outfile_collide(o->json_path, path)) {
			fprintf(stderr, "%s: cannot write '%s': the JSON and the trace '%s' are the "
					"same file; name two files\n", cmd, o->json_path, path);
			exit(NT_EXIT_FAIL);
		}
		if (o->html_path && nt_outfile_collide(o->html_path, path)) {
			fprintf(stderr, "%s: cannot write '%s': the page and the trace '%s' are the "
					"same file; name two files\n", cmd, o->html_path, path);
			exit(NT_EXIT_FAIL);
		}
	}
	/* The page last of the checks and first of the opens: it also finds Python with
	 * matplotlib, and a missing one must stop the command before any output is touched. */
	if (o->html_path &&
	    html_open(&o->html, cmd, o->html_kind, o->html_path, NULL, 0) != NT_EXIT_OK)
		exit(NT_EXIT_FAIL);
	if (o->json_path && open_or_report(&o->json, cmd, o->json_path)) {
		if (o->html_path)
			html_abort(&o->html);
		exit(NT_EXIT_FAIL);
	}
	if (!o->trace_path)
		return;
	o->ntraces = ncpus;
	o->traces = calloc(ncpus, sizeof *o->traces);
	if (!o->traces) {
		noise_outputs_abort(o);
		exit(NT_EXIT_FAIL);
	}
	for (size_t i = 0; i < ncpus; i++) {
		char path[NT_PATH_MAX];
		trace_name(o, cpus, ncpus, i, path, sizeof path);
		if (open_or_report(&o->traces[i], cmd, path)) {
			o->ntraces = i;
			noise_outputs_abort(o);
			exit(NT_EXIT_FAIL);
		}
	}
}

void noise_outputs_abort(struct noise_outputs *o)
{
	if (o->json_path)
		nt_outfile_abort(&o->json);
	if (o->html_path)
		html_abort(&o->html);
	for (size_t i = 0; i < o->ntraces; i++)
		nt_outfile_abort(&o->traces[i]);
	free(o->traces);
	o->traces = NULL;
	o->ntraces = 0;
}

static int commit(struct nt_outfile *of, const char *cmd, const char *what)
{
	int rc = nt_outfile_commit(of);
	if (rc)
		fprintf(stderr, "%s: %s: %s\n", cmd, what, of->why);
	return rc;
}

/* The page's document: the JSON with every kept detour (html_write's callback). */
static int write_page_doc(FILE *f, void *ctx)
{
	struct nt_node_noise r = *(const struct nt_node_noise *)ctx;
	r.with_detours = true;
	return nt_node_noise_write_json(f, &r);
}

int noise_outputs_finish(struct noise_outputs *o, const char *cmd, const struct nt_node_noise *r)
{
	int status = NT_EXIT_OK;
	bool json_to_stdout = o->json_path && strcmp(o->json_path, "-") == 0;
	bool quiet = json_to_stdout || on_stdout(o->html_path);
	struct nt_node_noise doc = *r;
	doc.with_detours = o->json_detours;
	if (!quiet && nt_node_noise_write_text(stdout, r) != 0)
		status = NT_EXIT_FAIL;
	if (!quiet)
		fflush(stdout);
	if (o->json_path) {
		if (nt_node_noise_write_json(o->json.f, &doc) != 0 ||
		    commit(&o->json, cmd, "JSON") != 0) {
			nt_outfile_abort(&o->json);
			status = NT_EXIT_FAIL;
		}
	}
	for (size_t i = 0; i < o->ntraces; i++) {
		struct nt_outfile *of = &o->traces[i];
		const struct nt_cpu_noise *c = &r->cpus[i];
		struct nt_trace_axis axis = { c->elapsed_ns, c->start_offset_ns };
		if (nt_trace_write_axis(of->f, c->detours, c->ndetours, &axis) != 0 ||
		    commit(of, cmd, "trace") != 0) {
			nt_outfile_abort(of);
			status = NT_EXIT_FAIL;
		} else if (o->ntraces > 1 && !quiet) {
			printf("trace of CPU %d written to %s\n", c->cpu, of->path);
		}
	}
	if (o->html_path) {
		fflush(stdout);
		if (html_write(&o->html, cmd, write_page_doc, (void *)r) != NT_EXIT_OK)
			status = NT_EXIT_FAIL;
		else if (!quiet)
			printf("page written to %s\n", o->html_path);
	}
	free(o->traces);
	o->traces = NULL;
	o->ntraces = 0;
	return status;
}

void noise_report_init(struct nt_node_noise *r, const char *method, double seconds,
		       uint64_t threshold_ns)
{
	memset(r, 0, sizeof *r);
	r->method = method;
	r->seconds = seconds;
	r->threshold_ns = threshold_ns;
	nt_sysinfo_collect(&r->sys);
	r->clock = *nt_clock_get_info();
}

void noise_meanwhile_begin(struct noise_meanwhile *m)
{
	memset(m, 0, sizeof *m);
	if (nt_meanwhile_snap_take(NULL, &m->before) != 0)
		m->before = NULL;
}

void noise_meanwhile_end(struct noise_meanwhile *m, const int *cpus, size_t ncpus)
{
	m->results = calloc(ncpus ? ncpus : 1, sizeof *m->results);
	if (m->before && m->results &&
	    nt_meanwhile_finish(NULL, m->before, cpus, ncpus, getpid(), getuid(), m->results) == 0)
		m->n = ncpus;
	nt_meanwhile_snap_free(m->before);
	m->before = NULL;
}

void noise_meanwhile_apply(struct noise_meanwhile *m, struct nt_cpu_noise *cn, size_t ncpus)
{
	for (size_t i = 0; i < ncpus && i < m->n; i++)
		cn[i].meanwhile = m->results[i];
	free(m->results);
	m->results = NULL;
	m->n = 0;
}
