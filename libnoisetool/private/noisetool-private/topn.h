/* A fixed list of the best few, kept in order as items come (the busiest tasks, the interrupt
 * lines with most counts). */
#ifndef NOISETOOL_PRIVATE_TOPN_H
#define NOISETOOL_PRIVATE_TOPN_H

#include <stddef.h>
#include <string.h>

/* Insert item (size bytes) into a[0..*n), kept in cmp's order (the best first: cmp(x, y) < 0
 * when x goes before y; an equal one goes after), at most max entries: an item that comes past
 * the last of a full list is dropped, and the last one is dropped to make room. */
static inline void nt_top_insert(void *a, size_t *n, size_t max, size_t size, const void *item,
				 int (*cmp)(const void *, const void *))
{
	char *base = (char *)a;
	size_t pos = *n;
	while (pos > 0 && cmp(item, base + (pos - 1) * size) < 0)
		pos--;
	if (pos >= max)
		return;
	size_t last = *n < max ? *n : max - 1;
	memmove(base + (pos + 1) * size, base + pos * size, (last - pos) * size);
	memcpy(base + pos * size, item, size);
	if (*n < max)
		(*n)++;
}

#endif /* NOISETOOL_PRIVATE_TOPN_H */
