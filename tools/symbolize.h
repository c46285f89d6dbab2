/* Symbolization of (module, offset) to "file.c:line" or "function+0xoffset" with addr2line
 * (binutils), run after the job, never inside it: one long-lived addr2line per module, answers
 * cached; a function only when the address lies inside its symbol (elfsyms.h). */
#ifndef TOOLS_SYMBOLIZE_H
#define TOOLS_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Live addr2line processes at most; the least recently used one is stopped for a new module. */
#define SYMBOLIZE_MAX_PROCS 16
/* How long one answer may take before its module is given up: far above the first answer on a
 * module (which loads its debug information; milliseconds for noisetool itself). */
#define SYMBOLIZE_TIMEOUT_MS 30000

struct symbolizer_config {
	const char *who;      /* starts the warning line: "noisetool report" */
	const char *program;  /* NULL: "addr2line", looked up in PATH */
	unsigned max_procs;   /* 0: SYMBOLIZE_MAX_PROCS */
	int timeout_ms;       /* 0: SYMBOLIZE_TIMEOUT_MS */
	FILE *warn;           /* NULL: stderr */
	/* A debug directory laid out as /usr/lib/debug (DIR/.build-id/xx/rest.debug), looked in
	 * for the debug file of a module without DWARF of its own; NULL: only where addr2line
	 * looks by itself (.gnu_debuglink, /usr/lib/debug). */
	const char *debug_dir;
};

struct symbolizer_stats {
	uint64_t lookups;   /* calls with a module */
	uint64_t cached;    /* of them answered from the cache */
	uint64_t started;   /* addr2line processes started */
	unsigned live;      /* running now */
	unsigned peak_live; /* most running at once */
	unsigned warnings;  /* lines written to the warning stream (0 or 1) */
};

struct symbolizer;

/* A symbolizer for symbolize_addr2line's ctx; cfg may be NULL (all defaults). No process is
 * started before the first lookup. 0, -EINVAL (timeout_ms < 0), -ENOMEM. */
int symbolizer_open(struct symbolizer **out, const struct symbolizer_config *cfg);

/* Stop and reap every addr2line process and free s (NULL is fine). */
void symbolizer_close(struct symbolizer *s);

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *st);

/* nt_symbolize_fn for nt_report_build. ctx: a struct symbolizer, or NULL for a one-off
 * symbolizer for this call alone (one addr2line process per call: slow). Returns 0 and the name
 * in out when addr2line found one: file.c:line, else function+0xoffset when the address lies
 * inside that function's symbol (a name longer than size keeps its start and its last 24 bytes
 * around "..."). Else -1 and out untouched: an address in no function symbol, no module, a
 * module that is not a regular file addr2line reads, addr2line missing (one warning), dying or
 * not answering in time (one warning; its module is given up). Never opens a FIFO or device, never blocks past
 * the timeout. */
int symbolize_addr2line(void *ctx, const char *module, uint64_t offset, char *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TOOLS_SYMBOLIZE_H */
