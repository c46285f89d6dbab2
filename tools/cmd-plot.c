/* `noisetool plot KIND JSON --html FILE`: the page of a JSON document a command wrote before
 * (detour --json, simulate --json, report --json, coll-noise --json, ...), drawn again without
 * running anything. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <noisetool-private/infile.h>

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
	"JSON is the file (- for stdin): a regular file or a pipe, at most 64 MiB; a FIFO is read\n"
	"only when its writer already has it open (else it is empty), a device never. The page is\n"
	"one self-contained HTML file drawn with matplotlib (doc/html.md); a job's report page\n"
	"comes from noisetool report LOG --html.\n"
	"\n"
	"  --html FILE   the page (- for stdout)\n"
	"  -h, --help    this text\n"
	"\n"
	"Exit status: 0 done, 1 the document or the page failed (one line says why), 2 bad\n"
	"arguments.\n";

/* The kinds a user may name (report and compare pages need the log: noisetool report). */
static const char *const kinds[] = { "detour", "ftq", "simulate", "coll-noise", "udp-pingpong" };

/* A document read whole (noisetool-private/infile.h). */
struct doc {
	char *text;
	size_t len;
};

/* Hand the document to the helper as it is (it checks that it is JSON). */
static int copy_doc(FILE *to, void *ctx)
{
	const struct doc *d = ctx;
	return fwrite(d->text, 1, d->len, to) == d->len ? 0 : -EIO;
}

/* The document JSON ("-": stdin) into d: a regular file or a pipe, at most NT_INFILE_DOC_MAX
 * bytes, the bound simulate --signature sets on the same documents. A FIFO is opened without
 * waiting for a writer (without one it is empty), a device is never read: `plot detour
 * /dev/zero` would otherwise fill the memory, and a FIFO no one writes hang the command. One
 * line on stderr when it fails. */
static int read_doc(const char *cmd, const char *path, struct doc *d)
{
	int rc = strcmp(path, "-") == 0
			 ? nt_infile_read_fd(STDIN_FILENO, 0, NT_INFILE_DOC_MAX, &d->text, &d->len)
			 : nt_infile_read(path, true, NT_INFILE_DOC_MAX, &d->text, &d->len);
	if (rc == -ENODEV)
		fprintf(stderr, "%s: %s: not a regular file or a pipe; name the JSON file\n", cmd,
			path);
	else if (rc == -EFBIG)
		fprintf(stderr, "%s: %s: larger than %u MiB, more than any page is drawn from\n",
			cmd, path, NT_INFILE_DOC_MAX >> 20);
	else if (rc)
		fprintf(stderr, "%s: %s: %s\n", cmd, path, strerror(-rc));
	else if (strspn(d->text, " \t\r\n") == d->len)
		fprintf(stderr, "%s: %s: empty (a FIFO is read only when its writer has it open)\n",
			cmd, path);
	else
		return 0;
	free(d->text);
	d->text = NULL;
	return rc ? rc : -ENODATA;
}

int cmd_plot(int argc, char **argv)
{
	const char *cmd = "noisetool plot", *html = NULL, *words[2] = { NULL, NULL };
	size_t nwords = 0;
	/* The two words may come anywhere; every other argument is an option. */
	static const char *const valued[] = { "--html", NULL };
	char **args = calloc(argc > 0 ? (size_t)argc : 1, sizeof *args);
	if (!args) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return NT_EXIT_FAIL;
	}
	size_t nargs = cli_take_args(&argc, argv, valued, true, args);
	if (nargs > 2) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", cmd, args[2]);
		free(args);
		return NT_EXIT_USAGE;
	}
	for (nwords = 0; nwords < nargs; nwords++)
		words[nwords] = args[nwords];
	free(args);
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
	struct html_out h;
	const char *inputs[] = { words[1] };
	int status = html_open(&h, cmd, words[0], html, inputs, 1);
	if (status != NT_EXIT_OK)
		return status;
	struct doc d = { NULL, 0 };
	if (read_doc(cmd, words[1], &d) != 0) {
		html_abort(&h);
		return NT_EXIT_FAIL;
	}
	status = html_write(&h, cmd, copy_doc, &d);
	free(d.text);
	return status;
}
