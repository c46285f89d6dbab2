/* The records, in their part of the rank's fixed memory (arena.h). Slots are claimed
 * atomically whatever the threading: the path is rare. */
#include "live.h"
#include "records.h"

static struct nt_record *arena;
static size_t capacity;
static size_t used;
static uint64_t dropped;

void nt_records_init(void *mem, size_t n)
{
	arena = mem;
	capacity = mem ? n : 0;
	used = 0;
	dropped = 0;
}

void nt_records_fini(void)
{
	arena = NULL;
	capacity = 0;
}

void nt_records_add(const struct nt_record *r)
{
	size_t i = __atomic_fetch_add(&used, 1, __ATOMIC_RELAXED);
	if (i >= capacity) {
		__atomic_store_n(&used, capacity, __ATOMIC_RELAXED);
		__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
		nt_live_lost(NT_LOSS_RECORDS, 1);
		return;
	}
	/* The flags last: in a live file (live.h) a record whose flags are 0 was never
	 * completed (the rank died while writing it). */
	struct nt_record x = *r;
	x.flags = 0;
	arena[i] = x;
	__atomic_store_n(&arena[i].flags, r->flags, __ATOMIC_RELEASE);
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
