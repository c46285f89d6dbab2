/* Small private helpers shared by the core. */
#ifndef LIBNOISETOOL_UTIL_H
#define LIBNOISETOOL_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Read the first line of path into buf (newline stripped). Returns its length or -errno;
 * on failure buf is the empty string. */
int nt_read_first_line(const char *path, char *buf, size_t size);

#endif /* LIBNOISETOOL_UTIL_H */
