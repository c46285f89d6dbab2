/* Output files: classify what a path names, check it before the work, then write a regular
 * file atomically (atomic-file.c: temporary file, fsync, rename or link) and a device, FIFO or
 * descriptor in place. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool/outfile.h>

#include <noisetool-private/atomic-file.h>

/* Linux follows at most 40 symlinks in one lookup; we follow them one by one, as many. */
#define MAX_SYMLINKS 40

static void set_why(char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t size, const char *fmt, ...)
{
	if (!why || size == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

/* The directory part of path: "." for a bare name, "/" for a name in the root. */
static int dir_of(const char *path, char *out, size_t size)
{
	const char *slash = strrchr(path, '/');
	int n;
	if (!slash)
		n = snprintf(out, size, ".");
	else if (slash == path)
		n = snprintf(out, size, "/");
	else
		n = snprintf(out, size, "%.*s", (int)(slash - path), path);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* dir + "/" + name, without doubling the slash of the root. */
static int join(const char *dir, const char *name, char *out, size_t size)
{
	size_t len = strlen(dir);
	int n = snprintf(out, size, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The descriptor a path names without being a file of its own (bash and gawk treat these
 * names the same way), or -1. Opening /proc/self/fd/1 by name would reopen whatever stdout is:
 * a regular file behind it would then be replaced, or rewritten from offset 0. */
static int fd_name(const char *path)
{
	static const struct {
		const char *name;
		int fd;
	} std_names[] = { { "/dev/stdin", 0 }, { "/dev/stdout", 1 }, { "/dev/stderr", 2 } };
	static const char *const fd_dirs[] = { "/dev/fd/", "/proc/self/fd/",
					       "/proc/thread-self/fd/" };
	for (size_t i = 0; i < sizeof std_names / sizeof std_names[0]; i++)
		if (strcmp(path, std_names[i].name) == 0)
			return std_names[i].fd;
	for (size_t i = 0; i < sizeof fd_dirs / sizeof fd_dirs[0]; i++) {
		size_t len = strlen(fd_dirs[i]);
		if (strncmp(path, fd_dirs[i], len) != 0)
			continue;
		const char *digits = path + len;
		if (!*digits || strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 9)
			return -1;
		return atoi(digits);
	}
	return -1;
}

static int resolve_fd(const char *path, int fd, struct nt_outfile_target *t, char *why,
		      size_t why_size)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
		set_why(why, why_size, "cannot write '%s': descriptor %d is not open%s", path, fd,
			flags < 0 ? "" : " for writing");
		return -EBADF;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		set_why(why, why_size, "cannot write '%s': %s", path, strerror(e));
		return -e;
	}
	t->kind = NT_OUTFILE_FD;
	t->fd = fd;
	t->exists = true;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->is_regular = S_ISREG(st.st_mode);
	snprintf(t->path, sizeof t->path, "%s", path);
	return 0;
}

/* Whether two names lie in one directory: the directories their paths name (symlinks among the
 * directories followed, as every lookup does) are one inode. A missing directory is none. */
static bool same_dir(const char *a, const char *b)
{
	char da[NT_PATH_MAX], db[NT_PATH_MAX];
	struct stat sa, sb;
	return dir_of(a, da, sizeof da) == 0 && dir_of(b, db, sizeof db) == 0 &&
	       stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Follow path's symlinks one by one into cur (NT_PATH_MAX bytes), stopping at a descriptor
 * name (*fd set), at a file that is no symlink (*exists, st) or at a name that does not exist
 * (a new file, or a dangling symlink's target). Every link must be the caller's and lead to a
 * name in its own directory (doc/noisetool.md, "Outputs"): a link another user planted in a
 * shared directory (/tmp) would otherwise make a root run replace /etc/shadow, or create a file
 * where that user chose. A refused link is -EACCES, as the kernel's fs.protected_symlinks
 * refuses one, with the reason in why. */
static int follow_links(const char *path, char *cur, int *fd, bool *exists, struct stat *st,
			char *why, size_t why_size)
{
	snprintf(cur, NT_PATH_MAX, "%s", path);
	*fd = -1;
	for (int hops = 0;; hops++) {
		if ((*fd = fd_name(cur)) >= 0)
			return 0;
		if (lstat(cur, st) != 0) {
			if (errno != ENOENT)
				return -errno;
			*exists = false;
			return 0;
		}
		if (!S_ISLNK(st->st_mode)) {
			*exists = true;
			return 0;
		}
		if (hops == MAX_SYMLINKS)
			return -ELOOP;
		if (st->st_uid != geteuid()) {
			set_why(why, why_size,
				"cannot write '%s': '%s' is a symlink of uid %ld, not yours (uid %ld); "
				"an output is never written through another user's symlink",
				path, cur, (long)st->st_uid, (long)geteuid());
			return -EACCES;
		}
		char link[NT_PATH_MAX], dir[NT_PATH_MAX], next[NT_PATH_MAX];
		ssize_t n = readlink(cur, link, sizeof link - 1);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOENT;
		link[n] = '\0';
		if (link[0] == '/') {
			snprintf(next, sizeof next, "%s", link);
		} else if (dir_of(cur, dir, sizeof dir) != 0 || join(dir, link, next, sizeof next) != 0) {
			return -ENAMETOOLONG;
		}
		if (!same_dir(cur, next)) {
			dir_of(cur, dir, sizeof dir);
			set_why(why, why_size,
				"cannot write '%s': the symlink '%s' leads to '%s', outside its directory "
				"'%s'; an output is written through a symlink only to a file beside it "
				"(name the file itself)",
				path, cur, link, dir);
			return -EACCES;
		}
		snprintf(cur, NT_PATH_MAX, "%s", next);
	}
}

/* Where a new or regular file is written: its directory made absolute, its own name. */
static int locate(const char *path, const char *cur, struct nt_outfile_target *t, char *why,
		  size_t why_size)
{
	char dir[NT_PATH_MAX], abs_dir[PATH_MAX];
	const char *base = base_of(cur);
	if (!*base) {
		set_why(why, why_size, "cannot write '%s': the name ends in '/' (a directory)", path);
		return -EISDIR;
	}
	if (dir_of(cur, dir, sizeof dir) != 0) {
		set_why(why, why_size, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	if (!realpath(dir, abs_dir)) {
		int e = errno;
		if (e == ENOENT)
			set_why(why, why_size, "cannot write '%s': directory '%s' does not exist", path,
				dir);
		else
			set_why(why, why_size, "cannot write '%s': directory '%s': %s", path, dir,
				strerror(e));
		return -e;
	}
	if (join(abs_dir, base, t->path, sizeof t->path) != 0) {
		set_why(why, why_size, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	return 0;
}

int nt_outfile_resolve(const char *path, struct nt_outfile_target *t, char *why, size_t why_size)
{
	if (!path || !*path || !t) {
		set_why(why, why_size, "no output path given");
		return -EINVAL;
	}
	memset(t, 0, sizeof *t);
	t->fd = -1;
	if (strcmp(path, "-") == 0)
		return resolve_fd(path, STDOUT_FILENO, t, why, why_size);
	if (strlen(path) >= NT_PATH_MAX) {
		set_why(why, why_size, "cannot write '%.64s...': %s", path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}

	char cur[NT_PATH_MAX];
	int fd;
	bool exists = false;
	struct stat st;
	if (why && why_size)
		why[0] = '\0';
	int rc = follow_links(path, cur, &fd, &exists, &st, why, why_size);
	if (rc && why && why_size && why[0])
		return rc; /* a refused link: follow_links said why */
	if (rc) {
		set_why(why, why_size, "cannot write '%s': %s", path, strerror(-rc));
		return rc;
	}
	if (fd >= 0)
		return resolve_fd(path, fd, t, why, why_size);
	bool magic = false;
	if (!exists && stat(path, &st) == 0) {
		/* The kernel finds a file where the links read as text lead nowhere: a /proc magic
		 * link of another process ("pipe:[1234]", a deleted file). Only a stream can be
		 * written through it; a file whose name is unknown cannot be replaced. */
		if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
			set_why(why, why_size, "cannot write '%s': its links lead to no file name", path);
			return -ENOENT;
		}
		exists = magic = true;
	}
	if (!exists) {
		t->kind = NT_OUTFILE_NEW;
		return locate(path, cur, t, why, why_size);
	}
	t->exists = true;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	if (S_ISDIR(st.st_mode)) {
		set_why(why, why_size, "cannot write '%s': it is a directory; name a file", path);
		return -EISDIR;
	}
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		/* The node the checked links lead to, opened without following a link (one put
		 * there since is refused); a magic link only by its own name, which the kernel
		 * follows (it is in /proc, where no one plants a link). */
		t->kind = NT_OUTFILE_STREAM;
		snprintf(t->path, sizeof t->path, "%s", magic ? path : cur);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		set_why(why, why_size,
			"cannot write '%s': it is a %s; name a file, a character device, a FIFO or -",
			path, S_ISBLK(st.st_mode) ? "block device" : "socket");
		return -EINVAL;
	}
	t->kind = NT_OUTFILE_REPLACE;
	t->is_regular = true;
	t->mode = st.st_mode & 07777;
	return locate(path, cur, t, why, why_size);
}

int nt_outfile_check(const char *path, const char *const *inputs, size_t ninputs, char *why,
		     size_t why_size)
{
	if (ninputs && !inputs) {
		set_why(why, why_size, "no input paths given");
		return -EINVAL;
	}
	struct nt_outfile_target t;
	int rc = nt_outfile_resolve(path, &t, why, why_size);
	if (rc)
		return rc;
	if (t.kind == NT_OUTFILE_NEW || t.kind == NT_OUTFILE_REPLACE) {
		/* The temporary file is created there, then renamed. */
		char dir[NT_PATH_MAX];
		dir_of(t.path, dir, sizeof dir);
		if (access(dir, W_OK | X_OK) != 0) {
			int e = errno;
			set_why(why, why_size, "cannot write '%s': directory '%s' is not writable: %s",
				path, dir, strerror(e));
			return -e;
		}
	}
	/* Writing a device, a FIFO or a terminal destroys no input; a regular file would. */
	if (!t.exists || !t.is_regular)
		return 0;
	for (size_t i = 0; i < ninputs; i++) {
		struct stat st;
		if (!inputs[i])
			continue;
		int r = strcmp(inputs[i], "-") == 0 ? fstat(STDIN_FILENO, &st) : stat(inputs[i], &st);
		if (r != 0 || !S_ISREG(st.st_mode))
			continue;
		if ((uint64_t)st.st_dev == t.dev && (uint64_t)st.st_ino == t.ino) {
			set_why(why, why_size,
				"cannot write '%s': it is the input '%s' (the same file); name another "
				"output", path, inputs[i]);
			return -EINVAL;
		}
	}
	return 0;
}

bool nt_outfile_collide(const char *a, const char *b)
{
	/* Two targets of ~4 KiB each: on the heap, this is no hot path. */
	struct nt_outfile_target *t = malloc(2 * sizeof *t);
	if (!t)
		return false;
	bool same = nt_outfile_resolve(a, &t[0], NULL, 0) == 0 &&
		    nt_outfile_resolve(b, &t[1], NULL, 0) == 0 &&
		    (t[0].kind == NT_OUTFILE_NEW || t[0].kind == NT_OUTFILE_REPLACE) &&
		    (t[1].kind == NT_OUTFILE_NEW || t[1].kind == NT_OUTFILE_REPLACE) &&
		    strcmp(t[0].path, t[1].path) == 0;
	free(t);
	return same;
}

/* A directory already there (mkdir's error then does not matter: EEXIST, or EACCES/EROFS from
 * a parent we need not write). */
static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int nt_outfile_mkdirs(const char *path, char *why, size_t why_size)
{
	if (!path || !*path) {
		set_why(why, why_size, "no directory given");
		return -EINVAL;
	}
	char buf[NT_PATH_MAX];
	if (strlen(path) >= sizeof buf) {
		set_why(why, why_size, "cannot create '%.64s...': %s", path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	snprintf(buf, sizeof buf, "%s", path);
	/* The directory's own name may be a symlink to a directory anywhere, but only the
	 * caller's: another user's link in a shared directory would choose where the outputs
	 * go, and so which files of that name are replaced (doc/noisetool.md, "Outputs"). */
	size_t len = strlen(buf);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	struct stat st;
	if (lstat(buf, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid()) {
		set_why(why, why_size,
			"cannot write in '%s': it is a symlink of uid %ld, not yours (uid %ld); an "
			"output is never written through another user's symlink",
			path, (long)st.st_uid, (long)geteuid());
		return -EACCES;
	}
	snprintf(buf, sizeof buf, "%s", path);
	/* Each prefix ending before a '/', then the whole path. */
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		int e = mkdir(buf, 0755) == 0 ? 0 : errno;
		if (e && !is_dir(buf)) {
			e = e == EEXIST ? ENOTDIR : e;
			if (saved)
				set_why(why, why_size, "cannot create '%s': '%s': %s", path, buf,
					strerror(e));
			else
				set_why(why, why_size, "cannot create '%s': %s", path, strerror(e));
			return -e;
		}
		*p = saved;
		if (!saved)
			break;
	}
	if (access(path, W_OK | X_OK) != 0) {
		int e = errno;
		set_why(why, why_size, "cannot write in '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}

/* A descriptor: stdout and stderr through their FILEs, so that what the command prints there
 * stays in order; another descriptor through a FILE of its own on a duplicate. */
static int open_fd(struct nt_outfile *of, int fd)
{
	if (fd == STDOUT_FILENO) {
		of->f = stdout;
		of->is_stdout = true;
		return 0;
	}
	if (fd == STDERR_FILENO) {
		of->f = stderr;
		return 0;
	}
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd < 0 || !(of->f = fdopen(dup_fd, "w"))) {
		int e = errno;
		if (dup_fd >= 0)
			close(dup_fd);
		set_why(of->why, sizeof of->why, "cannot write '%s': %s", of->path, strerror(e));
		return -e;
	}
	return 0;
}

/* A character device or a FIFO, opened without O_CREAT or O_TRUNC. O_NONBLOCK makes the open
 * of a FIFO without a reader fail at once (ENXIO) instead of waiting forever; the writes then
 * block as usual, a reader being there. O_NOFOLLOW: the node itself, never a symlink put in
 * its place since nt_outfile_resolve checked the links that lead to it (ELOOP); only a /proc
 * magic link is followed (nt_outfile_resolve). */
static int open_stream(struct nt_outfile *of)
{
	bool magic = strncmp(of->target, "/proc/", 6) == 0;
	int fd = open(of->target,
		      O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (magic ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		int e = errno;
		struct stat st;
		if (e == ENXIO && stat(of->target, &st) == 0 && S_ISFIFO(st.st_mode))
			set_why(of->why, sizeof of->why,
				"cannot write '%s': no process is reading the FIFO; start its reader "
				"first", of->path);
		else if (e == ELOOP)
			set_why(of->why, sizeof of->why,
				"cannot write '%s': '%s' became a symlink while being opened (not "
				"followed)", of->path, of->target);
		else
			set_why(of->why, sizeof of->why, "cannot write '%s': %s", of->path,
				strerror(e));
		return -e;
	}
	/* Between the classification and the open the name may have been replaced: whatever
	 * is open now must still be written in place without harm. */
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		set_why(of->why, sizeof of->why,
			"cannot write '%s': it changed while being opened", of->path);
		rc = -EAGAIN;
	} else {
		int flags = fcntl(fd, F_GETFL);
		if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
		    !(of->f = fdopen(fd, "w"))) {
			rc = -errno;
			set_why(of->why, sizeof of->why, "cannot write '%s': %s", of->path,
				strerror(errno));
		}
	}
	if (rc)
		close(fd);
	return rc;
}

/* A new or regular file: a temporary file beside the target (noisetool-private/atomic-file.h), whose name holds
 * the pid: two jobs that write the same output never touch each other's temporary file. A new
 * file gets 0644, a replaced one keeps its bits, whatever the umask. */
static int open_temp(struct nt_outfile *of, const struct nt_outfile_target *t)
{
	int fd = nt_atomic_file_create(t->path, NT_ATOMIC_FILE_TMP_UNIQUE, 0600, of->tmp_path,
				       sizeof of->tmp_path);
	if (fd < 0) {
		char dir[NT_PATH_MAX];
		dir_of(t->path, dir, sizeof dir);
		if (fd == -ENAMETOOLONG)
			set_why(of->why, sizeof of->why, "cannot write '%s': %s", of->path,
				strerror(ENAMETOOLONG));
		else
			set_why(of->why, sizeof of->why,
				"cannot write '%s': cannot create a file in '%s': %s", of->path, dir,
				strerror(-fd));
		return fd;
	}
	fchmod(fd, t->kind == NT_OUTFILE_REPLACE ? (mode_t)t->mode : 0644);
	of->f = fdopen(fd, "w");
	if (!of->f) {
		int e = errno;
		nt_atomic_file_discard(fd, of->tmp_path);
		of->tmp_path[0] = '\0';
		set_why(of->why, sizeof of->why, "cannot write '%s': %s", of->path, strerror(e));
		return -e;
	}
	return 0;
}

int nt_outfile_open(struct nt_outfile *of, const char *path, bool no_overwrite)
{
	if (!of)
		return -EINVAL;
	memset(of, 0, sizeof *of);
	of->fd = -1;
	if (!path || !*path) {
		set_why(of->why, sizeof of->why, "no output path given");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof of->path) {
		set_why(of->why, sizeof of->why, "cannot write '%.64s...': %s", path,
			strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	snprintf(of->path, sizeof of->path, "%s", path);
	struct nt_outfile_target t;
	int rc = nt_outfile_resolve(path, &t, of->why, sizeof of->why);
	if (rc)
		return rc;
	of->kind = t.kind;
	of->fd = t.fd;
	of->no_overwrite = no_overwrite;
	snprintf(of->target, sizeof of->target, "%s", t.path);
	switch (t.kind) {
	case NT_OUTFILE_FD:
		return open_fd(of, t.fd);
	case NT_OUTFILE_STREAM:
		return open_stream(of);
	case NT_OUTFILE_REPLACE:
		if (no_overwrite) {
			set_why(of->why, sizeof of->why, "cannot write '%s': it exists (never overwritten)",
				path);
			return -EEXIST;
		}
		return open_temp(of, &t);
	case NT_OUTFILE_NEW:
		return open_temp(of, &t);
	}
	return -EINVAL;
}

/* Flush a stream or descriptor output and close its own FILE (never stdout or stderr). */
static int commit_in_place(struct nt_outfile *of)
{
	errno = 0;
	int rc = fflush(of->f) == 0 && !ferror(of->f) ? 0 : -(errno ? errno : EIO);
	if (of->f != stdout && of->f != stderr && fclose(of->f) != 0 && rc == 0)
		rc = -(errno ? errno : EIO);
	of->f = NULL;
	return rc;
}

/* A new or regular file: on the disk, then at the target's name: link() with no_overwrite (a
 * target that appeared meanwhile is kept), else rename() over it. */
static int commit_atomic(struct nt_outfile *of)
{
	int rc = nt_atomic_file_fclose(of->f);
	of->f = NULL;
	if (rc == 0)
		rc = of->no_overwrite ? nt_atomic_file_link(of->tmp_path, of->target)
				      : nt_atomic_file_rename(of->tmp_path, of->target);
	else
		unlink(of->tmp_path);
	of->tmp_path[0] = '\0';
	return rc;
}

int nt_outfile_commit(struct nt_outfile *of)
{
	if (!of || !of->f)
		return -EINVAL;
	bool atomic = of->kind == NT_OUTFILE_NEW || of->kind == NT_OUTFILE_REPLACE;
	int rc = atomic ? commit_atomic(of) : commit_in_place(of);
	if (rc)
		set_why(of->why, sizeof of->why, "writing '%s' failed: %s", of->path, strerror(-rc));
	return rc;
}

void nt_outfile_abort(struct nt_outfile *of)
{
	if (!of)
		return;
	if (of->f && of->f != stdout && of->f != stderr)
		fclose(of->f);
	of->f = NULL;
	if (of->tmp_path[0])
		unlink(of->tmp_path);
	of->tmp_path[0] = '\0';
}
