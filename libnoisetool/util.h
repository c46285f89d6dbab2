/* Small private helpers shared by the core. */
#ifndef LIBNOISETOOL_UTIL_H
#define LIBNOISETOOL_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Read the first line of path into buf (newline stripped). Returns its length or -errno;
 * on failure buf is the empty string. */
int nt_read_first_line(const char *path, char *buf, size_t size);

/* A duration of len characters at s: a number with the suffix ns, us, ms or s, or a bare number
 * in units of bare_ns (1 = ns, 1e3 = us). Non-negative, at most an hour, rounded to whole ns.
 * Returns 0, or -EINVAL for anything else. */
int nt_parse_duration_ns(const char *s, size_t len, double bare_ns, uint64_t *out_ns);

/* ns as a short duration for a message into buf: "8 ms", "2.5 us", "800 ns". Returns buf. */
const char *nt_fmt_duration(uint64_t ns, char buf[32]);

/* The length in bytes of the UTF-8 sequence that starts at s (1 to 4), or 0 when s does not
 * start one (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF). Never reads
 * past a NUL; a NUL itself is the 1-byte sequence U+0000, where callers stop. */
size_t nt_utf8_length(const char *s);

struct nt_log_site;

/* Order of two call sites by identity: function, module file name (not its path: ranks may
 * load it from different places), offset. 0 when they are the same site. */
int nt_site_identity_cmp(const struct nt_log_site *a, const struct nt_log_site *b);

/* Write the message into err (when err and errsz): a reader's one-line reason. */
__attribute__((format(printf, 3, 4))) void nt_err_set(char *err, size_t errsz, const char *fmt,
						      ...);
/* The same, returning -EINVAL: a parser refusing its input. */
__attribute__((format(printf, 3, 4))) int nt_err_invalid(char *err, size_t errsz,
							 const char *fmt, ...);

#endif /* LIBNOISETOOL_UTIL_H */
