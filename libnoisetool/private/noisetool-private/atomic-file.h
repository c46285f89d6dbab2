/* A file that is seen whole or not at all: written under a temporary name beside its final
 * name, put on the disk (fsync), then given its final name with link(), which never replaces a
 * file (a job log; an output that must not overwrite), or with rename(), which replaces one (an
 * output written over its old self). The one writer of this kind for the command's outputs
 * (outfile.c) and the wrapper library's job logs (wrappers/logwrite.c). Private to the core
 * and the wrapper library. */
#ifndef NOISETOOL_PRIVATE_ATOMIC_FILE_H
#define NOISETOOL_PRIVATE_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

#include <noisetool/outfile.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a temporary name: the final name (at most NT_PATH_MAX) and its suffix. */
#define NT_ATOMIC_FILE_TMP_MAX (NT_PATH_MAX + 32)

/* How the temporary name is made from the final name PATH. */
enum nt_atomic_file_tmp {
	/* PATH.tmp.PID.XXXXXX, PATH's own name cut to 200 bytes so that it fits NAME_MAX: no
	 * other writer of PATH, in this process or another, ever opens it. */
	NT_ATOMIC_FILE_TMP_UNIQUE,
	/* PATH.tmp, created only when it does not exist: one writer of PATH at a time, and the
	 * other processes of that writer (the ranks of a job) open it by name
	 * (nt_atomic_file_open_fixed). */
	NT_ATOMIC_FILE_TMP_FIXED,
};

/* Create PATH's temporary file, empty, open for writing (O_CLOEXEC), with mode less the umask
 * as open(2) gives it; its name into tmp (tmp_size bytes, NT_ATOMIC_FILE_TMP_MAX is enough).
 * Returns its descriptor, or -errno with tmp "": -EINVAL (NULL arguments), -ENAMETOOLONG (the
 * name does not fit tmp), -EEXIST (TMP_FIXED: PATH.tmp exists; TMP_UNIQUE: 100 names in a row
 * taken), or open's error (-EACCES, -ENOENT for a missing directory, ...). */
int nt_atomic_file_create(const char *path, enum nt_atomic_file_tmp kind, unsigned mode,
			  char *tmp, size_t tmp_size);

/* Open for writing (O_CLOEXEC, O_NOFOLLOW) the TMP_FIXED temporary file of PATH that another
 * process created. Returns its descriptor, or -errno (-ENOENT when there is none, -ELOOP when
 * it is a symlink, -ENAMETOOLONG). */
int nt_atomic_file_open_fixed(const char *path);

/* Put what was written through fd on the disk (fsync) and close fd, whatever happens. 0, or
 * -errno of the first call that failed. */
int nt_atomic_file_close(int fd);

/* The same for a stdio stream over a temporary file: flush it, fsync, fclose. 0, or -errno of
 * the first step that failed (-EIO for a stream error without errno). */
int nt_atomic_file_fclose(FILE *f);

/* Give the temporary file tmp, complete and closed, its final name path with link(), which
 * fails rather than replace an existing file, then remove tmp whatever happened. 0, or -errno:
 * -EEXIST when path exists (it is kept as it is). */
int nt_atomic_file_link(const char *tmp, const char *path);

/* Give the temporary file tmp, complete and closed, its final name path with rename(), which
 * replaces a file there in one step; tmp is removed when that fails. 0, or -errno. */
int nt_atomic_file_rename(const char *tmp, const char *path);

/* Give up a temporary file: close fd (when >= 0) and remove tmp. */
void nt_atomic_file_discard(int fd, const char *tmp);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_ATOMIC_FILE_H */
