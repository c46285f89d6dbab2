/* The one-line reason a reader or parser gives when it refuses its input, into the caller's
 * buffer (err, errsz), which may be absent. Private to the core. */
#ifndef LIBNOISETOOL_ERRMSG_H
#define LIBNOISETOOL_ERRMSG_H

#include <stddef.h>

/* Write the message into err (when err and errsz): a reader's one-line reason. */
__attribute__((format(printf, 3, 4))) void nt_err_set(char *err, size_t errsz, const char *fmt,
						      ...);
/* The same, returning -EINVAL: a parser refusing its input. */
__attribute__((format(printf, 3, 4))) int nt_err_invalid(char *err, size_t errsz,
							 const char *fmt, ...);

#endif /* LIBNOISETOOL_ERRMSG_H */
