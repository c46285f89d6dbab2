/* Small private helpers shared by the core. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <noisetool/ntlog.h>

#include "util.h"

int nt_read_first_line(const char *path, char *buf, size_t size)
{
	if (!buf || size == 0)
		return -EINVAL;
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return (int)strlen(buf);
}

int nt_site_identity_cmp(const struct nt_log_site *a, const struct nt_log_site *b)
{
	int c = strcmp(a->function, b->function);
	if (c)
		return c;
	const char *ma = strrchr(a->module, '/') ? strrchr(a->module, '/') + 1 : a->module;
	const char *mb = strrchr(b->module, '/') ? strrchr(b->module, '/') + 1 : b->module;
	if ((c = strcmp(ma, mb)))
		return c;
	return (a->offset > b->offset) - (a->offset < b->offset);
}
