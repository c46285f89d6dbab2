/* The tables of outstanding instances and of persistent collectives. */
#include <pthread.h>
#include <string.h>

#include "comms.h"
#include "live.h"
#include "nbreqs.h"
#include "records.h"
#include "sites.h"
#include "thread.h"

/* A request and what it stands for: an outstanding instance (t0, seq, phase set) or a
 * persistent collective (comm set). */
struct entry {
	MPI_Request req;
	int used;
	int pos;        /* with mark: its position in a wait/test call's array */
	uint64_t mark;  /* that call's token (0: none) */
	uint64_t serial; /* this entry, unique in the process (nt_request_ref) */
	struct nt_site *site;
	MPI_Comm comm;
	uint64_t comm_id, t0_cyc, seq, phase_cyc, bytes;
};

/* Open addressing with linear probing, keyed by the request handle; capacity entries each, in
 * the rank's fixed memory (arena.h). Without it (the tool off), nothing is tracked. */
struct table {
	struct entry *e;
	int *count; /* changed atomically: read without the lock */
	uint64_t full; /* entries that did not fit */
	enum nt_loss loss; /* how the live file counts them */
};

int nt_nb_outstanding_;
int nt_persistent_;
static struct table outstanding = { .count = &nt_nb_outstanding_, .loss = NT_LOSS_UNTIMED };
static struct table persistent = { .count = &nt_persistent_, .loss = NT_LOSS_UNREGISTERED };
static size_t capacity;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* both tables */
static uint64_t serials; /* entries put so far (locked) */

size_t nt_requests_bytes(size_t n)
{
	return 2 * n * sizeof(struct entry);
}

void nt_requests_init(void *mem, size_t n)
{
	pthread_mutex_lock(&lock);
	outstanding.e = mem;
	persistent.e = mem ? outstanding.e + n : NULL;
	capacity = mem ? n : 0;
	outstanding.full = persistent.full = 0;
	pthread_mutex_unlock(&lock);
}

static size_t slot_of(MPI_Request r)
{
	return (size_t)(((uint64_t)(uintptr_t)r * 0x9e3779b97f4a7c15ull) >> 40) % capacity;
}

/* Insert or replace (a reused handle replaces an entry whose end we never saw). Locked. */
static void put(struct table *t, const struct entry *x)
{
	if (!capacity) {
		t->full++;
		nt_live_lost(t->loss, 1);
		return;
	}
	size_t i = slot_of(x->req);
	for (size_t n = 0; n < capacity; n++, i = (i + 1) % capacity) {
		if (!t->e[i].used || t->e[i].req == x->req) {
			if (!t->e[i].used && __atomic_fetch_add(t->count, 1, __ATOMIC_RELAXED) == 0 &&
			    t == &outstanding)
				__atomic_store_n(&nt_gate_.g.b.requests, 1, __ATOMIC_RELAXED);
			t->e[i] = *x;
			t->e[i].used = 1;
			t->e[i].serial = ++serials;
			return;
		}
	}
	t->full++;
	nt_live_lost(t->loss, 1);
}

static struct entry *find(struct table *t, MPI_Request request)
{
	if (!capacity)
		return NULL;
	size_t i = slot_of(request);
	for (size_t n = 0; n < capacity && t->e[i].used; n++, i = (i + 1) % capacity)
		if (t->e[i].req == request)
			return &t->e[i];
	return NULL;
}

/* Remove request's entry into *out (backward-shift deletion keeps probe chains whole). */
static int take(struct table *t, MPI_Request request, struct entry *out)
{
	struct entry *x = find(t, request);
	if (!x)
		return 0;
	*out = *x;
	x->used = 0;
	if (__atomic_sub_fetch(t->count, 1, __ATOMIC_RELAXED) == 0 && t == &outstanding)
		__atomic_store_n(&nt_gate_.g.b.requests, 0, __ATOMIC_RELAXED);
	size_t i = (size_t)(x - t->e);
	for (size_t j = (i + 1) % capacity; t->e[j].used; j = (j + 1) % capacity) {
		struct entry moved = t->e[j];
		t->e[j].used = 0;
		size_t k = slot_of(moved.req);
		while (t->e[k].used)
			k = (k + 1) % capacity;
		t->e[k] = moved;
	}
	return 1;
}

void nt_nb_track(MPI_Request request, struct nt_site *s, uint64_t t0_cyc, uint64_t comm_id,
		 uint64_t seq, uint64_t phase_cyc, uint64_t bytes)
{
	struct entry x = { .req = request, .site = s, .comm = MPI_COMM_NULL, .comm_id = comm_id,
			   .t0_cyc = t0_cyc, .seq = seq, .phase_cyc = phase_cyc, .bytes = bytes };
	pthread_mutex_lock(&lock);
	put(&outstanding, &x);
	pthread_mutex_unlock(&lock);
}

void nt_persistent_add(MPI_Request request, struct nt_site *s, MPI_Comm comm, uint64_t bytes)
{
	struct entry x = { .req = request, .site = s, .comm = comm, .bytes = bytes };
	pthread_mutex_lock(&lock);
	put(&persistent, &x);
	pthread_mutex_unlock(&lock);
}

struct nt_request_ref nt_requests_ref(MPI_Request request)
{
	struct nt_request_ref ref = { 0, 0 };
	pthread_mutex_lock(&lock);
	const struct entry *o = find(&outstanding, request), *p = find(&persistent, request);
	ref.outstanding = o ? o->serial : 0;
	ref.persistent = p ? p->serial : 0;
	pthread_mutex_unlock(&lock);
	return ref;
}

/* Take request's entry out of t if it is still the one numbered serial. Locked. */
static void take_if(struct table *t, MPI_Request request, uint64_t serial)
{
	struct entry *e = serial ? find(t, request) : NULL, x;
	if (e && e->serial == serial)
		take(t, request, &x);
}

void nt_requests_forget(MPI_Request request, struct nt_request_ref ref)
{
	pthread_mutex_lock(&lock);
	take_if(&outstanding, request, ref.outstanding);
	take_if(&persistent, request, ref.persistent);
	pthread_mutex_unlock(&lock);
}

void nt_start_persistent(const MPI_Request *reqs, int n, uint64_t t0_cyc, uint64_t phase_cyc)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		struct entry *p = find(&persistent, reqs[i]);
		struct entry x = p ? *p : (struct entry){ 0 };
		pthread_mutex_unlock(&lock);
		if (!p)
			continue; /* persistent point-to-point, or created before recording */
		/* Starts of persistent collectives happen in the same order on every member, so
		 * they are numbered on the communicator like any other instance. */
		struct nt_comm *cs = nt_comms_find(x.comm);
		uint64_t seq = cs ? nt_comms_next_seq(cs) : 0;
		if (__atomic_load_n(&nt_paused_, __ATOMIC_RELAXED))
			continue; /* numbered, not timed: recording is paused */
		nt_nb_track(reqs[i], x.site, t0_cyc, cs ? cs->id : NT_COMM_ID_UNKNOWN, seq,
			    phase_cyc, x.bytes);
	}
}

static uint64_t next_token;

void nt_wait_snapshot(struct nt_reqsnap *snap, const MPI_Request *reqs, int n)
{
	snap->token = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < n; i++) {
		if (reqs[i] == MPI_REQUEST_NULL)
			continue;
		struct entry *x = find(&outstanding, reqs[i]);
		if (!x)
			continue; /* point-to-point, or not tracked */
		if (snap->n < NT_SNAP_MAX) {
			snap->h[snap->n] = reqs[i];
			snap->idx[snap->n] = i;
			snap->n++;
			continue;
		}
		if (!snap->token)
			snap->token = ++next_token;
		x->mark = snap->token;
		x->pos = i;
		snap->more++;
	}
	pthread_mutex_unlock(&lock);
}

static int reported_done(const struct nt_done *done, int rc, int idx)
{
	if (rc != MPI_SUCCESS)
		return 0;
	if (done->all || (done->index && *done->index == idx))
		return 1;
	for (int k = 0; done->outcount && k < *done->outcount; k++)
		if (done->indices[k] == idx)
			return 1;
	return 0;
}

/* The instance p completed at t1_cyc: its time joins its site, and a record when it matters
 * (none while recording is paused: it leaves the table all the same). */
static void completed(const struct entry *p, uint64_t t1_cyc)
{
	if (__atomic_load_n(&nt_paused_, __ATOMIC_RELAXED))
		return;
	uint64_t d = t1_cyc - p->t0_cyc;
	nt_sites_add(p->site, d, p->bytes);
	uint64_t calls = nt_sites_calls(p->site);
	if (nt_recpolicy_may_act(&nt_thread_.rec, &p->site->rec, calls, p->seq, d, p->phase_cyc,
				 true, true)) {
		struct nt_rec_instance in = { .calls = calls, .seq = p->seq, .t0_cyc = p->t0_cyc,
					      .t1_cyc = t1_cyc, .span_cyc = p->phase_cyc,
					      .completion = true };
		nt_records_instance(p->site, p->comm_id, p->seq, &in, p->phase_cyc, 0);
	}
}

void nt_wait_complete(const struct nt_reqsnap *snap, const MPI_Request *reqs, uint64_t t1_cyc,
		      int rc, struct nt_done done)
{
	for (int k = 0; k < snap->n; k++) {
		if (reqs[snap->idx[k]] != MPI_REQUEST_NULL && !reported_done(&done, rc, snap->idx[k]))
			continue; /* still pending (a test) */
		struct entry p;
		pthread_mutex_lock(&lock);
		int found = take(&outstanding, snap->h[k], &p);
		pthread_mutex_unlock(&lock);
		if (found)
			completed(&p, t1_cyc);
	}
	if (!snap->more)
		return;
	/* The slow path: the marked entries, found by a scan of the table. Taking one moves
	 * others (backward shift), so the scan starts over after each; a handle that completed
	 * cannot come back before this call returns. */
	for (int left = snap->more; left > 0;) {
		struct entry p;
		int found = 0;
		pthread_mutex_lock(&lock);
		for (size_t i = 0; i < capacity && !found; i++) {
			struct entry *x = &outstanding.e[i];
			if (!x->used || x->mark != snap->token)
				continue;
			left--;
			if (reqs[x->pos] != MPI_REQUEST_NULL && !reported_done(&done, rc, x->pos)) {
				x->mark = 0; /* still pending */
				continue;
			}
			found = take(&outstanding, x->req, &p);
		}
		pthread_mutex_unlock(&lock);
		if (!found)
			break;
		completed(&p, t1_cyc);
	}
}

uint64_t nt_requests_untimed(void)
{
	pthread_mutex_lock(&lock);
	uint64_t n = outstanding.full;
	pthread_mutex_unlock(&lock);
	return n;
}

uint64_t nt_requests_unregistered(void)
{
	pthread_mutex_lock(&lock);
	uint64_t n = persistent.full;
	pthread_mutex_unlock(&lock);
	return n;
}
