/* One `addr2line -f -C -e MODULE` coprocess (binutils): an address a line on its stdin, two
 * lines back on its stdout (function, file:line), flushed after each answer. */
#ifndef TOOLS_ADDR2LINE_H
#define TOOLS_ADDR2LINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct addr2line_proc {
	pid_t pid;
	int to_fd;        /* its stdin (ours non-blocking, close-on-exec) */
	int from_fd;      /* its stdout (ours non-blocking, close-on-exec) */
	uint64_t answers; /* addresses it answered */
};

/* Start `program -f -C -e module` (program looked up in PATH) with stderr to /dev/null.
 * 0; -ENOENT or -EACCES: program cannot be run; -EMFILE, -ENOMEM, -EAGAIN: no pipe or process. */
int addr2line_start(struct addr2line_proc *p, const char *program, const char *module);

/* Ask p for addr and read its two lines into fn and loc (without the newline, truncated to
 * their sizes, which must be >= 1), waiting at most timeout_ms for the whole answer.
 * 0; -ETIMEDOUT: no full answer in time; -EPIPE: it exited (or closed its stdout) before
 * answering; -EPROTO: more output than one answer; -EIO: another read or write error. After
 * any error the coprocess is unusable: stop it. */
int addr2line_ask(struct addr2line_proc *p, uint64_t addr, int timeout_ms, char *fn, size_t fnsz,
		  char *loc, size_t locsz);

/* Close the pipes and reap the process. With grace_ms > 0 it has that long to exit on its own;
 * after that, or at once with grace_ms == 0, it is killed. status (may be NULL) gets the wait
 * status. 0: it exited on its own; 1: it was killed here; -1: p had no process. */
int addr2line_stop(struct addr2line_proc *p, int grace_ms, int *status);

#endif /* TOOLS_ADDR2LINE_H */
