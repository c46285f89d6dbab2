/* UTF-8 sequences recognised byte by byte (utf8.h). */
#include <stdint.h>

#include "utf8.h"

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
