/* The call-site table. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "live.h"
#include "pysite.h"
#include "sites.h"
#include NT_WRAPPER_IDS_FILE /* wrapper-ids-MPI.h, generated for this MPI (meson.build) */

static struct nt_site *table;
static size_t mask;  /* the hashed part: capacity - 1 */
static size_t total; /* capacity, then one overflow site per function */
enum { MAX_PROBES = 64 };
bool nt_sites_threaded_;
static uint64_t abs_floor_cyc; /* NT_REC_ABS_FLOOR_NS */
static pthread_mutex_t insert_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t overflow;
static struct nt_site **used; /* the sites in use, in order of creation */
static size_t nused;

size_t nt_sites_table_bytes(size_t capacity)
{
	return (capacity + NT_FN_COUNT) * (sizeof *table + sizeof *used) +
	       nt_pysite_pool_bytes(capacity);
}

void nt_sites_init(void *mem, size_t capacity, bool is_threaded, uint64_t abs_cyc)
{
	abs_floor_cyc = abs_cyc;
	total = capacity + NT_FN_COUNT;
	table = mem;
	used = (struct nt_site **)(table + total);
	nused = 0;
	overflow = 0;
	mask = capacity - 1;
	nt_sites_threaded_ = is_threaded;
	nt_pysite_pool_init(used + total, nt_pysite_pool_bytes(capacity));
}

void nt_sites_fini(void)
{
	table = NULL;
	used = NULL;
	nused = 0;
	nt_pysite_pool_init(NULL, 0);
}

static size_t slot_of(unsigned fn, uintptr_t ret, uintptr_t key)
{
	uint64_t h = ((uint64_t)ret ^ ((uint64_t)fn << 48) ^ (uint64_t)key) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & mask;
}

/* At most MAX_PROBES slots: a miss in a full table must not scan all of it on every call
 * (5,000 sites in a 4,096-entry table made each call 1.24 us instead of 0.47 us). */
static size_t probe_limit(void)
{
	return mask + 1 < MAX_PROBES ? mask + 1 : MAX_PROBES;
}

struct nt_site *nt_sites_find(unsigned fn, uintptr_t ret, uintptr_t key)
{
	if (!table)
		return NULL;
	size_t i = slot_of(fn, ret, key), limit = probe_limit();
	for (size_t probes = 0; probes < limit; probes++, i = (i + 1) & mask) {
		struct nt_site *s = &table[i];
		uintptr_t r = __atomic_load_n(&s->ret, __ATOMIC_ACQUIRE);
		if (r == ret && s->fn == fn && s->key == key)
			return s;
		if (r == 0)
			return NULL;
	}
	return NULL;
}

/* The site of (fn, ret, key), created on first sight (named py_name, py_line), else NULL
 * after MAX_PROBES slots. */
static struct nt_site *find_or_add(unsigned fn, uintptr_t ret, uintptr_t key, uint32_t py_name,
				   uint32_t py_line)
{
	size_t i = slot_of(fn, ret, key), limit = probe_limit();
	for (size_t probes = 0; probes < limit; probes++, i = (i + 1) & mask) {
		struct nt_site *s = &table[i];
		uintptr_t r = __atomic_load_n(&s->ret, __ATOMIC_ACQUIRE);
		if (r == ret && s->fn == fn && s->key == key)
			return s;
		if (r != 0)
			continue;
		/* Free slot: claim it under the lock (another thread may have raced us). */
		pthread_mutex_lock(&insert_lock);
		r = __atomic_load_n(&s->ret, __ATOMIC_ACQUIRE);
		if (r == 0) {
			s->fn = fn;
			s->key = key;
			s->py_name = py_name;
			s->py_line = py_line;
			s->min_cyc = UINT64_MAX;
			s->pending_cyc = NT_SITE_NONE;
			s->type = MPI_DATATYPE_NULL;
			nt_recpolicy_init(&s->rec, abs_floor_cyc);
			s->depth = nt_stack_walk(s->stack, NT_STACK_DEPTH);
			/* A Python site is the program's own: only the extension's C site is
			 * looked through (pysite.h), once per return address. */
			s->binding = key ? NT_SITE_CALLER_C
				 : nt_binding_contains(ret) ? NT_SITE_CALLER_FORTRAN
				 : nt_pysite_is_python(ret) ? NT_SITE_CALLER_PYTHON
							    : NT_SITE_CALLER_C;
			used[nused] = s;
			__atomic_store_n(&nused, nused + 1, __ATOMIC_RELEASE);
			__atomic_store_n(&s->ret, ret, __ATOMIC_RELEASE);
			nt_live_site(s);
			pthread_mutex_unlock(&insert_lock);
			return s;
		}
		pthread_mutex_unlock(&insert_lock);
		if (r == ret && s->fn == fn && s->key == key)
			return s;
	}
	return NULL;
}

struct nt_site *nt_sites_lookup(unsigned fn, uintptr_t ret)
{
	return nt_sites_lookup_py(fn, ret, 0, 0, 0);
}

struct nt_site *nt_sites_lookup_py(unsigned fn, uintptr_t ret, uintptr_t key, uint32_t py_name,
				   uint32_t py_line)
{
	if (!table)
		return NULL;
	struct nt_site *s = find_or_add(fn, ret, key, py_name, py_line);
	if (s)
		return s;
	/* Full: the call is counted at its function's overflow site, which merges every site
	 * the table had no room for. */
	__atomic_fetch_add(&overflow, 1, __ATOMIC_RELAXED);
	nt_live_lost(NT_LOSS_MERGED_CALLS, 1);
	if (fn >= NT_FN_COUNT)
		return NULL;
	struct nt_site *o = &table[mask + 1 + fn];
	if (__atomic_load_n(&o->ret, __ATOMIC_ACQUIRE) == 0) {
		pthread_mutex_lock(&insert_lock);
		if (o->ret == 0) {
			o->fn = fn;
			o->min_cyc = UINT64_MAX;
			o->pending_cyc = NT_SITE_NONE;
			o->type = MPI_DATATYPE_NULL;
			nt_recpolicy_init(&o->rec, abs_floor_cyc);
			o->depth = 0;
			used[nused] = o;
			__atomic_store_n(&nused, nused + 1, __ATOMIC_RELEASE);
			__atomic_store_n(&o->ret, NT_SITE_OVERFLOW, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&insert_lock);
	}
	return o;
}

static unsigned log2_bin(uint64_t v)
{
	unsigned b = v < 2 ? 0 : 63u - (unsigned)__builtin_clzll(v);
	return b < NT_SITE_HIST ? b : NT_SITE_HIST - 1;
}

void nt_sites_add_atomic(struct nt_site *s, uint64_t d, uint64_t bytes)
{
	__atomic_fetch_add(&s->calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->bytes, bytes, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->total_cyc, d, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->hist[log2_bin(d)], 1, __ATOMIC_RELAXED);
	uint64_t cur = __atomic_load_n(&s->min_cyc, __ATOMIC_RELAXED);
	while (d < cur && !__atomic_compare_exchange_n(&s->min_cyc, &cur, d, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
	cur = __atomic_load_n(&s->max_cyc, __ATOMIC_RELAXED);
	while (d > cur && !__atomic_compare_exchange_n(&s->max_cyc, &cur, d, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

/* MPI_Pcontrol(2), which another thread may make while others call: atomic stores, under the
 * lock that adds sites. */
void nt_sites_reset(void)
{
	pthread_mutex_lock(&insert_lock);
	for (size_t i = 0; i < nused; i++) {
		struct nt_site *s = used[i];
		uint64_t *zero[] = { &s->calls, &s->total_cyc, &s->max_cyc, &s->bytes, &s->phase_cyc };
		for (size_t k = 0; k < sizeof zero / sizeof *zero; k++)
			__atomic_store_n(zero[k], 0, __ATOMIC_RELAXED);
		for (unsigned b = 0; b < NT_SITE_HIST; b++)
			__atomic_store_n(&s->hist[b], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->min_cyc, UINT64_MAX, __ATOMIC_RELAXED);
		nt_recpolicy_init(&s->rec, abs_floor_cyc);
		if (!nt_sites_threaded_)
			s->pending_cyc = NT_SITE_NONE;
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
	for (size_t i = 0; i < nused; i++)
		if (used[i]->type == type) { /* a call passing MPI_DATATYPE_NULL counts 0 bytes */
			used[i]->type = MPI_DATATYPE_NULL;
			used[i]->type_size = 0;
		}
}

void nt_sites_settle(void)
{
	for (size_t i = 0; i < nused; i++) {
		struct nt_site *s = used[i];
		if (s->pending_cyc != NT_SITE_NONE) {
			nt_sites_fold(s, s->pending_cyc);
			s->pending_cyc = NT_SITE_NONE;
		}
	}
}

struct nt_site *nt_sites_next(size_t *i)
{
	/* The list of sites in use, not the table: a scan of the table read every page of it,
	 * which in a live file (live.h) made all of them resident (2.7 MiB at 16M). */
	size_t n = __atomic_load_n(&nused, __ATOMIC_ACQUIRE);
	return table && *i < n ? used[(*i)++] : NULL;
}

size_t nt_sites_slots(void)
{
	return table ? total : 0;
}

uint32_t nt_sites_index(const struct nt_site *s)
{
	return (uint32_t)(s - table);
}

struct nt_site *nt_sites_at(uint32_t index)
{
	return table && index < total ? &table[index] : NULL;
}

uint64_t nt_sites_overflow(void)
{
	return overflow;
}
