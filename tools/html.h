/* --html FILE: a page drawn by the plotting helper (tools/plot: Python and matplotlib) from the
 * JSON document a command writes, checked and opened before the work, written after it. */
#ifndef TOOLS_HTML_H
#define TOOLS_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <noisetool/outfile.h>

struct html_out {
	struct nt_outfile of;
	char python[NT_PATH_MAX];   /* the interpreter that draws */
	char plot_dir[NT_PATH_MAX]; /* where the noisetool_plot package is */
	char kind[32];              /* noisetool_plot's kind of page: "report", "detour", ... */
	bool open;
};

/* html_open without opening anything: the Python and the path checked, nothing written (a
 * FIFO's reader sees nothing). NT_EXIT_OK, or one line on stderr and NT_EXIT_FAIL. */
int html_check(struct html_out *h, const char *cmd, const char *kind, const char *path,
	       const char *const *inputs, size_t ninputs);

/* Before the work: find a Python that can draw (NOISETOOL_PYTHON, else python3 on PATH, else
 * /usr/bin/python3; matplotlib must import), check path by the output rules against the
 * command's inputs, and open it. On failure one line on stderr ("CMD: --html needs ...") and
 * the exit status to return (NT_EXIT_FAIL); NT_EXIT_OK when open. */
int html_open(struct html_out *h, const char *cmd, const char *kind, const char *path,
	      const char *const *inputs, size_t ninputs);

/* After the work: run the helper with the document write_json writes on its stdin and the
 * page going to the output, then commit the output. write_json returns 0 or -errno. Returns
 * NT_EXIT_OK, or NT_EXIT_FAIL with one line on stderr (nothing is left at a file's name). */
int html_write(struct html_out *h, const char *cmd, int (*write_json)(FILE *f, void *ctx),
	       void *ctx);

/* Give up an opened page (nothing is left at a file's name). Safe to call twice. */
void html_abort(struct html_out *h);

#endif /* TOOLS_HTML_H */
