/* Splitting NOISETOOL_MEM between the tables (pure: unit-tested with made-up sizes). */
#include <errno.h>

#include "arena.h"

enum {
	ALIGN = 64,             /* each part starts on a cache line */
	MAX_SLOTS = 1u << 16,   /* of any hashed table: beyond, the memory goes to records */
	MIN_COMMS = 16,
};

static size_t aligned(size_t n)
{
	return (n + ALIGN - 1) / ALIGN * ALIGN;
}

/* The largest power of two n <= MAX_SLOTS with fixed + n * unit <= budget (at least 1). */
static size_t slots(size_t budget, size_t fixed, size_t unit)
{
	size_t n = 1;
	while (n < MAX_SLOTS && fixed + 2 * n * unit <= budget)
		n *= 2;
	return n;
}

void nt_arena_layout(const struct nt_arena_plan *p, const struct nt_arena_units *u,
		     struct nt_arena_layout *l)
{
	l->sites = 0;
	l->comms = l->sites + aligned(u->fixed_sites + p->sites * u->site);
	l->requests = l->comms + aligned(p->comms * u->comm);
	l->records = l->requests + aligned(2 * p->requests * u->request);
}

int nt_arena_plan(uint64_t mem, const struct nt_arena_units *u, struct nt_arena_plan *p)
{
	if (mem < NT_ARENA_MIN || mem > NT_ARENA_MAX || !u->site || !u->comm || !u->request ||
	    !u->record || u->fixed_sites + u->site > mem / 4)
		return -EINVAL;
	p->sites = slots((size_t)mem / 4, u->fixed_sites, u->site);
	p->comms = slots((size_t)mem / 32, 0, u->comm);
	if (p->comms < MIN_COMMS)
		p->comms = MIN_COMMS;
	p->requests = slots((size_t)mem / 32, 0, u->request);
	struct nt_arena_layout l;
	nt_arena_layout(p, u, &l);
	p->records = ((size_t)mem - l.records) / u->record;
	p->bytes = l.records + p->records * u->record;
	return 0;
}
