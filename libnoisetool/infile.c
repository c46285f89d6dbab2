/* Inputs read whole, without blocking on a FIFO or reading past a limit
 * (noisetool-private/infile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool-private/infile.h>

int nt_infile_read_fd(int fd, size_t size_hint, size_t max_bytes, char **buf, size_t *len)
{
	if (fd < 0 || !buf || !len)
		return -EINVAL;
	*buf = NULL;
	*len = 0;
	/* Room for what is expected and the NUL; grown only when more comes, never past the
	 * limit (a byte beyond it is what tells a file that is too large). */
	size_t cap = size_hint && size_hint < max_bytes ? size_hint + 1 : 4096, n = 0;
	if (cap > max_bytes + 1)
		cap = max_bytes + 1;
	char *b = malloc(cap);
	if (!b)
		return -ENOMEM;
	int rc = 0;
	for (;;) {
		char *at = b + n, one;
		size_t want = cap - 1 - n;
		if (want == 0) { /* full: grow only when there is more */
			at = &one;
			want = 1;
		}
		ssize_t got = read(fd, at, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			rc = got < 0 ? -errno : 0;
			break;
		}
		if (at == &one) {
			if (n >= max_bytes) {
				rc = -EFBIG;
				break;
			}
			size_t more = cap * 2 < max_bytes + 1 ? cap * 2 : max_bytes + 1;
			char *grown = realloc(b, more);
			if (!grown) {
				rc = -ENOMEM;
				break;
			}
			b = grown;
			cap = more;
			b[n] = one;
		}
		n += (size_t)got;
	}
	if (rc) {
		free(b);
		return rc;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

int nt_infile_read(const char *path, bool pipes, size_t max_bytes, char **buf, size_t *len)
{
	if (!path || !buf || !len)
		return -EINVAL;
	*buf = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = fstat(fd, &st) != 0 ? -errno
		 : S_ISDIR(st.st_mode) ? -EISDIR
		 : S_ISREG(st.st_mode) ? ((uint64_t)st.st_size > max_bytes ? -EFBIG : 0)
		 : S_ISFIFO(st.st_mode) && pipes ? 0
							: -ENODEV;
	/* A pipe's writer may not have written yet: wait for it (a FIFO without one is at its
	 * end at once, having been opened without waiting). */
	int fl = rc == 0 && S_ISFIFO(st.st_mode) ? fcntl(fd, F_GETFL) : 0;
	if (fl < 0 || (fl & O_NONBLOCK && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0))
		rc = -errno;
	if (rc == 0)
		rc = nt_infile_read_fd(fd, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0, max_bytes,
				       buf, len);
	close(fd);
	return rc;
}
