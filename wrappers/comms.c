/* The communicator table, derived ids and which communicators have adaptive-wait votes. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "comms.h"
#include "votes.h"
#include NT_WRAPPER_IDS_FILE /* wrapper-ids-MPI.h, generated for this MPI (meson.build) */

enum {
	COUNTERS = 1024,  /* (members, tag) keys of group constructors, for their counts */
	CHUNK = 256,      /* ranks translated at a time: bounded stack use at any size */
};

/* What a constructor's id derives from. */
enum ctor {
	CTOR_NONE,      /* not a constructor this file knows */
	CTOR_PARENT,    /* blocking, collective over the parent */
	CTOR_PARENT_NB, /* nonblocking, collective over the parent: members = the parent's */
	CTOR_GROUP,     /* collective over the new members only: members, tag and a count */
};

static struct nt_comm *table;
static size_t capacity; /* of the table and of the vote states after it */
static struct {
	uint64_t key, n;
} counters[COUNTERS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Group world_group = MPI_GROUP_NULL;
static bool votes_on;
static uint64_t tokens; /* registrations so far (locked) */
bool nt_comms_threaded_;

static uint64_t mix(uint64_t h, uint64_t v)
{
	/* splitmix64's finalizer over the running value and the next word */
	uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static struct nt_comm *slot_for(MPI_Comm comm, bool insert)
{
	uint64_t h = (uint64_t)(uintptr_t)comm * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 40) % capacity;
	for (size_t n = 0; n < capacity; n++, i = (i + 1) % capacity) {
		if (table[i].used && table[i].handle == comm)
			return &table[i];
		if (!table[i].used)
			return insert ? &table[i] : NULL;
	}
	return NULL;
}

size_t nt_comms_bytes(size_t n)
{
	return n * sizeof *table + nt_votes_bytes(n);
}

void nt_comms_init(void *mem, size_t n, int world_rank, bool is_threaded)
{
	table = mem;
	capacity = n;
	votes_on = false;
	nt_votes_init(table + capacity, n);
	nt_comms_threaded_ = is_threaded;
	PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
	struct nt_comm *w = slot_for(MPI_COMM_WORLD, true);
	*w = (struct nt_comm){ .handle = MPI_COMM_WORLD, .used = true, .id = 0, .vote = -1 };
	struct nt_comm *s = slot_for(MPI_COMM_SELF, true);
	*s = (struct nt_comm){ .handle = MPI_COMM_SELF, .used = true,
				.id = (1ull << 62) | (uint64_t)world_rank, .vote = -1 };
}

void nt_comms_fini(void)
{
	table = NULL;
	if (world_group != MPI_GROUP_NULL)
		PMPI_Group_free(&world_group);
}

void nt_comms_enable_votes(MPI_Comm tool)
{
	if (!table)
		return;
	int w = nt_votes_enable(tool);
	pthread_mutex_lock(&lock);
	slot_for(MPI_COMM_WORLD, false)->vote = w;
	votes_on = true;
	pthread_mutex_unlock(&lock);
}

struct nt_comm *nt_comms_find(MPI_Comm comm)
{
	if (!table)
		return NULL;
	pthread_mutex_lock(&lock);
	struct nt_comm *c = slot_for(comm, false);
	pthread_mutex_unlock(&lock);
	return c;
}

struct nt_comm *nt_comms_get(MPI_Comm comm)
{
	if (!table)
		return NULL;
	pthread_mutex_lock(&lock);
	struct nt_comm *c = slot_for(comm, true);
	if (c && !c->used)
		*c = (struct nt_comm){ .handle = comm, .used = true, .id = NT_COMM_ID_UNKNOWN,
					.vote = -1, .token = ++tokens };
	pthread_mutex_unlock(&lock);
	return c;
}

static enum ctor ctor_of(unsigned fn)
{
	static const char *const parent[] = {
		"MPI_Comm_dup",	      "MPI_Comm_dup_with_info", "MPI_Comm_split",
		"MPI_Comm_split_type", "MPI_Comm_create",	"MPI_Cart_create",
		"MPI_Cart_sub",	      "MPI_Graph_create",	"MPI_Dist_graph_create",
		"MPI_Dist_graph_create_adjacent",		"MPI_Intercomm_merge",
	};
	static const char *const parent_nb[] = { "MPI_Comm_idup", "MPI_Comm_idup_with_info" };
	static const char *const group[] = { "MPI_Comm_create_group", "MPI_Intercomm_create",
					     "MPI_Comm_create_from_group",
					     "MPI_Intercomm_create_from_groups" };
	if (fn >= NT_FN_COUNT)
		return CTOR_NONE;
	const char *name = nt_fn_name[fn];
	for (size_t i = 0; i < sizeof parent / sizeof *parent; i++)
		if (!strcmp(name, parent[i]))
			return CTOR_PARENT;
	for (size_t i = 0; i < sizeof parent_nb / sizeof *parent_nb; i++)
		if (!strcmp(name, parent_nb[i]))
			return CTOR_PARENT_NB;
	for (size_t i = 0; i < sizeof group / sizeof *group; i++)
		if (!strcmp(name, group[i]))
			return CTOR_GROUP;
	return CTOR_NONE;
}

/* A hash of a group's members' world ranks, in the group's rank order (the same on every
 * member). Linear in the group's size, like the constructor itself; a
 * few ranks at a time. */
static uint64_t group_hash(MPI_Group g)
{
	int n = 0;
	PMPI_Group_size(g, &n);
	uint64_t h = mix(0x6e6f697365ull, (uint64_t)n);
	int in[CHUNK], out[CHUNK];
	for (int i = 0; i < n; i += CHUNK) {
		int k = n - i < CHUNK ? n - i : CHUNK;
		for (int j = 0; j < k; j++)
			in[j] = i + j;
		if (PMPI_Group_translate_ranks(g, k, in, world_group, out) != MPI_SUCCESS)
			return h;
		for (int j = 0; j < k; j++)
			h = mix(h, (uint64_t)(uint32_t)out[j]);
	}
	return h;
}

/* The members of comm: for an intercommunicator both groups, in an order both sides agree on. */
static uint64_t members_hash(MPI_Comm comm)
{
	int inter = 0;
	PMPI_Comm_test_inter(comm, &inter);
	MPI_Group g;
	PMPI_Comm_group(comm, &g);
	uint64_t h = group_hash(g);
	PMPI_Group_free(&g);
	if (!inter)
		return h;
	PMPI_Comm_remote_group(comm, &g);
	uint64_t r = group_hash(g);
	PMPI_Group_free(&g);
	return h < r ? mix(h, r) : mix(r, h);
}

/* How many communicators with this key this rank made before (then counts this one). Locked.
 * UINT64_MAX when the counters are full. */
static uint64_t count_key(uint64_t key)
{
	size_t i = (size_t)(key % COUNTERS);
	for (size_t n = 0; n < COUNTERS; n++, i = (i + 1) % COUNTERS) {
		if (counters[i].key == key)
			return counters[i].n++;
		if (counters[i].key == 0) {
			counters[i].key = key;
			counters[i].n = 1;
			return 0;
		}
	}
	return UINT64_MAX;
}

static uint64_t finish_id(uint64_t h)
{
	/* 0 is MPI_COMM_WORLD, UINT64_MAX unknown, the 2^62 range MPI_COMM_SELF */
	h &= ~(1ull << 62);
	return h == 0 || h == NT_COMM_ID_UNKNOWN ? 1 : h;
}

/* The id of a child of kind made on parent p (NULL: unknown) as its index-th constructor, with
 * members, tag and stringtag. Locked. */
static uint64_t derive_id(enum ctor kind, const struct nt_comm *p, uint64_t index,
			  uint64_t members, int tag, const char *stringtag)
{
	if (kind != CTOR_GROUP)
		return p && p->id != NT_COMM_ID_UNKNOWN ? finish_id(mix(mix(p->id, index), members))
							: NT_COMM_ID_UNKNOWN;
	uint64_t t = (uint64_t)(uint32_t)tag;
	for (const char *s = stringtag; s && *s; s++)
		t = mix(t, (unsigned char)*s);
	uint64_t key = mix(mix(members, t), p ? p->id : 0x6f72706eull);
	uint64_t n = count_key(key ? key : 1);
	return n == UINT64_MAX ? NT_COMM_ID_UNKNOWN : finish_id(mix(key, n));
}

void nt_comms_created(unsigned fn, MPI_Comm parent, const MPI_Comm *newcomm, int tag,
		      const char *stringtag, int rc)
{
	enum ctor kind = ctor_of(fn);
	/* A refused constructor made nothing and is not counted: the parent's next constructor
	 * matches, on every member, what MPI matches it with. */
	if (!table || kind == CTOR_NONE || rc != MPI_SUCCESS)
		return;
	struct nt_comm *p = parent == MPI_COMM_NULL ? NULL : nt_comms_find(parent);
	uint64_t index = 0;
	if (p && kind != CTOR_GROUP)
		index = __atomic_fetch_add(&p->children, 1, __ATOMIC_RELAXED);
	/* Whether the parent's members agree on a vote for the child: the same on every member
	 * of the parent (votes on, agreed at init; the parent's vote, agreed when it was made;
	 * intercommunicators have none), inside the constructor, where every member of the
	 * parent is. */
	int pvote = kind == CTOR_PARENT && votes_on && p ? p->vote : -1;
	MPI_Comm child = newcomm ? *newcomm : MPI_COMM_NULL;
	if (child == MPI_COMM_NULL) {
		if (pvote >= 0)
			nt_votes_agree(pvote, parent, child, false);
		return;
	}
	uint64_t members = members_hash(kind == CTOR_PARENT_NB ? parent : child);
	pthread_mutex_lock(&lock);
	uint64_t id = derive_id(kind, p, index, members, tag, stringtag);
	/* A handle seen before (freed by a call the tool does not wrap) is replaced. */
	struct nt_comm *c = slot_for(child, true);
	if (c)
		*c = (struct nt_comm){ .handle = child, .used = true, .id = id, .vote = -1,
					.token = ++tokens };
	pthread_mutex_unlock(&lock);
	if (pvote < 0)
		return;
	int vote = nt_votes_agree(pvote, parent, child, c != NULL);
	if (vote < 0)
		return;
	pthread_mutex_lock(&lock);
	slot_for(child, false)->vote = vote; /* still there: the application has not seen it */
	pthread_mutex_unlock(&lock);
}

void nt_comms_votes_finish(void)
{
	if (votes_on)
		nt_votes_finish_all();
}

struct nt_comm_ref nt_comms_ref(MPI_Comm comm)
{
	struct nt_comm_ref ref = { 0, -1 };
	if (!table || comm == MPI_COMM_NULL)
		return ref;
	pthread_mutex_lock(&lock);
	const struct nt_comm *c = slot_for(comm, false);
	if (c && c->token)
		ref = (struct nt_comm_ref){ c->token, c->vote };
	pthread_mutex_unlock(&lock);
	return ref;
}

void nt_comms_forget(MPI_Comm comm, struct nt_comm_ref ref)
{
	if (!table || !ref.token)
		return;
	pthread_mutex_lock(&lock);
	struct nt_comm *c = slot_for(comm, false);
	if (c && c->token == ref.token) {
		/* Backward-shift deletion keeps the probe chains of linear probing intact. */
		/* A vacated slot's handle is cleared: a thread's cache that points at it misses
		 * (the fast path compares the handle only). */
		size_t i = (size_t)(c - table);
		c->used = false;
		c->handle = (MPI_Comm)0;
		for (size_t j = (i + 1) % capacity; table[j].used; j = (j + 1) % capacity) {
			struct nt_comm moved = table[j];
			table[j].used = false;
			table[j].handle = (MPI_Comm)0;
			*slot_for(moved.handle, true) = moved;
		}
	}
	pthread_mutex_unlock(&lock);
	/* Its last vote finishes in the background: a wait here for it would hang a program
	 * whose members free their communicators in different orders. */
	if (ref.vote >= 0)
		nt_votes_drop(ref.vote);
}
