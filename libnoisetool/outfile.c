/* Atomic output files: write to a temporary name, fsync, rename. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool/outfile.h>

int nt_outfile_open(struct nt_outfile *of, const char *path, bool no_overwrite)
{
	if (!of || !path || !*path)
		return -EINVAL;
	memset(of, 0, sizeof *of);
	if (strcmp(path, "-") == 0) {
		of->f = stdout;
		of->is_stdout = true;
		return 0;
	}
	if (strlen(path) + 16 >= sizeof of->path)
		return -ENAMETOOLONG;
	snprintf(of->path, sizeof of->path, "%s", path);
	if (no_overwrite && access(path, F_OK) == 0)
		return -EEXIST;
	snprintf(of->tmp_path, sizeof of->tmp_path, "%s.tmp.XXXXXX", path);
	int fd = mkostemp(of->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		of->tmp_path[0] = '\0';
		return -e;
	}
	fchmod(fd, 0644);
	of->f = fdopen(fd, "w");
	if (!of->f) {
		int e = errno;
		close(fd);
		unlink(of->tmp_path);
		of->tmp_path[0] = '\0';
		return -e;
	}
	of->no_overwrite = no_overwrite;
	return 0;
}

int nt_outfile_commit(struct nt_outfile *of)
{
	if (!of || !of->f)
		return -EINVAL;
	if (of->is_stdout) {
		int rc = fflush(stdout) == 0 && !ferror(stdout) ? 0 : -EIO;
		of->f = NULL;
		return rc;
	}
	int rc = 0;
	if (fflush(of->f) != 0 || ferror(of->f) || fsync(fileno(of->f)) != 0)
		rc = -(errno ? errno : EIO);
	if (fclose(of->f) != 0 && rc == 0)
		rc = -errno;
	of->f = NULL;
	if (rc == 0) {
		if (of->no_overwrite) {
			/* link() fails if the target appeared meanwhile: never overwrite. */
			if (link(of->tmp_path, of->path) != 0)
				rc = -errno;
			unlink(of->tmp_path);
		} else if (rename(of->tmp_path, of->path) != 0) {
			rc = -errno;
		}
	}
	if (rc != 0)
		unlink(of->tmp_path);
	of->tmp_path[0] = '\0';
	return rc;
}

void nt_outfile_abort(struct nt_outfile *of)
{
	if (!of)
		return;
	if (of->f && !of->is_stdout)
		fclose(of->f);
	of->f = NULL;
	if (of->tmp_path[0])
		unlink(of->tmp_path);
	of->tmp_path[0] = '\0';
}
