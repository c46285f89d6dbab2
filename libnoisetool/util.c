/* Small private helpers shared by the core. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
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

size_t nt_utf8_length(const char *s)
{
	static const uint32_t min[4] = { 0, 0x80, 0x800, 0x10000 };
	const unsigned char *p = (const unsigned char *)s;
	size_t k = p[0] < 0x80 ? 0 : (p[0] & 0xe0) == 0xc0 ? 1 : (p[0] & 0xf0) == 0xe0 ? 2
		   : (p[0] & 0xf8) == 0xf0 ? 3 : 4;
	if (k == 4)
		return 0;
	uint32_t cp = p[0] & (0x7f >> k);
	for (size_t i = 1; i <= k; i++) { /* a NUL is no continuation byte: never read past it */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k + 1;
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

const char *nt_fmt_duration(uint64_t ns, char buf[32])
{
	if (ns >= 1000000000u)
		snprintf(buf, 32, "%g s", (double)ns / 1e9);
	else if (ns >= 1000000u)
		snprintf(buf, 32, "%g ms", (double)ns / 1e6);
	else if (ns >= 1000u)
		snprintf(buf, 32, "%g us", (double)ns / 1e3);
	else
		snprintf(buf, 32, "%llu ns", (unsigned long long)ns);
	return buf;
}

int nt_parse_duration_ns(const char *s, size_t len, double bare_ns, uint64_t *out_ns)
{
	char buf[64];
	if (!s || !out_ns || len == 0 || len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || errno || !(v >= 0) || buf[0] == '-' || isspace((unsigned char)buf[0]))
		return -EINVAL;
	double scale;
	if (strcmp(end, "ns") == 0)
		scale = 1;
	else if (strcmp(end, "us") == 0)
		scale = 1e3;
	else if (*end == 0)
		scale = bare_ns;
	else if (strcmp(end, "ms") == 0)
		scale = 1e6;
	else if (strcmp(end, "s") == 0)
		scale = 1e9;
	else
		return -EINVAL;
	if (v * scale > 3600e9)
		return -EINVAL;
	*out_ns = (uint64_t)(v * scale + 0.5);
	return 0;
}

__attribute__((format(printf, 3, 0))) static void err_vset(char *err, size_t errsz,
							      const char *fmt, va_list ap)
{
	if (err && errsz)
		vsnprintf(err, errsz, fmt, ap);
}

void nt_err_set(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(err, errsz, fmt, ap);
	va_end(ap);
}

int nt_err_invalid(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(err, errsz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}
