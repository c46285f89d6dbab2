/* The adaptive-wait votes: point-to-point on the tool's communicator (votes.h). */
#include <pthread.h>
#include <string.h>

#include "votes.h"

enum {
	/* Tags on the tool's communicator: above its other ones (clock sync 4242, the summary's
	 * fewer than 64). A slot has 8: kind (vote, agreement) x parity x direction. */
	TAG_BASE = 8192,
	/* Slots: communicators with a vote that one rank is in at once, at most (as many as the
	 * communicator table's default 4,096; more than MPICH's 2,046 communicators). Fewer where
	 * MPI_TAG_UB is low: 3,072 at the 32,767 that every MPI allows (MPICH 4.0.2: 2^28 - 1,
	 * Open MPI 4.1.4: 2^31 - 1). */
	SLOTS_MAX = 4096,
	WORDS = SLOTS_MAX / 64,
	/* Up to this many members a vote goes from each member to every other (31 messages
	 * each at most), then along a binary tree. */
	DIRECT_MAX = 32,
	KIND_VOTE = 0,
	KIND_AGREE = 1,
	DIR_UP = 0,   /* to the root of the tree (and every message of a direct vote) */
	DIR_DOWN = 1, /* the result, from the root */
};

enum step {
	UNUSED = 0, /* a free state (zeroed memory) */
	IDLE,	    /* held, no vote in flight and none to take */
	DONE,	    /* the vote's result in acc */
	COLL,	    /* MPI_COMM_WORLD's allreduce pending (no slot free for it) */
	DIRECT,	    /* left messages from the other members to come */
	UP,	    /* left messages from the children to come */
	DOWN,	    /* the parent's result to come */
};

struct nt_vote {
	MPI_Request recv; /* the pending receive (or the world's allreduce) */
	int32_t slot;	  /* -1: none (the world's, where MPI_TAG_UB leaves no slot) */
	int32_t left;
	int32_t parent;	  /* tree: world ranks; -1 none */
	int32_t child[2];
	int32_t in, acc; /* the message received; the OR so far, then the result */
	uint8_t step;
	uint8_t parity;	 /* of the votes so far: consecutive votes' tags differ */
	uint8_t dropped; /* its communicator was freed: given back once done */
	uint8_t tree;	 /* the vote goes along a tree (by_tree) */
	uint8_t world;	 /* MPI_COMM_WORLD's */
};

/* What a vote sends, 0 or 1, from here: a send is freed, never waited for, so its buffer must
 * outlive it. */
static const int32_t bits[2] = { 0, 1 };

void (*nt_votes_pause_)(void);

/* Between two tests of a vote's wait (nt_votes_pause_). */
static void pause_between(void)
{
	void (*pause)(void) = __atomic_load_n(&nt_votes_pause_, __ATOMIC_ACQUIRE);
	if (pause)
		pause();
}

static struct nt_vote *votes;
static size_t capacity;
static uint64_t used[WORDS]; /* slots held by a state (locked) */
static int slots;	     /* slots this job has: the same on every rank */
static int active;	     /* states with a vote in flight (locked) */
static uint64_t counted[3];  /* votes finished: the world's, direct, by tree (locked) */
static MPI_Comm tool = MPI_COMM_NULL;
static MPI_Group world_group = MPI_GROUP_NULL;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

size_t nt_votes_bytes(size_t n)
{
	return n * sizeof *votes;
}

void nt_votes_init(void *mem, size_t n)
{
	votes = mem;
	capacity = n;
	active = 0;
	memset(used, 0, sizeof used);
	memset(counted, 0, sizeof counted);
}

static int tag(int slot, int kind, int parity, int dir)
{
	return TAG_BASE + slot * 8 + kind * 4 + parity * 2 + dir;
}

/* Whether a vote of v's communicator, of size members, goes along a tree: MPI_COMM_WORLD's
 * always (sent directly, 32 ranks' votes and agreements were 31 messages a rank each, which
 * most meet as unexpected: Open MPI's buffers for them left a rank 2.0-2.4 MiB past its records
 * in test many-ranks, which allows 1 MiB; 0.65-0.72 MiB along the tree), another's beyond
 * DIRECT_MAX members. */
static bool by_tree(const struct nt_vote *v, int size)
{
	return v->world || size > DIRECT_MAX;
}

/* A free state, held now, or -1. Locked. */
static int take(void)
{
	for (size_t i = 0; votes && i < capacity; i++)
		if (votes[i].step == UNUSED) {
			votes[i] = (struct nt_vote){ .recv = MPI_REQUEST_NULL, .slot = -1,
						     .parent = -1, .child = { -1, -1 }, .step = IDLE };
			return (int)i;
		}
	return -1;
}

/* Give v and its slot back. Locked. */
static void release(struct nt_vote *v)
{
	if (v->slot >= 0)
		used[v->slot / 64] &= ~(1ull << (v->slot % 64));
	v->step = UNUSED;
}

int nt_votes_enable(MPI_Comm tool_comm)
{
	tool = tool_comm;
	PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
	int *ub = NULL, flag = 0;
	PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	/* MPI_TAG_UB is the same on every process: so is the number of slots. */
	long long n = flag && ub ? ((long long)*ub - TAG_BASE + 1) / 8 : 0;
	slots = n >= SLOTS_MAX ? SLOTS_MAX : (int)(n / 64 * 64);
	pthread_mutex_lock(&lock);
	int w = take();
	if (w >= 0) {
		votes[w].world = 1;
		/* Slot 0, alike on every rank before any other is agreed: MPI_COMM_WORLD's votes
		 * go point to point like any other communicator's, not by a nonblocking allreduce,
		 * which under Open MPI would put the progress function of its nonblocking
		 * collectives into every MPI call for the rest of the job (runtime.c: tool_comm). */
		if (slots > 0) {
			used[0] |= 1;
			votes[w].slot = 0;
		}
	}
	pthread_mutex_unlock(&lock);
	return w;
}

static void send_free(int32_t value, int dest, int t)
{
	MPI_Request r;
	if (PMPI_Isend(&bits[value != 0], 1, MPI_INT, dest, t, tool, &r) == MPI_SUCCESS)
		PMPI_Request_free(&r);
}

static void finished(struct nt_vote *v)
{
	v->step = DONE;
	active--;
}

/* The result in acc goes down the tree. */
static void send_down(struct nt_vote *v)
{
	for (int i = 0; i < 2; i++)
		if (v->child[i] >= 0)
			send_free(v->acc, v->child[i], tag(v->slot, KIND_VOTE, v->parity, DIR_DOWN));
}

static void post(struct nt_vote *v, int source, int dir)
{
	if (PMPI_Irecv(&v->in, 1, MPI_INT, source, tag(v->slot, KIND_VOTE, v->parity, dir), tool,
		       &v->recv) != MPI_SUCCESS) {
		v->acc = 0;
		finished(v);
	}
}

/* Every child's OR is in acc: up to the parent, or (the root) down to the children. */
static void go_up(struct nt_vote *v)
{
	if (v->parent < 0) {
		send_down(v);
		finished(v);
		return;
	}
	send_free(v->acc, v->parent, tag(v->slot, KIND_VOTE, v->parity, DIR_UP));
	v->step = DOWN;
	post(v, v->parent, DIR_DOWN);
}

/* Take in what has come for v. Locked. Whether v is no longer in flight. */
static bool step(struct nt_vote *v)
{
	while (v->step >= COLL) {
		int flag = 0;
		if (PMPI_Test(&v->recv, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
			v->acc = 0;
			finished(v);
			break;
		}
		if (!flag)
			return false;
		switch (v->step) {
		case COLL:
			finished(v);
			break;
		case DIRECT:
			v->acc |= v->in;
			if (--v->left > 0)
				post(v, MPI_ANY_SOURCE, DIR_UP);
			else
				finished(v);
			break;
		case UP:
			v->acc |= v->in;
			if (--v->left > 0)
				post(v, MPI_ANY_SOURCE, DIR_UP);
			else
				go_up(v);
			break;
		case DOWN:
			v->acc = v->in;
			send_down(v);
			finished(v);
			break;
		}
	}
	return true;
}

/* Pass on every vote in flight; dropped ones that are done are given back. Locked. */
static void step_all(void)
{
	for (size_t i = 0; active > 0 && i < capacity; i++) {
		struct nt_vote *v = &votes[i];
		if (v->step >= COLL && step(v) && v->dropped)
			release(v);
	}
}

/* The world ranks of comm's ranks in[0..n) (MPI_UNDEFINED for one not in MPI_COMM_WORLD). */
static int world_ranks(MPI_Comm comm, int n, const int *in, int *out)
{
	MPI_Group g;
	if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
		return -1;
	int rc = PMPI_Group_translate_ranks(g, n, in, world_group, out);
	PMPI_Group_free(&g);
	for (int i = 0; i < n; i++)
		if (out[i] < 0)
			rc = -1;
	return rc == MPI_SUCCESS ? 0 : -1;
}

/* This rank's neighbours in comm's binary tree (rank r: parent (r-1)/2, children 2r+1, 2r+2),
 * as world ranks. */
static int tree_of(MPI_Comm comm, int rank, int size, int *parent, int child[2])
{
	int in[3], out[3], n = 0;
	if (rank > 0)
		in[n++] = (rank - 1) / 2;
	for (int i = 1; i <= 2; i++)
		if (2 * rank + i < size)
			in[n++] = 2 * rank + i;
	if (n && world_ranks(comm, n, in, out))
		return -1;
	int k = 0;
	*parent = rank > 0 ? out[k++] : -1;
	child[0] = 2 * rank + 1 < size ? out[k++] : -1;
	child[1] = 2 * rank + 2 < size ? out[k++] : -1;
	return 0;
}

void nt_votes_start(int i, MPI_Comm comm, int mine)
{
	struct nt_vote *v = &votes[i];
	int size = 1, rank = 0;
	int members[DIRECT_MAX], parent = -1, child[2] = { -1, -1 };
	bool ok = true;
	if (v->slot >= 0) {
		PMPI_Comm_size(comm, &size);
		PMPI_Comm_rank(comm, &rank);
		if (!by_tree(v, size)) {
			int in[DIRECT_MAX];
			for (int k = 0; k < size; k++)
				in[k] = k;
			ok = world_ranks(comm, size, in, members) == 0;
		} else {
			ok = tree_of(comm, rank, size, &parent, child) == 0;
		}
	}
	pthread_mutex_lock(&lock);
	v->parity ^= 1;
	v->tree = v->slot >= 0 && by_tree(v, size);
	v->acc = mine != 0;
	v->recv = MPI_REQUEST_NULL;
	active++;
	if (!ok) {
		/* Not reached: every member is in MPI_COMM_WORLD (a vote's communicator descends
		 * from it by blocking constructors). */
		v->acc = 0;
		finished(v);
	} else if (v->slot < 0) {
		v->step = COLL;
		if (PMPI_Iallreduce(&bits[mine != 0], &v->acc, 1, MPI_INT, MPI_BOR, tool, &v->recv) !=
		    MPI_SUCCESS) {
			v->acc = 0;
			finished(v);
		}
	} else if (!v->tree) {
		for (int k = 0; k < size; k++)
			if (k != rank)
				send_free(mine, members[k],
					  tag(v->slot, KIND_VOTE, v->parity, DIR_UP));
		v->step = DIRECT;
		v->left = size - 1;
		if (v->left > 0)
			post(v, MPI_ANY_SOURCE, DIR_UP);
		else
			finished(v);
	} else {
		v->parent = parent;
		v->child[0] = child[0];
		v->child[1] = child[1];
		v->step = UP;
		v->left = (child[0] >= 0) + (child[1] >= 0);
		if (v->left > 0)
			post(v, MPI_ANY_SOURCE, DIR_UP);
		else
			go_up(v);
	}
	step(v);
	pthread_mutex_unlock(&lock);
}

bool nt_votes_pending(int i)
{
	pthread_mutex_lock(&lock);
	bool pending = votes[i].step >= DONE;
	pthread_mutex_unlock(&lock);
	return pending;
}

void nt_votes_progress(int i)
{
	pthread_mutex_lock(&lock);
	if (votes[i].step == UP || votes[i].step == DOWN)
		step(&votes[i]); /* only a tree's members pass votes on */
	pthread_mutex_unlock(&lock);
}

int nt_votes_finish(int i)
{
	struct nt_vote *v = &votes[i];
	for (;;) {
		pthread_mutex_lock(&lock);
		bool done = step(v);
		if (!done)
			step_all();
		int acc = v->acc;
		if (done) {
			v->step = IDLE;
			counted[v->world ? 0 : v->tree ? 2 : 1]++;
		}
		pthread_mutex_unlock(&lock);
		if (done)
			return acc;
		pause_between();
	}
}

void nt_votes_drop(int i)
{
	pthread_mutex_lock(&lock);
	struct nt_vote *v = &votes[i];
	if (step(v))
		release(v);
	else
		v->dropped = 1;
	pthread_mutex_unlock(&lock);
}

void nt_votes_finish_all(void)
{
	for (;;) {
		pthread_mutex_lock(&lock);
		step_all();
		int left = active;
		pthread_mutex_unlock(&lock);
		if (!left)
			return;
		pause_between();
	}
}

void nt_votes_counts(uint64_t *world, uint64_t *direct, uint64_t *tree)
{
	pthread_mutex_lock(&lock);
	*world = counted[0];
	*direct = counted[1];
	*tree = counted[2];
	pthread_mutex_unlock(&lock);
}

/* Complete *r (one of an agreement's), passing on every vote meanwhile. */
static int wait_one(MPI_Request *r)
{
	for (;;) {
		int flag = 0;
		int rc = PMPI_Test(r, &flag, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		pthread_mutex_lock(&lock);
		step_all();
		pthread_mutex_unlock(&lock);
		pause_between();
	}
}

/* OR words[0..n) over parent's members (parent's vote state pv), round round (0 or 1) of an
 * agreement. Blocking, collective over parent. 0, or -1 when a call failed (on any member: the
 * members then act alike only if it failed everywhere). */
static int or_all(const struct nt_vote *pv, MPI_Comm parent, uint64_t *words, int n, int round)
{
	uint64_t got[WORDS];
	MPI_Request r;
	int rc = 0;
	if (pv->slot < 0) {
		/* MPI_COMM_WORLD: every rank is in its constructor */
		memcpy(got, words, (size_t)n * sizeof *got);
		if (PMPI_Iallreduce(got, words, n, MPI_UINT64_T, MPI_BOR, tool, &r) != MPI_SUCCESS)
			return -1;
		return wait_one(&r) == MPI_SUCCESS ? 0 : -1;
	}
	int size = 1, rank = 0;
	PMPI_Comm_size(parent, &size);
	PMPI_Comm_rank(parent, &rank);
	if (!by_tree(pv, size)) {
		int in[DIRECT_MAX], members[DIRECT_MAX];
		MPI_Request sends[DIRECT_MAX];
		int ns = 0;
		for (int k = 0; k < size; k++)
			in[k] = k;
		if (world_ranks(parent, size, in, members))
			return -1;
		uint64_t mine[WORDS];
		memcpy(mine, words, (size_t)n * sizeof *mine);
		int t = tag(pv->slot, KIND_AGREE, round, DIR_UP);
		for (int k = 0; k < size; k++)
			if (k != rank &&
			    PMPI_Isend(mine, n, MPI_UINT64_T, members[k], t, tool, &sends[ns++]) !=
				    MPI_SUCCESS)
				rc = -1;
		for (int k = 1; k < size && !rc; k++) {
			if (PMPI_Irecv(got, n, MPI_UINT64_T, MPI_ANY_SOURCE, t, tool, &r) !=
				    MPI_SUCCESS ||
			    wait_one(&r) != MPI_SUCCESS)
				rc = -1;
			for (int j = 0; j < n; j++)
				words[j] |= got[j];
		}
		for (int k = 0; k < ns; k++)
			if (wait_one(&sends[k]) != MPI_SUCCESS)
				rc = -1;
		return rc;
	}
	int up, child[2];
	if (tree_of(parent, rank, size, &up, child))
		return -1;
	for (int i = 0; i < 2 && !rc; i++) {
		if (child[i] < 0)
			continue;
		if (PMPI_Irecv(got, n, MPI_UINT64_T, child[i], tag(pv->slot, KIND_AGREE, round, DIR_UP),
			       tool, &r) != MPI_SUCCESS ||
		    wait_one(&r) != MPI_SUCCESS)
			rc = -1;
		for (int j = 0; j < n; j++)
			words[j] |= got[j];
	}
	if (!rc && up >= 0 &&
	    (PMPI_Isend(words, n, MPI_UINT64_T, up, tag(pv->slot, KIND_AGREE, round, DIR_UP), tool,
			&r) != MPI_SUCCESS ||
	     wait_one(&r) != MPI_SUCCESS ||
	     PMPI_Irecv(words, n, MPI_UINT64_T, up, tag(pv->slot, KIND_AGREE, round, DIR_DOWN), tool,
			&r) != MPI_SUCCESS ||
	     wait_one(&r) != MPI_SUCCESS))
		rc = -1;
	for (int i = 0; i < 2 && !rc; i++)
		if (child[i] >= 0 &&
		    (PMPI_Isend(words, n, MPI_UINT64_T, child[i],
				tag(pv->slot, KIND_AGREE, round, DIR_DOWN), tool, &r) != MPI_SUCCESS ||
		     wait_one(&r) != MPI_SUCCESS))
			rc = -1;
	return rc;
}

int nt_votes_agree(int pvi, MPI_Comm parent, MPI_Comm child, bool room)
{
	const struct nt_vote *pv = &votes[pvi];
	int size = 0;
	if (child != MPI_COMM_NULL)
		PMPI_Comm_size(child, &size);
	bool want = size > 1;
	int n = slots / 64, mine = -1;
	uint64_t words[WORDS] = { 0 };
	if (n == 0)
		return -1; /* the same on every rank */
	/* Round 0: the slots taken on any member of the parent (all, where a member has no
	 * room); the child's is the lowest free one. */
	pthread_mutex_lock(&lock);
	if (want && room)
		mine = take();
	if (want)
		for (int k = 0; k < n; k++)
			words[k] = mine >= 0 ? used[k] : UINT64_MAX;
	pthread_mutex_unlock(&lock);
	int slot = -1;
	if (or_all(pv, parent, words, n, 0) == 0)
		for (int k = 0; k < n && slot < 0; k++)
			if (~words[k])
				slot = k * 64 + __builtin_ctzll(~words[k]);
	/* Round 1, always (its messages tell rounds of one parent apart): whether every member
	 * could claim it (another thread's constructor may have taken it since round 0). */
	pthread_mutex_lock(&lock);
	uint64_t failed = 0, bit = slot >= 0 ? 1ull << (slot % 64) : 0;
	bool claimed = false;
	if (mine >= 0 && slot >= 0) {
		if (used[slot / 64] & bit)
			failed = 1;
		else
			used[slot / 64] |= bit, claimed = true;
	}
	pthread_mutex_unlock(&lock);
	if (or_all(pv, parent, &failed, 1, 1) != 0)
		failed = 1;
	pthread_mutex_lock(&lock);
	if (mine >= 0 && (slot < 0 || failed)) {
		if (claimed)
			used[slot / 64] &= ~bit;
		release(&votes[mine]);
		mine = -1;
	} else if (mine >= 0) {
		votes[mine].slot = slot;
	}
	pthread_mutex_unlock(&lock);
	return mine;
}
