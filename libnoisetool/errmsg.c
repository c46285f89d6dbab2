/* A reader's or parser's one-line reason for refusing its input (errmsg.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "errmsg.h"

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
