/* Inputs read whole that can neither hang the command nor grow it without bound: opened
 * without blocking (a FIFO that no one writes reads as empty at once, a device or socket is
 * refused unread), read up to a limit. The command's JSON documents (plot), the signatures
 * (simulate) and the traces the injector replays (run --inject trace=FILE) go through it.
 * Private to the core and the command. */
#ifndef NOISETOOL_PRIVATE_INFILE_H
#define NOISETOOL_PRIVATE_INFILE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most a document read whole may weigh: a signature or a detour --json is a few KiB (with
 * --json-detours a few MiB), so 64 MiB leaves room and still bounds what a wrong file (a
 * disk image, /dev/zero behind a pipe) costs. */
#define NT_INFILE_DOC_MAX (64u << 20)

/* The whole of path, a regular file or (with pipes) a FIFO or pipe (`<(cmd)`), NUL-terminated,
 * into *buf (malloc'd) and its length into *len. Opened O_NONBLOCK | O_NOCTTY: a FIFO without a
 * writer reads as empty instead of waiting for one; one with a writer is then read blocking, to
 * its end. Returns 0, or -errno with *buf NULL: -EINVAL (NULL arguments), -EISDIR (a
 * directory), -ENODEV (a device, a socket, or a FIFO without pipes: never read), -EFBIG (more
 * than max_bytes: from a regular file's size before any read, else at byte max_bytes + 1),
 * -ENOMEM, or open's and read's errors. */
int nt_infile_read(const char *path, bool pipes, size_t max_bytes, char **buf, size_t *len);

/* The same from an open descriptor (stdin, whatever it is), read to its end; fd is left open.
 * size_hint (0: unknown) sizes the first buffer. */
int nt_infile_read_fd(int fd, size_t size_hint, size_t max_bytes, char **buf, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_INFILE_H */
