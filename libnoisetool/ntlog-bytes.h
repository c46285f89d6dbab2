/* The .ntlog's byte level, shared by its writer (ntlog.c) and its reader (ntlog-read.c): the
 * magic numbers and little-endian stores and loads, whatever the host. */
#ifndef LIBNOISETOOL_NTLOG_BYTES_H
#define LIBNOISETOOL_NTLOG_BYTES_H

#include <stdint.h>

#define NT_LOG_FILE_MAGIC "NTLOG\r\n\x1a" /* 8 bytes (doc/ntlog-format.md) */
#define NT_LOG_RANK_MAGIC "NTRK"          /* 4 bytes */

static inline void nt_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void nt_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t nt_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t nt_get64(const unsigned char *p)
{
	return (uint64_t)nt_get32(p) | (uint64_t)nt_get32(p + 4) << 32;
}

#endif /* LIBNOISETOOL_NTLOG_BYTES_H */
