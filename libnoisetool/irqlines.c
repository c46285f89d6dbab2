/* The lines of /proc/interrupts and /proc/softirqs (noisetool-private/irqlines.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool-private/irqlines.h>

static void copy_name(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src);
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

size_t nt_irq_header(const char *header, int *col_cpu, size_t cap)
{
	size_t n = 0;
	for (const char *p = header; (p = strstr(p, "CPU")) != NULL; p += 3) {
		if (col_cpu && n < cap)
			col_cpu[n] = atoi(p + 3);
		n++;
	}
	return n;
}

bool nt_irq_line(char *line, size_t ncols, uint64_t *row, char name[NT_IRQ_NAME_BYTES],
		 char desc[NT_IRQ_DESC_BYTES])
{
	char *colon = strchr(line, ':');
	if (!colon || ncols == 0)
		return false;
	char *start = line;
	while (isspace((unsigned char)*start))
		start++;
	*colon = '\0';
	char *p = colon + 1;
	for (size_t got = 0; got < ncols; got++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		row[got] = strtoull(p, &p, 10);
	}
	if (!*start)
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strlen(p);
	while (n && isspace((unsigned char)p[n - 1]))
		p[--n] = '\0';
	if (all_digits(start)) {
		char *w = strrchr(p, ' ');
		p = w ? w + 1 : p;
	}
	copy_name(name, NT_IRQ_NAME_BYTES, start);
	copy_name(desc, NT_IRQ_DESC_BYTES, p);
	return true;
}

int nt_irq_read_set(const char *path, const bool *in_set, size_t map_len, struct nt_irq_count *out,
		    size_t cap, size_t *n)
{
	if (!path || !n || (!in_set && map_len > 0) || (!out && cap > 0))
		return -EINVAL;
	*n = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t size = 0, ncols = 0;
	int *col_cpu = NULL;
	uint64_t *row = NULL;
	int rc = 0;
	if (getline(&line, &size, f) < 0 || (ncols = nt_irq_header(line, NULL, 0)) == 0)
		goto out; /* an empty file: nothing counted */
	col_cpu = malloc(ncols * sizeof *col_cpu);
	row = malloc(ncols * sizeof *row);
	if (!col_cpu || !row) {
		rc = -ENOMEM;
		goto out;
	}
	nt_irq_header(line, col_cpu, ncols);
	while (*n < cap && getline(&line, &size, f) >= 0) {
		struct nt_irq_count *c = &out[*n];
		if (!nt_irq_line(line, ncols, row, c->name, c->desc))
			continue;
		c->count = 0;
		for (size_t k = 0; k < ncols; k++)
			if (col_cpu[k] >= 0 && (size_t)col_cpu[k] < map_len && in_set[col_cpu[k]])
				c->count += row[k];
		(*n)++;
	}
out:
	free(line);
	free(col_cpu);
	free(row);
	fclose(f);
	return rc;
}
