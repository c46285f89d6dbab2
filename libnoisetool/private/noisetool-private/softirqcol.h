/* One CPU's column of /proc/softirqs, read again and again by the detour loop after each detour
 * (detour.c): which softirq kinds ran on the loop's CPU since the previous reading. The file is
 * opened once and read with one pread into a buffer sized at the start; no allocation, no stdio
 * after nt_softirq_col_open. */
#ifndef NOISETOOL_PRIVATE_SOFTIRQCOL_H
#define NOISETOOL_PRIVATE_SOFTIRQCOL_H

#include <stddef.h>
#include <stdint.h>

#include <noisetool/detour.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nt_softirq_col {
	int fd;                  /* -1: not open (nothing is read) */
	char *buf;
	size_t cap;
	size_t ncols;            /* CPU columns of the header */
	size_t col;              /* the CPU's column */
	struct nt_softirq_kinds kinds; /* the file's lines, in its order (at most 16) */
	uint64_t last[NT_DETOUR_SOFTIRQ_KINDS];
};

/* Open path (NULL: /proc/softirqs) for cpu's column and take the first reading. Returns 0,
 * -EINVAL (cpu < 0), -ENOENT (no column for cpu, or no kind in the file), -ENOMEM, or open's
 * or read's error; on error s->fd is -1 and nt_softirq_col_close may still be called. */
int nt_softirq_col_open(struct nt_softirq_col *s, const char *path, int cpu);

/* Read again: *moved gets bit k set for each kind k whose count on the CPU grew since the
 * previous reading. 0, or -EIO (the read failed or the file changed shape: no bits). */
int nt_softirq_col_read(struct nt_softirq_col *s, uint32_t *moved);

/* The same over a text already read (len bytes of buf, which is changed; for tests). */
int nt_softirq_col_parse(struct nt_softirq_col *s, char *buf, size_t len, uint32_t *moved);

void nt_softirq_col_close(struct nt_softirq_col *s);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_SOFTIRQCOL_H */
