/* The communicator table. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "comms.h"

enum { CAPACITY = 4096 }; /* MPICH allows at most 2048 context ids at once */

static struct nt_comm *table;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int my_world_rank;
bool nt_comms_threaded_;
static uint32_t created; /* ids this rank handed out as the lowest member */

static struct nt_comm *slot_for(MPI_Comm comm, bool insert)
{
	uint64_t h = (uint64_t)(uintptr_t)comm * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 40) % CAPACITY;
	for (size_t n = 0; n < CAPACITY; n++, i = (i + 1) % CAPACITY) {
		if (table[i].used && table[i].handle == comm)
			return &table[i];
		if (!table[i].used)
			return insert ? &table[i] : NULL;
	}
	return NULL;
}

int nt_comms_init(int world_rank, bool is_threaded)
{
	void *p = mmap(NULL, CAPACITY * sizeof *table, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	table = p;
	my_world_rank = world_rank;
	nt_comms_threaded_ = is_threaded;
	struct nt_comm *w = slot_for(MPI_COMM_WORLD, true);
	*w = (struct nt_comm){ .handle = MPI_COMM_WORLD, .used = true, .id = 0 };
	struct nt_comm *s = slot_for(MPI_COMM_SELF, true);
	*s = (struct nt_comm){ .handle = MPI_COMM_SELF, .used = true,
				.id = (1ull << 62) | (uint64_t)world_rank };
	return 0;
}

/* id = lowest member's world rank << 32 | that member's count of ids handed out. */
static uint64_t agree_id(MPI_Comm comm)
{
	int inter = 0;
	PMPI_Comm_test_inter(comm, &inter);
	if (inter)
		return NT_COMM_ID_UNKNOWN;
	int lowest;
	PMPI_Allreduce(&my_world_rank, &lowest, 1, MPI_INT, MPI_MIN, comm);
	unsigned mine = 0, count = 0;
	if (lowest == my_world_rank)
		mine = ++created;
	PMPI_Allreduce(&mine, &count, 1, MPI_UNSIGNED, MPI_MAX, comm);
	return ((uint64_t)(uint32_t)lowest << 32) | count;
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
	struct nt_comm *c = nt_comms_find(comm);
	if (c || !table)
		return c;
	uint64_t id = agree_id(comm); /* collective: outside the lock */
	pthread_mutex_lock(&lock);
	c = slot_for(comm, true);
	if (c && !c->used)
		*c = (struct nt_comm){ .handle = comm, .used = true, .id = id };
	pthread_mutex_unlock(&lock);
	return c;
}

void nt_comms_forget(MPI_Comm comm)
{
	if (!table)
		return;
	pthread_mutex_lock(&lock);
	struct nt_comm *c = slot_for(comm, false);
	if (c) {
		/* Backward-shift deletion keeps the probe chains of linear probing intact. */
		size_t i = (size_t)(c - table);
		c->used = false;
		for (size_t j = (i + 1) % CAPACITY; table[j].used; j = (j + 1) % CAPACITY) {
			struct nt_comm moved = table[j];
			table[j].used = false;
			*slot_for(moved.handle, true) = moved;
		}
	}
	pthread_mutex_unlock(&lock);
}
