/* noisetool: measure a node's noise signature (detour, ftq), run and report MPI jobs, and
 * simulate what the noise does to collectives at scale. */
#include "nt-config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>
#include <noisetool/outfile.h>
#include <noisetool/probe.h>
#include <noisetool-private/sim-calibration.h>

#include "cli.h"
#include "mpi-pick.h"
#include "commands.h"

static const char usage[] =
	"Usage: noisetool COMMAND [OPTIONS]\n"
	"\n"
	"Find out why parallel jobs are slow on noisy or shared machines.\n"
	"\n"
	"Commands:\n"
	"  detour     measure this node's noise with the selfish-detour loop\n"
	"  ftq        measure it with fixed time (or work) quanta\n"
	"  run        run an MPI job with the wrapper library preloaded, print its report\n"
	"  report     the report of an MPI job's log (.ntlog)\n"
	"  hosts      which hosts make jobs late, across many jobs' logs\n"
	"  simulate   predict what a noise signature does to collectives at 10^5-10^6+ ranks\n"
	"  plot       draw the page of a JSON document a command wrote (--html)\n"
	"  version    print the version and the optional features built in\n"
	"\n"
	"'noisetool COMMAND --help' describes each command.\n";

static int cmd_version(int argc, char **argv)
{
	struct cli c;
	cli_init(&c, "noisetool version", argc, argv);
	while (cli_next(&c)) {
		if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
			puts("Usage: noisetool version\n\nPrint the version, the optional features "
			     "built in, the calibrated clock and the LogGP values `noisetool\n"
			     "simulate` uses without --loggp, and where they came from.");
			return NT_EXIT_OK;
		}
		cli_unknown(&c);
	}
	const struct nt_clock_info *ci = nt_clock_get_info();
	printf("noisetool %s\n", NT_VERSION);
	printf("features: papi %s, libunwind %s, mpi %s\n", NT_HAVE_PAPI ? "yes" : "no",
	       NT_HAVE_LIBUNWIND ? "yes" : "no", NT_HAVE_MPI ? "yes" : "no");
	printf("wrapper libraries:");
	int libs = 0;
	for (enum mpi_kind k = MPI_KIND_MPICH; k <= MPI_KIND_OMPI; k++) {
		char path[PATH_MAX];
		if (mpi_library(k, path, sizeof path) == 0) {
			char real[PATH_MAX];
			printf("%s %s %s", libs++ ? "," : "", mpi_kind_title(k),
			       realpath(path, real) ? real : path);
		}
	}
	printf("%s\n", libs ? "" : " none found (noisetool run needs one: build with -Dmpi)");
	printf("clock: %s %.3f MHz (+-%.2f ppm), read %.1f ns, %s, clocksource %s\n",
	       nt_clock_source_name(ci->source), ci->hz / 1e6, ci->calib_error_ppm,
	       ci->read_cost_ns, ci->constant_tsc ? "invariant" : "not invariant",
	       ci->clocksource[0] ? ci->clocksource : "?");
	/* The LogGP values simulate uses without --loggp or --loggp-file, and their origin. */
	struct nt_loggp_calib cal;
	enum nt_loggp_origin origin;
	char path[NT_PATH_MAX], err[512];
	int rc = nt_loggp_resolve(NULL, &cal, &origin, path, sizeof path, err, sizeof err);
	char dflt[NT_PATH_MAX];
	if (rc != 0)
		printf("loggp: %s is unusable (%s); simulate refuses to run without --loggp\n", path,
		       err);
	else if (origin == NT_LOGGP_FILE)
		printf("loggp: %g,%g,%g,%g (L,o,g ns, G ns/B) from %s, calibrated %s on %s (%s)\n",
		       cal.loggp.L_ns, cal.loggp.o_ns, cal.loggp.g_ns, cal.loggp.G_ns_per_byte, path,
		       cal.date, cal.host[0] ? cal.host : "?", cal.mpi[0] ? cal.mpi : "MPI ?");
	else
		printf("loggp: %g,%g,%g,%g (L,o,g ns, G ns/B), built in: the development VM's (2 "
		       "vCPUs, MPICH 4.0.2); no %s (simulate --calibrate --save-loggp FILE)\n",
		       cal.loggp.L_ns, cal.loggp.o_ns, cal.loggp.g_ns, cal.loggp.G_ns_per_byte,
		       nt_loggp_default_path(dflt, sizeof dflt) == 0 ? dflt : "default file");
	/* Which OS sources the probe can read on this machine, at the fullest level. */
	struct nt_probe *probe;
	struct nt_probe_config pc = { .level = NT_PROBE_FULL };
	if (nt_probe_open(&probe, &pc) == 0) {
		uint32_t src = nt_probe_sources(probe);
		printf("probe sources:");
		for (uint32_t bit = 1; bit < (1u << NT_SRC_COUNT); bit <<= 1)
			if (src & bit)
				printf(" %s", nt_probe_source_name(bit));
		printf("%s\n", src & NT_SRC_PAPI_HW ? "" : " (no hardware counters)");
		nt_probe_close(probe);
	}
	return NT_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} commands[] = {
		{ "detour", cmd_detour },
		{ "ftq", cmd_ftq },
		{ "hosts", cmd_hosts },
		{ "plot", cmd_plot },
		{ "report", cmd_report },
		{ "run", cmd_run },
		{ "simulate", cmd_simulate },
		{ "version", cmd_version },
	};
	if (argc < 2) {
		fprintf(stderr, "noisetool: missing command (see 'noisetool --help')\n");
		return NT_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		fputs(usage, stdout);
		return NT_EXIT_OK;
	}
	if (!strcmp(name, "--version"))
		return cmd_version(0, NULL);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "noisetool: unknown command '%s' (see 'noisetool --help')\n", name);
	return NT_EXIT_USAGE;
}
