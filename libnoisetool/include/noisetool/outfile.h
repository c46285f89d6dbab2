/* Output files written atomically: a temporary file beside the target, renamed on commit,
 * removed on abort, so a failed run never leaves a partial file. */
#ifndef NOISETOOL_OUTFILE_H
#define NOISETOOL_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_PATH_MAX 4096 /* Linux PATH_MAX, without needing POSIX feature macros */

struct nt_outfile {
	FILE *f;
	bool is_stdout;          /* path "-" */
	bool no_overwrite;       /* commit fails with -EEXIST when the target exists */
	char path[NT_PATH_MAX];
	char tmp_path[NT_PATH_MAX];
};

/* Open a temporary file in path's directory (or stdout for "-"). Returns 0, -EINVAL, -errno of
 * the failing call (e.g. -ENOENT for a missing directory, -EACCES). */
NT_API int nt_outfile_open(struct nt_outfile *of, const char *path, bool no_overwrite);

/* Flush, fsync and rename over the target. On any failure the temporary file is removed and
 * -errno returned (-EEXIST when no_overwrite and the target exists). */
NT_API int nt_outfile_commit(struct nt_outfile *of);

/* Close and remove the temporary file. Safe to call after commit or twice. */
NT_API void nt_outfile_abort(struct nt_outfile *of);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_OUTFILE_H */
