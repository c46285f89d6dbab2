/* Small private helpers shared by the core: file reading and time conversion. */
#ifndef LIBNOISETOOL_UTIL_H
#define LIBNOISETOOL_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Read the first line of path into buf (newline stripped). Returns its length or -errno;
 * on failure buf is the empty string. */
int nt_read_first_line(const char *path, char *buf, size_t size);

static inline double nt_ns_to_us(double ns) { return ns / 1e3; }
static inline double nt_ns_to_ms(double ns) { return ns / 1e6; }
static inline double nt_s_to_ns(double s) { return s * 1e9; }

#endif /* LIBNOISETOOL_UTIL_H */
