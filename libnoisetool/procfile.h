/* The one-line files of /proc and /sys the core reads facts from (the clocksource, the
 * isolated and nohz_full CPU lists). Private to the core. */
#ifndef LIBNOISETOOL_PROCFILE_H
#define LIBNOISETOOL_PROCFILE_H

#include <stddef.h>

/* Read the first line of path into buf (newline stripped). Returns its length or -errno;
 * on failure buf is the empty string. */
int nt_read_first_line(const char *path, char *buf, size_t size);

#endif /* LIBNOISETOOL_PROCFILE_H */
