/* The call-site table. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/ntlog.h>

#include "live.h"
#include "sites.h"
#include "thread.h"
#include NT_WRAPPER_IDS_FILE /* wrapper-ids-MPI.h, generated for this MPI (meson.build) */

/* The sites are stored in the order they are first seen (table[0..nsites)): the regular ones,
 * up to capacity, and the merged site of each function that met a full table. They are found
 * through an open-addressing index of 2 x capacity 32-bit entries (load at most 1/2), probed
 * linearly: an entry holds the site's position and a tag of 14 more bits of the hash, so that a
 * probe reads no site but the one it finds, and 16 entries share a cache line.
 *
 * Why (doc/bench-sites.md): the sites themselves were the hash table, 672 bytes a slot. At 4,000
 * sites in its 4,096 slots a lookup walked tens of slots (a cache line each, spread over 2.7 MiB)
 * and the sites that found no slot in 64 went to the merged site, walking all 64 on every call. */
static struct nt_site *table;
static uint32_t *slots;       /* the index: 0 = free, else TAG | KEYED | position + 1 */
static size_t slot_mask;      /* index entries - 1 */
static unsigned slot_shift;   /* 64 - log2(index entries): the hash's top bits pick the entry */
static size_t capacity;       /* regular sites */
static size_t total;          /* capacity, then one merged site per function */
static size_t nregular;       /* regular sites in the table (under the lock) */
static size_t nsites;         /* sites in the table, merged ones included (atomic) */
static struct nt_site *merged[NT_FN_COUNT]; /* each function's merged site, once made (atomic) */
enum {
	MAX_PROBES = 64,
	POS_BITS = 17, /* position + 1 <= 2^16 + NT_FN_COUNT (arena.c: MAX_SLOTS) */
	TAG_BITS = 14,
};
#define POS_MASK ((1u << POS_BITS) - 1)
#define KEYED (1u << POS_BITS) /* the site has a key (a Python site): compare it too */
bool nt_sites_threaded_;
static uint64_t abs_floor_cyc; /* NT_REC_ABS_FLOOR_NS */
static pthread_mutex_t insert_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t overflow;
static unsigned (*caller_of)(uintptr_t ret); /* what a return address lies in */

_Static_assert(offsetof(struct nt_site, rec) + sizeof(struct nt_rec_thresholds) <=
		       NT_SITE_HOT_BYTES,
	       "what every call touches fits the site's first two cache lines");
_Static_assert(offsetof(struct nt_site, hist) == NT_SITE_HOT_BYTES, "the histogram comes next");
_Static_assert(sizeof(struct nt_site) % 64 == 0, "each site starts a cache line");
_Static_assert(POS_BITS + 1 + TAG_BITS == 32, "an index entry is 32 bits");
/* A live file's reader takes the first NT_LOG_HIST_BINS bins (sites.h: calls of 2^48 cycles
 * or more land past them). */
_Static_assert(NT_SITE_HIST >= NT_LOG_HIST_BINS, "a site's histogram holds the log's");

size_t nt_sites_table_bytes(size_t cap)
{
	return (cap + NT_FN_COUNT) * sizeof *table + 2 * cap * sizeof *slots;
}

void nt_sites_init(void *mem, size_t cap, bool is_threaded, uint64_t abs_cyc,
		   unsigned (*caller)(uintptr_t ret))
{
	caller_of = caller;
	abs_floor_cyc = abs_cyc;
	capacity = cap + NT_FN_COUNT <= POS_MASK ? cap : POS_MASK - NT_FN_COUNT;
	total = cap + NT_FN_COUNT;
	table = mem;
	slots = (uint32_t *)(table + total);
	slot_mask = 2 * cap - 1;
	slot_shift = 64 - (unsigned)__builtin_ctzll((unsigned long long)(2 * cap));
	nregular = 0;
	nsites = 0;
	memset(merged, 0, sizeof merged);
	overflow = 0;
	nt_sites_threaded_ = is_threaded;
}

void nt_sites_fini(void)
{
	table = NULL;
	slots = NULL;
	nsites = 0;
}

/* The hash of (fn, ret, key): its top bits pick the first entry probed, the next TAG_BITS are
 * the tag (Fibonacci hashing: return addresses a few bytes apart land far apart). */
static inline uint64_t hash_of(unsigned fn, uintptr_t ret, uintptr_t key)
{
	return ((uint64_t)ret ^ ((uint64_t)fn << 48) ^ (uint64_t)key) * 0x9e3779b97f4a7c15ull;
}

static inline uint32_t tag_of(uint64_t h, uintptr_t key)
{
	uint32_t tag = (uint32_t)(h >> (slot_shift - TAG_BITS)) & ((1u << TAG_BITS) - 1);
	return tag << (POS_BITS + 1) | (key ? KEYED : 0);
}

/* The lines of s the call is about to touch besides line 0 (read next, to compare): line 1
 * and the histogram's bins 8-15, where a call of 2^8-2^16 counter cycles lands (0.1-25 us at
 * 2.6 GHz). Asked for at once, they load side by side with line 0 instead of after it. */
static inline void prefetch_hot(const struct nt_site *s)
{
	__builtin_prefetch((const char *)s + 64, 1);
	__builtin_prefetch(&s->hist[8], 1);
}

/* The site of (fn, ret, key) in the index, or NULL; *free_at: the first free entry on the way
 * (SIZE_MAX: none within MAX_PROBES). Lock-free: an entry is written once, after its site. */
static inline struct nt_site *find(unsigned fn, uintptr_t ret, uintptr_t key, size_t *free_at)
{
	uint64_t h = hash_of(fn, ret, key);
	uint32_t want = tag_of(h, key);
	size_t i = (size_t)(h >> slot_shift);
	for (unsigned probes = 0; probes < MAX_PROBES; probes++, i = (i + 1) & slot_mask) {
		uint32_t e = __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
		if (e == 0) {
			*free_at = i;
			return NULL;
		}
		if ((e & ~POS_MASK) != want)
			continue;
		struct nt_site *s = &table[(e & POS_MASK) - 1];
		prefetch_hot(s);
		if (s->ret == ret && s->fn == fn && (!key || s->key == key))
			return s;
	}
	*free_at = SIZE_MAX;
	return NULL;
}

/* Take the next place in the table (under the lock) and publish it to nt_sites_next. */
static struct nt_site *place(void)
{
	struct nt_site *s = &table[nsites];
	s->min_cyc = UINT64_MAX;
	s->type = MPI_DATATYPE_NULL;
	s->comm = &nt_comm_none_;
	nt_recpolicy_init(&s->rec, abs_floor_cyc);
	return s;
}

/* The site of (fn, ret, key), created on first sight (named py_name, py_line), else NULL: the
 * table is full, or (never seen at a load of 1/2) no free entry within MAX_PROBES. */
static struct nt_site *find_or_add(unsigned fn, uintptr_t ret, uintptr_t key, uint32_t py_name,
				   uint32_t py_line)
{
	size_t at;
	struct nt_site *s = find(fn, ret, key, &at);
	if (s || at == SIZE_MAX || __atomic_load_n(&nregular, __ATOMIC_RELAXED) >= capacity)
		return s;
	pthread_mutex_lock(&insert_lock);
	/* Another thread may have added it, or taken the free entry, since. */
	s = find(fn, ret, key, &at);
	if (!s && at != SIZE_MAX && nregular < capacity) {
		s = place();
		s->fn = fn;
		s->key = key;
		s->py_name = py_name;
		s->py_line = py_line;
		s->depth = nt_stack_walk(s->stack, NT_STACK_DEPTH);
		/* A Python site is the program's own: only the extension's C site is looked
		 * through (pysite.h), once per return address. */
		s->binding = key || !caller_of ? NT_SITE_CALLER_C : (int)caller_of(ret);
		__atomic_store_n(&s->ret, ret, __ATOMIC_RELEASE);
		uint32_t pos = (uint32_t)(s - table) + 1;
		__atomic_store_n(&nregular, nregular + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&nsites, nsites + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&slots[at], tag_of(hash_of(fn, ret, key), key) | pos,
				 __ATOMIC_RELEASE);
		nt_live_site(ret, s->stack, s->depth);
	}
	pthread_mutex_unlock(&insert_lock);
	return s;
}

void nt_sites_prefetch(unsigned fn, uintptr_t ret)
{
	if (!table)
		return;
	uint64_t h = hash_of(fn, ret, 0);
	uint32_t want = tag_of(h, 0);
	size_t i = (size_t)(h >> slot_shift);
	for (unsigned probes = 0; probes < MAX_PROBES; probes++, i = (i + 1) & slot_mask) {
		uint32_t e = __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
		if (e == 0)
			return; /* a new site: nothing to fetch */
		if ((e & ~POS_MASK) == want) {
			/* The site, or (1 in 2^14) another with the same tag: only a fetch. */
			const struct nt_site *s = &table[(e & POS_MASK) - 1];
			__builtin_prefetch(s, 1);
			prefetch_hot(s);
			return;
		}
	}
}

struct nt_site *nt_sites_find(unsigned fn, uintptr_t ret, uintptr_t key)
{
	size_t at;
	return table ? find(fn, ret, key, &at) : NULL;
}

struct nt_site *nt_sites_lookup(unsigned fn, uintptr_t ret)
{
	/* A site seen before: the index alone (the path of every call when the per-thread
	 * one-entry cache misses, call.h). */
	size_t at;
	struct nt_site *s = table ? find(fn, ret, 0, &at) : NULL;
	return s ? s : nt_sites_lookup_py(fn, ret, 0, 0, 0);
}

struct nt_site *nt_sites_lookup_py(unsigned fn, uintptr_t ret, uintptr_t key, uint32_t py_name,
				   uint32_t py_line)
{
	if (!table)
		return NULL;
	struct nt_site *s = find_or_add(fn, ret, key, py_name, py_line);
	if (s)
		return s;
	/* Full: the call is counted at its function's merged site, which merges every site the
	 * table had no room for. */
	__atomic_fetch_add(&overflow, 1, __ATOMIC_RELAXED);
	nt_live_lost(NT_LOSS_MERGED_CALLS, 1);
	if (fn >= NT_FN_COUNT)
		return NULL;
	struct nt_site *o = __atomic_load_n(&merged[fn], __ATOMIC_ACQUIRE);
	if (o)
		return o;
	pthread_mutex_lock(&insert_lock);
	o = merged[fn];
	if (!o) { /* room: at most capacity regular sites and one merged site per function */
		o = place();
		o->fn = fn;
		o->depth = 0;
		__atomic_store_n(&o->ret, NT_SITE_OVERFLOW, __ATOMIC_RELEASE);
		__atomic_store_n(&nsites, nsites + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&merged[fn], o, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&insert_lock);
	return o;
}

void nt_sites_add_atomic(struct nt_site *s, uint64_t d, uint64_t bytes)
{
	__atomic_fetch_add(&s->calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->bytes, bytes, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->total_cyc, d, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->hist[nt_sites_bin(d)], 1, __ATOMIC_RELAXED);
	uint64_t cur = __atomic_load_n(&s->min_cyc, __ATOMIC_RELAXED);
	while (d < cur && !__atomic_compare_exchange_n(&s->min_cyc, &cur, d, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
	cur = __atomic_load_n(&s->max_cyc, __ATOMIC_RELAXED);
	while (d > cur && !__atomic_compare_exchange_n(&s->max_cyc, &cur, d, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

void nt_sites_add_poll_atomic(struct nt_site *s, uint64_t d)
{
	__atomic_fetch_add(&s->calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->total_cyc, d, __ATOMIC_RELAXED);
}

/* MPI_Pcontrol(2), which another thread may make while others call: atomic stores, under the
 * lock that adds sites. */
void nt_sites_reset(void)
{
	pthread_mutex_lock(&insert_lock);
	for (size_t i = 0; i < nsites; i++) {
		struct nt_site *s = &table[i];
		uint64_t *zero[] = { &s->calls, &s->total_cyc, &s->max_cyc, &s->bytes, &s->phase_cyc };
		for (size_t k = 0; k < sizeof zero / sizeof *zero; k++)
			__atomic_store_n(zero[k], 0, __ATOMIC_RELAXED);
		for (unsigned b = 0; b < NT_SITE_HIST; b++)
			__atomic_store_n(&s->hist[b], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->min_cyc, UINT64_MAX, __ATOMIC_RELAXED);
		nt_recpolicy_init(&s->rec, abs_floor_cyc);
		/* untimed test calls made before the reset are forgotten with the rest; the
		 * countdown goes on (a plain store: only the fast path's thread, this one in
		 * MPI_Pcontrol, writes them) */
		if (s->poll_skip <= s->poll_gap)
			s->poll_gap = s->poll_skip;
	}
	pthread_mutex_unlock(&insert_lock);
}

/* Count s's pending untimed test calls, each with its sample's duration. */
static void settle_polls(struct nt_site *s)
{
	uint32_t n = nt_sites_polls_pending(s);
	s->calls += n;
	s->total_cyc += n * s->poll_cyc;
}

void nt_sites_settle_all_polls(void)
{
	size_t i = 0;
	for (struct nt_site *s; (s = nt_sites_next(&i));) {
		settle_polls(s);
		if (s->poll_skip <= s->poll_gap)
			s->poll_gap = s->poll_skip;
	}
}

void nt_sites_time_all_polls(void)
{
	pthread_mutex_lock(&insert_lock);
	for (size_t i = 0; i < nsites; i++) {
		settle_polls(&table[i]);
		table[i].poll_gap = table[i].poll_skip = 0;
	}
	pthread_mutex_unlock(&insert_lock);
}

uint64_t nt_sites_type_size(struct nt_site *s, MPI_Datatype type)
{
	MPI_Count size = 0;
	if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0)
		size = 0;
	if (!nt_sites_threaded_) {
		s->type_size = (uint64_t)size;
		s->type = type;
	}
	return (uint64_t)size;
}

void nt_sites_forget_type(MPI_Datatype type)
{
	if (nt_sites_threaded_) /* the sizes are not cached (nt_sites_type_size) */
		return;
	for (size_t i = 0; i < nsites; i++)
		if (table[i].type == type) { /* a call passing MPI_DATATYPE_NULL counts 0 bytes */
			table[i].type = MPI_DATATYPE_NULL;
			table[i].type_size = 0;
		}
}

struct nt_site *nt_sites_next(size_t *i)
{
	/* The sites in use only: the table's pages past them are never read (in a live file,
	 * live.h, a read makes a page resident). */
	size_t n = __atomic_load_n(&nsites, __ATOMIC_ACQUIRE);
	return table && *i < n ? &table[(*i)++] : NULL;
}

size_t nt_sites_slots(void)
{
	return table ? total : 0;
}

uint32_t nt_sites_index(const struct nt_site *s)
{
	return (uint32_t)(s - table);
}

uint64_t nt_sites_overflow(void)
{
	return overflow;
}

#define FIELD(member) NT_LIVE_FIELD(struct nt_site, member)

void nt_sites_live_fields(struct nt_live_field f[NT_LSF_COUNT])
{
	f[NT_LSF_RET] = FIELD(ret);
	f[NT_LSF_FN] = FIELD(fn);
	f[NT_LSF_CALLS] = FIELD(calls);
	f[NT_LSF_TOTAL] = FIELD(total_cyc);
	f[NT_LSF_MIN] = FIELD(min_cyc);
	f[NT_LSF_MAX] = FIELD(max_cyc);
	f[NT_LSF_BYTES] = FIELD(bytes);
	/* The log's bins (NT_SITE_HIST: calls of 2^48 cycles or more land past them). */
	f[NT_LSF_HIST] = (struct nt_live_field){ (uint16_t)offsetof(struct nt_site, hist),
						 NT_LOG_HIST_BINS * sizeof(uint64_t) };
	f[NT_LSF_NONBLOCKING] = FIELD(nonblocking);
	f[NT_LSF_DEPTH] = FIELD(depth);
	f[NT_LSF_STACK] = FIELD(stack);
	f[NT_LSF_POLL_CYC] = FIELD(poll_cyc);
	f[NT_LSF_POLL_GAP] = FIELD(poll_gap);
	f[NT_LSF_POLL_SKIP] = FIELD(poll_skip);
}
