/* The record arena. */
#include <errno.h>
#include <sys/mman.h>

#include "records.h"

static struct nt_record *arena;
static size_t capacity;
static size_t used;
static uint64_t dropped;

int nt_records_init(size_t bytes, int threaded)
{
	(void)threaded; /* slots are claimed atomically in any case: the path is rare */
	capacity = bytes / sizeof *arena;
	if (capacity == 0)
		return 0;
	void *p = mmap(NULL, capacity * sizeof *arena, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED) {
		capacity = 0;
		return -ENOMEM;
	}
	arena = p;
	return 0;
}

void nt_records_fini(void)
{
	if (arena)
		munmap(arena, capacity * sizeof *arena);
	arena = NULL;
	capacity = 0;
}

void nt_records_add(const struct nt_record *r)
{
	size_t i = __atomic_fetch_add(&used, 1, __ATOMIC_RELAXED);
	if (i >= capacity) {
		__atomic_store_n(&used, capacity, __ATOMIC_RELAXED);
		__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	arena[i] = *r;
}

size_t nt_records_count(void)
{
	return used < capacity ? used : capacity;
}

void *nt_records_reuse(void)
{
	return arena;
}

uint64_t nt_records_dropped(void)
{
	return dropped;
}

const struct nt_record *nt_records_get(size_t i)
{
	return i < nt_records_count() ? &arena[i] : NULL;
}
