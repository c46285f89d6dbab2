/* UTF-8 as the writers meet it in a log's strings: where a valid sequence starts and how long
 * it is (RFC 3629). Private to the core. */
#ifndef LIBNOISETOOL_UTF8_H
#define LIBNOISETOOL_UTF8_H

#include <stddef.h>

/* The length in bytes of the UTF-8 sequence that starts at s (1 to 4), or 0 when s does not
 * start one (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF). Never reads
 * past a NUL; a NUL itself is the 1-byte sequence U+0000, where callers stop. */
size_t nt_utf8_length(const char *s);

#endif /* LIBNOISETOOL_UTF8_H */
