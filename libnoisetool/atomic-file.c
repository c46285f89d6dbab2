/* A file seen whole or not at all (noisetool-private/atomic-file.h): a temporary file beside the final name,
 * fsync'ed, then linked (never replacing) or renamed (replacing) to that name. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <noisetool-private/atomic-file.h>

/* A temporary name must fit NAME_MAX (255): the final name is cut to this many bytes before
 * ".tmp.PID.XXXXXX" is appended. */
#define TMP_BASE_MAX 200

/* Names tried for a unique temporary file before giving up: of 62^6 suffixes, 100 taken in a
 * row mean that something else is wrong. */
#define UNIQUE_TRIES 100

/* splitmix64: the next of a sequence of well-mixed 64-bit numbers. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* PATH.tmp.PID.XXXXXX, created exclusively: open(O_EXCL) refuses a name that exists, a
 * symlink included, so the file is always a new one of ours; mode less the umask. */
static int create_unique(const char *path, unsigned mode, char *tmp, size_t size)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path) + 1 : 0;
	const char *base = path + dir_len;
	int base_len = strlen(base) < TMP_BASE_MAX ? (int)strlen(base) : TMP_BASE_MAX;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t state = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
			 ((uint64_t)getpid() << 32) + (uint64_t)(uintptr_t)tmp;
	for (int attempt = 0; attempt < UNIQUE_TRIES; attempt++) {
		char suffix[7];
		uint64_t r = next_random(&state);
		for (int i = 0; i < 6; i++, r /= 62)
			suffix[i] = chars[r % 62];
		suffix[6] = '\0';
		int n = snprintf(tmp, size, "%.*s%.*s.tmp.%ld.%s", dir_len, path, base_len, base,
				 (long)getpid(), suffix);
		if (n < 0 || (size_t)n >= size)
			return -ENAMETOOLONG;
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* PATH.tmp into tmp. 0 or -ENAMETOOLONG. */
static int fixed_name(const char *path, char *tmp, size_t size)
{
	int n = snprintf(tmp, size, "%s.tmp", path);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int nt_atomic_file_create(const char *path, enum nt_atomic_file_tmp kind, unsigned mode,
			  char *tmp, size_t tmp_size)
{
	if (!path || !tmp || tmp_size == 0)
		return -EINVAL;
	int fd;
	if (kind == NT_ATOMIC_FILE_TMP_UNIQUE) {
		fd = create_unique(path, mode, tmp, tmp_size);
	} else {
		fd = fixed_name(path, tmp, tmp_size);
		if (fd == 0) {
			fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
			if (fd < 0)
				fd = -errno;
		}
	}
	if (fd < 0)
		tmp[0] = '\0';
	return fd;
}

int nt_atomic_file_open_fixed(const char *path)
{
	char tmp[NT_ATOMIC_FILE_TMP_MAX];
	if (!path)
		return -EINVAL;
	int rc = fixed_name(path, tmp, sizeof tmp);
	if (rc)
		return rc;
	/* The file another process made with O_EXCL, never a symlink: one put in its place (a
	 * directory others may write) is refused (-ELOOP), not written through. */
	int fd = open(tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd >= 0 ? fd : -errno;
}

int nt_atomic_file_close(int fd)
{
	int rc = fsync(fd) == 0 ? 0 : -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int nt_atomic_file_fclose(FILE *f)
{
	int rc = 0;
	errno = 0;
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)
		rc = -(errno ? errno : EIO);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int nt_atomic_file_link(const char *tmp, const char *path)
{
	int rc = link(tmp, path) == 0 ? 0 : -errno;
	unlink(tmp);
	return rc;
}

int nt_atomic_file_rename(const char *tmp, const char *path)
{
	if (rename(tmp, path) == 0)
		return 0;
	int rc = -errno;
	unlink(tmp);
	return rc;
}

void nt_atomic_file_discard(int fd, const char *tmp)
{
	if (fd >= 0)
		close(fd);
	if (tmp && tmp[0])
		unlink(tmp);
}
