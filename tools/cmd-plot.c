/* `noisetool plot KIND JSON --html FILE`: the page of a JSON document a command wrote before
 * (detour --json, simulate --json, report --json, coll-noise --json, ...), drawn again without
 * running anything. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "html.h"

static const char usage[] =
	"Usage: noisetool plot KIND JSON --html FILE\n"
	"\n"
	"Draw the page of a JSON document a command wrote, without running anything again:\n"
	"KIND is what wrote it:\n"
	"  detour, ftq       noisetool detour|ftq --json (time series and sorted detours per CPU)\n"
	"  simulate          noisetool simulate --json (magnification against ranks)\n"
	"  coll-noise        coll-noise --json (collective slowdown by noise interval and length)\n"
	"  udp-pingpong      udp-pingpong matrix --json (round trip by policy and load)\n"
	"JSON is the file (- for stdin). The page is one self-contained HTML file drawn with\n"
	"matplotlib (doc/html.md); a job's report page comes from noisetool report LOG --html.\n"
	"\n"
	"  --html FILE   the page (- for stdout)\n"
	"  -h, --help    this text\n"
	"\n"
	"Exit status: 0 done, 1 the document or the page failed (one line says why), 2 bad\n"
	"arguments.\n";

/* The kinds a user may name (report and compare pages need the log: noisetool report). */
static const char *const kinds[] = { "detour", "ftq", "simulate", "coll-noise", "udp-pingpong" };

/* Copy the document to the helper as it is (it checks that it is JSON). */
static int copy_doc(FILE *to, void *ctx)
{
	FILE *from = ctx;
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, from)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			return -EIO;
	return ferror(from) ? -EIO : 0;
}

int cmd_plot(int argc, char **argv)
{
	const char *cmd = "noisetool plot", *html = NULL, *words[2] = { NULL, NULL };
	size_t nwords = 0;
	/* The two words may come anywhere; every other argument is an option. */
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] != '-' || !strcmp(argv[i], "-")) {
			if (nwords == 2) {
				fprintf(stderr, "%s: unexpected argument '%s'\n", cmd, argv[i]);
				return NT_EXIT_USAGE;
			}
			words[nwords++] = argv[i];
			for (int k = i; k + 1 < argc; k++)
				argv[k] = argv[k + 1];
			argc--;
			i--;
		} else if (!strcmp(argv[i], "--html") && i + 1 < argc) {
			i++;
		}
	}
	struct cli c;
	cli_init(&c, cmd, argc, argv);
	while (cli_next(&c)) {
		if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
			fputs(usage, stdout);
			return NT_EXIT_OK;
		} else if (cli_is(&c, "--html")) {
			html = cli_value(&c);
		} else {
			cli_unknown(&c);
		}
	}
	if (nwords < 2)
		cli_usage_error(&c, "expected KIND and JSON (see --help)");
	if (!html)
		cli_usage_error(&c, "--html FILE is required");
	bool known = false;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		known |= !strcmp(words[0], kinds[i]);
	if (!known)
		cli_usage_error(&c, "unknown KIND '%s' (detour, ftq, simulate, coll-noise, "
				    "udp-pingpong)", words[0]);
	bool from_stdin = !strcmp(words[1], "-");
	FILE *in = from_stdin ? stdin : fopen(words[1], "r");
	if (!in) {
		fprintf(stderr, "%s: %s: %s\n", cmd, words[1], strerror(errno));
		return NT_EXIT_FAIL;
	}
	struct html_out h;
	const char *inputs[] = { words[1] };
	int status = html_open(&h, cmd, words[0], html, inputs, 1);
	if (status == NT_EXIT_OK)
		status = html_write(&h, cmd, copy_doc, in);
	if (!from_stdin)
		fclose(in);
	return status;
}
