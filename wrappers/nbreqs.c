/* The table of outstanding nonblocking collectives. */
#include <pthread.h>
#include <string.h>

#include "call.h"
#include "comms.h"
#include "nbreqs.h"
#include "records.h"
#include "sites.h"

enum { CAPACITY = 4096 };

struct pending {
	MPI_Request req;
	int used;
	struct nt_site *site;
	struct nt_comm *comm;
	uint64_t t0_cyc, seq, phase_cyc;
};

static struct pending table[CAPACITY];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
volatile int nt_nb_outstanding_;
static uint64_t untracked;

static size_t slot_of(MPI_Request r)
{
	return (size_t)(((uint64_t)(uintptr_t)r * 0x9e3779b97f4a7c15ull) >> 40) % CAPACITY;
}

void nt_nb_track(MPI_Request request, struct nt_site *s, uint64_t t0_cyc, struct nt_comm *comm,
		 uint64_t seq, uint64_t phase_cyc)
{
	pthread_mutex_lock(&lock);
	size_t i = slot_of(request);
	for (size_t n = 0; n < CAPACITY; n++, i = (i + 1) % CAPACITY) {
		if (!table[i].used || table[i].req == request) {
			/* A reused handle replaces a completion we never saw (e.g. MPI_Request_free). */
			if (!table[i].used)
				nt_nb_outstanding_++;
			table[i] = (struct pending){ request, 1, s, comm, t0_cyc, seq, phase_cyc };
			pthread_mutex_unlock(&lock);
			return;
		}
	}
	untracked++;
	pthread_mutex_unlock(&lock);
}

void nt_wait_snapshot(struct nt_reqsnap *snap, const MPI_Request *reqs, int n)
{
	for (int i = 0; i < n && snap->n < NT_SNAP_MAX; i++) {
		if (reqs[i] == MPI_REQUEST_NULL)
			continue;
		snap->h[snap->n] = reqs[i];
		snap->idx[snap->n] = i;
		snap->n++;
	}
}

/* Remove and return request's entry (deletion by backward shift keeps probe chains whole). */
static int take(MPI_Request request, struct pending *out)
{
	size_t i = slot_of(request);
	for (size_t n = 0; n < CAPACITY && table[i].used; n++, i = (i + 1) % CAPACITY) {
		if (table[i].req != request)
			continue;
		*out = table[i];
		table[i].used = 0;
		nt_nb_outstanding_--;
		for (size_t j = (i + 1) % CAPACITY; table[j].used; j = (j + 1) % CAPACITY) {
			struct pending moved = table[j];
			table[j].used = 0;
			size_t k = slot_of(moved.req);
			while (table[k].used)
				k = (k + 1) % CAPACITY;
			table[k] = moved;
		}
		return 1;
	}
	return 0;
}

void nt_wait_complete(const struct nt_reqsnap *snap, const MPI_Request *reqs, uint64_t t1_cyc)
{
	for (int k = 0; k < snap->n; k++) {
		if (reqs[snap->idx[k]] != MPI_REQUEST_NULL)
			continue; /* still pending (test), or a persistent request */
		struct pending p;
		pthread_mutex_lock(&lock);
		int found = take(snap->h[k], &p);
		pthread_mutex_unlock(&lock);
		if (!found)
			continue; /* a point-to-point request, or one started before recording */
		uint64_t d = t1_cyc - p.t0_cyc;
		nt_sites_add(p.site, d);
		if (d > p.site->slow_cyc || (p.site->calls & 1023) == 1) {
			struct nt_call c = { p.t0_cyc, t1_cyc };
			nt_call_record(p.site, p.comm, p.seq, &c, p.phase_cyc);
		}
	}
}
