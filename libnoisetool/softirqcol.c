/* One CPU's column of /proc/softirqs (noisetool-private/softirqcol.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <noisetool-private/irqlines.h>
#include <noisetool-private/softirqcol.h>

#define DEFAULT_PATH "/proc/softirqs"

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* The counts of one reading: each line's count in column s->col, into row (s->kinds.n of them,
 * the names checked against the first reading's when check_names). 0, or -EIO when the text is
 * not of the shape the first reading had. */
static int parse_counts(const struct nt_softirq_col *s, const char *p, const char *end,
			uint64_t *row, struct nt_softirq_kinds *names)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p)); /* the header */
	if (!nl)
		return -EIO;
	p = nl + 1;
	unsigned k = 0;
	while (p < end && k < NT_DETOUR_SOFTIRQ_KINDS) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *colon = memchr(p, ':', (size_t)(eol - p));
		if (!colon) {
			p = eol + 1;
			continue;
		}
		const char *name = skip_blanks(p, colon);
		size_t len = (size_t)(colon - name);
		if (names) {
			if (len == 0)
				return -EIO;
			if (len >= sizeof names->name[k])
				len = sizeof names->name[k] - 1;
			memcpy(names->name[k], name, len);
			names->name[k][len] = '\0';
		} else if (strncmp(s->kinds.name[k], name, len) != 0 || s->kinds.name[k][len]) {
			return -EIO;
		}
		const char *q = colon + 1;
		uint64_t v = 0;
		for (size_t c = 0; c <= s->col; c++) {
			q = skip_blanks(q, eol);
			if (q >= eol || *q < '0' || *q > '9')
				return -EIO;
			for (v = 0; q < eol && *q >= '0' && *q <= '9'; q++)
				v = v * 10 + (uint64_t)(*q - '0');
		}
		row[k++] = v;
		p = eol + 1;
	}
	if (names)
		names->n = k;
	else if (k != s->kinds.n)
		return -EIO;
	return k ? 0 : -ENOENT;
}

int nt_softirq_col_parse(struct nt_softirq_col *s, char *buf, size_t len, uint32_t *moved)
{
	uint64_t row[NT_DETOUR_SOFTIRQ_KINDS];
	*moved = 0;
	if (parse_counts(s, buf, buf + len, row, NULL) != 0)
		return -EIO;
	uint32_t m = 0;
	for (unsigned k = 0; k < s->kinds.n; k++) {
		if (row[k] != s->last[k])
			m |= 1u << k;
		s->last[k] = row[k];
	}
	*moved = m;
	return 0;
}

int nt_softirq_col_read(struct nt_softirq_col *s, uint32_t *moved)
{
	*moved = 0;
	if (s->fd < 0)
		return -EIO;
	ssize_t got = pread(s->fd, s->buf, s->cap, 0);
	if (got <= 0 || (size_t)got >= s->cap)
		return -EIO; /* a full buffer: the file grew, a reading may be cut */
	return nt_softirq_col_parse(s, s->buf, (size_t)got, moved);
}

int nt_softirq_col_open(struct nt_softirq_col *s, const char *path, int cpu)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	if (cpu < 0)
		return -EINVAL;
	int fd = open(path ? path : DEFAULT_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Size the buffer from a first whole reading: twice that (counts grow digits). */
	size_t cap = 4096, len = 0;
	char *buf = NULL;
	int rc = 0;
	for (;;) {
		char *nb = realloc(buf, cap);
		if (!nb) {
			rc = -ENOMEM;
			goto fail;
		}
		buf = nb;
		ssize_t got = pread(fd, buf, cap, 0);
		if (got < 0) {
			rc = -errno;
			goto fail;
		}
		len = (size_t)got;
		if (len < cap)
			break;
		cap *= 2;
	}
	char *nb = realloc(buf, 2 * len + 4096);
	if (!nb) {
		rc = -ENOMEM;
		goto fail;
	}
	buf = nb;
	s->cap = 2 * len + 4096;
	/* The CPU's column in the header. */
	char *nl = memchr(buf, '\n', len);
	if (!nl) {
		rc = -ENOENT;
		goto fail;
	}
	*nl = '\0';
	size_t ncols = nt_irq_header(buf, NULL, 0);
	int *col_cpu = ncols ? malloc(ncols * sizeof *col_cpu) : NULL;
	if (ncols && !col_cpu) {
		rc = -ENOMEM;
		goto fail;
	}
	nt_irq_header(buf, col_cpu, ncols);
	size_t col = ncols;
	for (size_t c = 0; c < ncols; c++)
		if (col_cpu[c] == cpu)
			col = c;
	free(col_cpu);
	*nl = '\n';
	if (col == ncols) {
		rc = -ENOENT;
		goto fail;
	}
	s->ncols = ncols;
	s->col = col;
	if ((rc = parse_counts(s, buf, buf + len, s->last, &s->kinds)) != 0)
		goto fail;
	s->fd = fd;
	s->buf = buf;
	return 0;
fail:
	free(buf);
	close(fd);
	memset(s, 0, sizeof *s);
	s->fd = -1;
	return rc;
}

void nt_softirq_col_close(struct nt_softirq_col *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	memset(s, 0, sizeof *s);
	s->fd = -1;
}
