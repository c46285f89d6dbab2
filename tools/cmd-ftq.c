/* `noisetool ftq`: fixed time quantum (or, with --fwq, fixed work quantum) sampling. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>
#include <noisetool/ftq.h>
#include <noisetool/noise.h>

#include "cli.h"
#include "commands.h"
#include "noise-output.h"

static const char usage[] =
	"Usage: noisetool ftq [--seconds S] [--quantum-us Q] [--fwq] [--cpu C|LIST|all]\n"
	"                     [--threshold-ns N] [--json FILE] [--json-detours] [--trace FILE]\n"
	"                     [--html FILE]\n"
	"\n"
	"FTQ (fixed time quantum, Sottile & Minnich): count the basic operations done in each\n"
	"quantum of Q microseconds; a quantum that did less work than the best one lost time to\n"
	"noise. With --fwq, FWQ (fixed work quantum): time a fixed amount of work (about Q us\n"
	"undisturbed) again and again. Lost time of at least the threshold becomes a detour, and\n"
	"the same signature analysis as `noisetool detour` runs on them. What else ran on each\n"
	"CPU meanwhile (other tasks, interrupts, softirqs) is read from /proc before and after.\n"
	"(FTQ cannot tell preempted detours: its detour time is periodic interrupts or neither.)\n"
	"\n"
	"  --seconds S        measure for S seconds on each CPU (default 5)\n"
	"  --quantum-us Q     FTQ quantum, or FWQ work per sample, in us (default 100, >= 1)\n"
	"  --fwq              fixed work quantum instead of fixed time quantum\n"
	"  --cpu C|LIST|all   CPU(s) to measure, one pinned thread each (default all)\n"
	"  --threshold-ns N   lost time that counts as a detour (default 1000)\n"
	"  --json FILE        write the result as JSON (schema: doc/detour-json.md); - = stdout\n"
	"  --json-detours     the JSON also lists every kept detour (as large as the trace)\n"
	"  --trace FILE       write detours as start_ns<TAB>duration_ns; several CPUs: FILE.cpuN\n"
	"  --html FILE        a page with plots per CPU: detour length against time, sorted\n"
	"                     detour lengths, periodic components (doc/html.md; needs Python 3\n"
	"                     with matplotlib, checked before the measurement); - = stdout\n"
	"  -h, --help         this text\n"
	"\n"
	"Outputs (--json, --trace, --html): a new or regular file is replaced atomically, a\n"
	"symlink of yours to a file beside it is written through, a character device, a FIFO\n"
	"(with a reader) or - is written in place; a directory, a missing directory, another\n"
	"user's symlink, a symlink out of its directory, or two outputs naming one file are\n"
	"refused before the measurement starts (doc/noisetool.md, \"Outputs\").\n"
	"\n"
	"Exit status: 0 done, 1 the measurement or an output failed, 2 bad arguments.\n";

int cmd_ftq(int argc, char **argv)
{
	const char *cmd = "noisetool ftq";
	struct nt_ftq_config cfg = { .mode = NT_FTQ, .seconds = 5, .quantum_ns = 100000 };
	uint64_t threshold_ns = 1000;
	struct noise_outputs out = { .html_kind = "ftq" };
	int cpus[CPU_SETSIZE];
	size_t ncpus = 0;
	bool cpus_given = false; /* default: every allowed CPU */

	struct cli c;
	cli_init(&c, cmd, argc, argv);
	while (cli_next(&c)) {
		if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
			fputs(usage, stdout);
			return NT_EXIT_OK;
		} else if (cli_is(&c, "--seconds")) {
			cfg.seconds = cli_double(&c, 0.001, 1e5);
		} else if (cli_is(&c, "--quantum-us")) {
			cfg.quantum_ns = (uint64_t)(cli_double(&c, 1, 1e7) * 1000.0);
		} else if (cli_is(&c, "--fwq")) {
			cli_flag(&c);
			cfg.mode = NT_FWQ;
		} else if (cli_is(&c, "--threshold-ns")) {
			threshold_ns = cli_u64(&c, 1, 10ull * 1000 * 1000 * 1000);
		} else if (cli_is(&c, "--cpu")) {
			ncpus = cli_cpus(&c, cpus, CPU_SETSIZE);
			cpus_given = true;
		} else if (cli_is(&c, "--json")) {
			out.json_path = cli_value(&c);
		} else if (cli_is(&c, "--trace")) {
			out.trace_path = cli_value(&c);
		} else if (cli_is(&c, "--html")) {
			out.html_path = cli_value(&c);
		} else if (cli_is(&c, "--json-detours")) {
			cli_flag(&c);
			out.json_detours = true;
		} else {
			cli_unknown(&c);
		}
	}
	if (cfg.seconds * 1e9 / (double)cfg.quantum_ns > NT_FTQ_MAX_SAMPLES)
		cli_usage_error(&c, "--seconds / --quantum-us gives more than %u samples; use a "
				    "longer quantum or a shorter run", NT_FTQ_MAX_SAMPLES);
	if (!cpus_given)
		ncpus = cli_all_cpus(&c, cpus, CPU_SETSIZE);
	noise_outputs_open(&out, &c, cpus, ncpus);
	struct progress prog;
	progress_init(&prog, cmd, cfg.seconds, cpus[0]);
	cfg.progress = progress_cb;
	cfg.progress_ctx = &prog;

	struct nt_ftq_result *res = calloc(ncpus, sizeof *res);
	struct nt_cpu_noise *cn = calloc(ncpus, sizeof *cn);
	struct nt_detour **dets = calloc(ncpus, sizeof *dets);
	if (!res || !cn || !dets) {
		noise_outputs_abort(&out);
		fprintf(stderr, "%s: out of memory\n", cmd);
		return NT_EXIT_FAIL;
	}
	struct noise_meanwhile meanwhile;
	noise_meanwhile_begin(&meanwhile);
	int rc = nt_ftq_measure_cpus(&cfg, cpus, ncpus, res);
	noise_meanwhile_end(&meanwhile, cpus, ncpus);
	progress_done(&prog);
	if (rc) {
		noise_outputs_abort(&out);
		fprintf(stderr, "%s: measurement failed: %s\n", cmd, strerror(-rc));
		return NT_EXIT_FAIL;
	}

	struct nt_node_noise rep;
	noise_report_init(&rep, cfg.mode == NT_FTQ ? "ftq" : "fwq", cfg.seconds, threshold_ns);
	rep.ncpus = ncpus;
	rep.cpus = cn;
	uint64_t origin = UINT64_MAX; /* the earliest CPU's start: the run's common time axis */
	for (size_t i = 0; i < ncpus; i++)
		origin = res[i].start_cyc < origin ? res[i].start_cyc : origin;
	for (size_t i = 0; i < ncpus; i++) {
		const struct nt_ftq_result *r = &res[i];
		size_t nd = 0;
		if ((rc = nt_ftq_detours(r, threshold_ns, &dets[i], &nd)) != 0) {
			noise_outputs_abort(&out);
			fprintf(stderr, "%s: analysis failed: %s\n", cmd, strerror(-rc));
			return NT_EXIT_FAIL;
		}
		double t_min = cfg.mode == NT_FTQ
				       ? (r->best ? (double)r->quantum_ns / (double)r->best : 0)
				       : (double)r->best;
		cn[i] = (struct nt_cpu_noise){
			.cpu = r->cpu,
			.os = r->os,
			.t_min_ns = t_min,
			.elapsed_ns = r->elapsed_ns,
			.start_offset_ns = (uint64_t)llround(nt_clock_cyc_to_ns(r->start_cyc - origin)),
			.iterations = r->nsamples,
			.quantum_ns = r->quantum_ns,
			.best = r->best,
			.detours = dets[i],
			.ndetours = nd,
		};
		if ((rc = nt_cpu_noise_analyze(&cn[i])) != 0) {
			noise_outputs_abort(&out);
			fprintf(stderr, "%s: analysis failed: %s\n", cmd, strerror(-rc));
			return NT_EXIT_FAIL;
		}
		/* The work-based ratio is the FTQ/FWQ definition; detours above the threshold
		 * may miss small losses spread over many quanta. */
		cn[i].stats.noise_ratio = r->noise_ratio;
	}
	noise_meanwhile_apply(&meanwhile, cn, ncpus);
	int status = noise_outputs_finish(&out, cmd, &rep);
	for (size_t i = 0; i < ncpus; i++) {
		nt_ftq_result_free(&res[i]);
		free(dets[i]);
	}
	free(res);
	free(cn);
	free(dets);
	return status;
}
