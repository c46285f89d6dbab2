/* Output files that cannot destroy anything: what a path names decides how it is written, and
 * every rule can be checked before the work that produces the output starts.
 *
 * The rules (doc/noisetool.md, "Outputs"):
 * - "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: the open descriptor (fd 1 for
 *   "-" and /dev/stdout, through stdout's FILE), written in place, never opened by name.
 * - A character device or a FIFO (also through symlinks): opened O_WRONLY without O_CREAT or
 *   O_TRUNC (and O_NOFOLLOW) and written in place, never replaced. A FIFO is opened with
 *   O_NONBLOCK, so a FIFO without a reader fails at once (-ENXIO) instead of blocking.
 * - A regular file or a new name: written to a temporary file NAME.tmp.PID.XXXXXX in the
 *   directory of the file actually written, fsync'ed and renamed over it. A symlink is written
 *   through: its target (every link followed, the directory made absolute) is replaced, the
 *   link stays. A replaced file keeps its permission bits; a new file gets 0644.
 * - A symlink is followed only when it is the caller's (its owner the effective uid) and leads
 *   to a name in its own directory; else the output is refused (-EACCES), so that a link
 *   another user planted in a shared directory never makes the command replace or create a
 *   file elsewhere.
 * - Refused: a directory, a missing or unwritable directory, a block device, a socket; and (by
 *   nt_outfile_check) a regular file that is one of the command's inputs: same st_dev and
 *   st_ino, so also through a symlink or a hard link. */
#ifndef NOISETOOL_OUTFILE_H
#define NOISETOOL_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_PATH_MAX 4096 /* Linux PATH_MAX, without needing POSIX feature macros */
#define NT_OUTFILE_WHY_MAX 512 /* room for a one-line reason naming two paths */

/* What an output path names, and so how it is written. */
enum nt_outfile_kind {
	NT_OUTFILE_NEW = 0,	/* no file yet: created atomically in its directory */
	NT_OUTFILE_REPLACE = 1, /* an existing regular file: replaced atomically */
	NT_OUTFILE_STREAM = 2,	/* a character device or a FIFO: written in place */
	NT_OUTFILE_FD = 3,	/* "-" or a name of an open descriptor: written in place */
};

/* Where an output path leads (nt_outfile_resolve). */
struct nt_outfile_target {
	enum nt_outfile_kind kind;
	int fd;			/* NT_OUTFILE_FD: the descriptor; else -1 */
	char path[NT_PATH_MAX]; /* NEW, REPLACE: the file written, every symlink followed, its
				 * directory absolute; STREAM: the node, every symlink followed
				 * (a /proc magic link: the path as given); FD: the path as given */
	unsigned mode;		/* REPLACE: the permission bits the new file keeps */
	bool exists;		/* REPLACE, STREAM, FD: dev and ino are the file's */
	uint64_t dev, ino;
	bool is_regular;	/* the file (or the descriptor's file) is a regular file */
};

/* Classify path without changing anything (no file is opened, created or removed; a FIFO is
 * not opened, so its reader sees nothing). Returns 0, or -errno with a one-line reason in why
 * ("cannot write 'PATH': ..."): -EINVAL (path or t NULL, path empty, a block device or a
 * socket), -EISDIR (a directory, or a new name ending in '/'), -ENOENT (a missing directory),
 * -EACCES (a symlink of another user, or one that leads out of its directory), -ENOTDIR,
 * -ELOOP, -ENAMETOOLONG (from following the path), -EBADF (a descriptor name whose descriptor
 * is not open for writing). why may be NULL. */
NT_API int nt_outfile_resolve(const char *path, struct nt_outfile_target *t, char *why,
			      size_t why_size);

/* Every rule, before any work: nt_outfile_resolve, then for a new or replaced file that its
 * directory is writable (-EACCES, -EROFS), then that a regular file written is none of the
 * ninputs paths in inputs (compared by st_dev and st_ino; "-" in inputs is stdin; an input
 * that does not exist is skipped: its reader reports it) -- -EINVAL naming both paths when it
 * is. Opens nothing. Returns 0 or -errno with the reason in why (may be NULL). */
NT_API int nt_outfile_check(const char *path, const char *const *inputs, size_t ninputs,
			    char *why, size_t why_size);

/* Whether two outputs of one command would replace the same file (each rename destroying the
 * other's output), e.g. --json x --trace x, or x and a symlink to x. Streams and descriptors
 * are never a collision (both outputs are written, one after the other). False when either
 * path is refused by nt_outfile_resolve (its own check reports that). */
NT_API bool nt_outfile_collide(const char *a, const char *b);

/* Create the output directory path with its missing parents (mkdir -p, mode 0755), then check
 * that it is a writable directory. path itself may be a symlink to a directory, when it is the
 * caller's (its owner the effective uid). Returns 0, or -errno with a one-line reason in why
 * ("cannot create 'PATH': ..."; may be NULL): -EINVAL (path NULL or empty), -ENOTDIR (path or a
 * parent is not a directory), -EACCES (also: path is another user's symlink), -EROFS,
 * -ENAMETOOLONG, or mkdir's error. */
NT_API int nt_outfile_mkdirs(const char *path, char *why, size_t why_size);

struct nt_outfile {
	FILE *f;
	bool is_stdout;		 /* written through stdout's FILE ("-", /dev/stdout) */
	bool no_overwrite;	 /* commit fails with -EEXIST when the target exists */
	enum nt_outfile_kind kind;
	int fd;			 /* NT_OUTFILE_FD: the descriptor named */
	char path[NT_PATH_MAX];	 /* as given, for messages */
	char target[NT_PATH_MAX]; /* the file renamed over (NEW, REPLACE) or opened (STREAM) */
	char tmp_path[NT_PATH_MAX];
	char why[NT_OUTFILE_WHY_MAX]; /* the reason of the last failure, one line */
};

/* Open an output by the rules above: for a new or regular file a temporary file beside the
 * target, for a device or FIFO the file itself, for a descriptor name that descriptor. Returns
 * 0, or -errno with the reason in of->why: the errors of nt_outfile_resolve, -EEXIST when
 * no_overwrite and a regular file exists, -ENXIO for a FIFO without a reader, -ELOOP when a
 * device's or FIFO's name became a symlink after the check, -errno of the failing call (e.g.
 * -EACCES for an unwritable directory). no_overwrite does not apply to
 * devices, FIFOs and descriptors: they are written, never replaced. */
NT_API int nt_outfile_open(struct nt_outfile *of, const char *path, bool no_overwrite);

/* Finish the output: flush; for a new or regular file also fsync and rename over the target
 * (link() with no_overwrite, so a target that appeared meanwhile is kept). On any failure the
 * temporary file is removed and -errno returned with the reason in of->why (-EEXIST when
 * no_overwrite and the target exists). */
NT_API int nt_outfile_commit(struct nt_outfile *of);

/* Close and remove the temporary file. Safe to call after commit or twice. What was already
 * written to a device, a FIFO or a descriptor stays written. */
NT_API void nt_outfile_abort(struct nt_outfile *of);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_OUTFILE_H */
