/* `noisetool detour`: the selfish-detour loop on one CPU or on every allowed CPU at once. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>
#include <noisetool/detour.h>
#include <noisetool/noise.h>

#include "cli.h"
#include "commands.h"
#include "noise-output.h"

static const char usage[] =
	"Usage: noisetool detour [--seconds S] [--threshold-ns N] [--cpu C|LIST|all]\n"
	"                        [--json FILE] [--json-detours] [--trace FILE] [--html FILE]\n"
	"                        [--max-detours N] [--no-classify]\n"
	"\n"
	"Measure this node's noise with the selfish-detour loop (Beckman et al.): a tight loop reads\n"
	"the cycle counter back to back and records every gap longer than the threshold. Each detour\n"
	"is classified as preempted (another task ran: the thread's schedstat run count moved) or\n"
	"not (interrupts, hypervisor), and the softirq kinds that ran in it are noted (/proc/softirqs\n"
	"read after each detour). Then finds periodic components (timer ticks, daemons) and rare\n"
	"long detours, and names what else ran on each CPU meanwhile: the other tasks by CPU time,\n"
	"the interrupt lines and softirq kinds by count (/proc, read before and after); the detour\n"
	"time is split into another task, periodic interrupts, softirqs and neither.\n"
	"\n"
	"  --seconds S        measure for S seconds on each CPU (default 5)\n"
	"  --threshold-ns N   a gap longer than N ns is a detour (default 1000)\n"
	"  --cpu C|LIST|all   CPU(s) to measure, one pinned thread each, all at once:\n"
	"                     a number, a list like 0,2-3, or all allowed CPUs (default all)\n"
	"  --json FILE        write the signature as JSON (schema: doc/detour-json.md); - = stdout\n"
	"  --json-detours     the JSON also lists every kept detour (as large as the trace)\n"
	"  --trace FILE       write raw detours as start_ns<TAB>duration_ns lines (Netgauge selfish,\n"
	"                     LogGOPSim noise trace); with several CPUs: FILE.cpuN per CPU\n"
	"  --html FILE        a page with plots per CPU: detour length against time, sorted\n"
	"                     detour lengths, periodic components (doc/html.md; needs Python 3\n"
	"                     with matplotlib, checked before the measurement); - = stdout\n"
	"  --max-detours N    keep at most N detours per CPU (default 50,000 per second)\n"
	"  --no-classify      skip the schedstat and /proc/softirqs reads after each detour\n"
	"                     (no preempted counts, no softirq part)\n"
	"  -h, --help         this text\n"
	"\n"
	"Outputs (--json, --trace, --html): a new or regular file is replaced atomically, a\n"
	"symlink of yours to a file beside it is written through, a character device, a FIFO\n"
	"(with a reader) or - is written in place; a directory, a missing directory, another\n"
	"user's symlink, a symlink out of its directory, or two outputs naming one file are\n"
	"refused before the measurement starts (doc/noisetool.md, \"Outputs\").\n"
	"\n"
	"Exit status: 0 done, 1 the measurement or an output failed, 2 bad arguments.\n";

int cmd_detour(int argc, char **argv)
{
	const char *cmd = "noisetool detour";
	struct nt_detour_config cfg = { .seconds = 5, .threshold_ns = NT_DETOUR_DEFAULT_THRESHOLD_NS };
	struct noise_outputs out = { .html_kind = "detour" };
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
		} else if (cli_is(&c, "--threshold-ns")) {
			cfg.threshold_ns = cli_u64(&c, 1, 10ull * 1000 * 1000 * 1000);
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
		} else if (cli_is(&c, "--max-detours")) {
			cfg.capacity = (size_t)cli_u64(&c, 1, 1ull << 28);
		} else if (cli_is(&c, "--no-classify")) {
			cli_flag(&c);
			cfg.no_classify = true;
		} else {
			cli_unknown(&c);
		}
	}
	if (!cpus_given)
		ncpus = cli_all_cpus(&c, cpus, CPU_SETSIZE);
	noise_outputs_open(&out, &c, cpus, ncpus);
	struct progress prog;
	progress_init(&prog, cmd, cfg.seconds, cpus[0]);
	cfg.progress = progress_cb;
	cfg.progress_ctx = &prog;

	struct nt_detour_result *res = calloc(ncpus, sizeof *res);
	struct nt_cpu_noise *cn = calloc(ncpus, sizeof *cn);
	if (!res || !cn) {
		noise_outputs_abort(&out);
		fprintf(stderr, "%s: out of memory\n", cmd);
		return NT_EXIT_FAIL;
	}
	struct noise_meanwhile meanwhile;
	noise_meanwhile_begin(&meanwhile);
	int rc = nt_detour_measure_cpus(&cfg, cpus, ncpus, res);
	noise_meanwhile_end(&meanwhile, cpus, ncpus);
	progress_done(&prog);
	if (rc) {
		noise_outputs_abort(&out);
		fprintf(stderr, "%s: measurement failed: %s\n", cmd, strerror(-rc));
		return NT_EXIT_FAIL;
	}

	struct nt_node_noise rep;
	noise_report_init(&rep, "detour", cfg.seconds, res[0].threshold_ns);
	rep.ncpus = ncpus;
	rep.cpus = cn;
	uint64_t origin = UINT64_MAX; /* the earliest CPU's loop start: the run's common time axis */
	for (size_t i = 0; i < ncpus; i++)
		origin = res[i].start_cyc < origin ? res[i].start_cyc : origin;
	for (size_t i = 0; i < ncpus; i++) {
		const struct nt_detour_result *r = &res[i];
		cn[i] = (struct nt_cpu_noise){
			.cpu = r->cpu,
			.os = r->os,
			.t_min_ns = r->t_min_ns,
			.t_min_raw_ns = nt_clock_cyc_to_ns(r->t_min_raw_cyc),
			.elapsed_ns = r->elapsed_ns,
			.start_offset_ns = (uint64_t)llround(nt_clock_cyc_to_ns(r->start_cyc - origin)),
			.iterations = r->iterations,
			.dropped = r->dropped,
			.classified = r->classified,
			.softirqs = r->softirqs,
			.softirq_reads = r->softirq_reads,
			.softirq_read_ns = r->softirq_read_ns,
			.detours = r->detours,
			.ndetours = r->count,
		};
		if ((rc = nt_cpu_noise_analyze(&cn[i])) != 0) {
			noise_outputs_abort(&out);
			fprintf(stderr, "%s: analysis failed: %s\n", cmd, strerror(-rc));
			return NT_EXIT_FAIL;
		}
	}
	noise_meanwhile_apply(&meanwhile, cn, ncpus);
	int status = noise_outputs_finish(&out, cmd, &rep);
	for (size_t i = 0; i < ncpus; i++)
		nt_detour_result_free(&res[i]);
	free(res);
	free(cn);
	return status;
}
