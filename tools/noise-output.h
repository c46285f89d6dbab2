/* Outputs shared by `noisetool detour` and `noisetool ftq`: the table on stdout, the JSON
 * document, the TSV trace and the HTML page, all opened before the run so a bad path (or a
 * Python without matplotlib, for the page) fails at once. */
#ifndef TOOLS_NOISE_OUTPUT_H
#define TOOLS_NOISE_OUTPUT_H

#include <noisetool/noise.h>
#include <noisetool/outfile.h>

#include "cli.h"
#include "html.h"

struct noise_outputs {
	const char *json_path;
	const char *trace_path;
	const char *html_path;  /* the page (kind: the command's name, "detour" or "ftq") */
	const char *html_kind;
	bool json_detours;      /* --json-detours: the JSON lists every kept detour too */
	struct html_out html;
	struct nt_outfile json;
	struct nt_outfile *traces; /* one per CPU when several CPUs are measured */
	size_t ntraces;
};

/* Open every requested output by the rules of <noisetool/outfile.h> (a temporary file for a
 * new or regular file, a device or FIFO in place); with several CPUs the trace is one file per
 * CPU, TRACE.cpuN. Exits 2 for "--trace -" with several CPUs or two outputs on stdout, 1 (with
 * a one-line reason) when an output is refused: a directory, a missing directory, a FIFO
 * without a reader, two outputs naming the same file, or --html without Python and
 * matplotlib. */
void noise_outputs_open(struct noise_outputs *o, const struct cli *c, const int *cpus,
			size_t ncpus);

/* Print the table (unless the JSON or the page goes to stdout), write and commit every output;
 * the page is drawn from the JSON document with every kept detour. Returns the exit status. */
int noise_outputs_finish(struct noise_outputs *o, const char *cmd, const struct nt_node_noise *r);

/* Remove every temporary file. */
void noise_outputs_abort(struct noise_outputs *o);

/* What else ran on each measured CPU: /proc read just before the measurement and just after it
 * (noisetool-private/meanwhile.h); outside the measured time, a few ms each. */
struct noise_meanwhile {
	struct nt_meanwhile_snap *before;
	struct nt_cpu_meanwhile *results; /* one per measured CPU, in their order */
	size_t n;                         /* 0: nothing could be read */
};

/* Read before the measurement. */
void noise_meanwhile_begin(struct noise_meanwhile *m);

/* Read again after it, for the measured CPUs cpus[0..ncpus). */
void noise_meanwhile_end(struct noise_meanwhile *m, const int *cpus, size_t ncpus);

/* Give cn[i] (measured on cpus[i]) its result, and free them. */
void noise_meanwhile_apply(struct noise_meanwhile *m, struct nt_cpu_noise *cn, size_t ncpus);

/* Fill the report header (host, clock). */
void noise_report_init(struct nt_node_noise *r, const char *method, double seconds,
		       uint64_t threshold_ns);

#endif /* TOOLS_NOISE_OUTPUT_H */
