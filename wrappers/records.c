/* The records, in their part of the rank's fixed memory (arena.h), and the recording policy's
 * mechanism that keeps them. Slots are claimed atomically whatever the threading: the path is
 * rare. */
#include <stddef.h>

#include <noisetool/clock.h>

#include "comms.h"
#include "cpushare.h"
#include "live.h"
#include "records.h"

_Static_assert(sizeof(struct nt_record) == NT_RECORD_BYTES, "a record's size, as stated");
#include "sites.h"
#include "thread.h"

static struct nt_record *arena;
static size_t capacity;
static size_t used;
static uint64_t dropped;
static uint64_t unknown_comm;

#define FIELD(member) NT_LIVE_FIELD(struct nt_record, member)

void nt_records_live_fields(struct nt_live_field r[NT_LRF_COUNT])
{
	r[NT_LRF_COMM_ID] = FIELD(comm_id);
	r[NT_LRF_SEQ] = FIELD(seq);
	r[NT_LRF_SITE] = FIELD(site);
	r[NT_LRF_FLAGS] = FIELD(flags);
	r[NT_LRF_T0] = FIELD(t0_cyc);
	r[NT_LRF_DURATION] = FIELD(d_cyc);
	r[NT_LRF_PHASE] = FIELD(phase_cyc);
	r[NT_LRF_INTERVAL] = FIELD(interval_cyc);
	r[NT_LRF_P2P] = FIELD(p2p_cyc);
#define WINDOW_FIELD(id, name, kind, source, since, key)                                        \
	r[NT_LRF_WIN_##id] = FIELD(win.NT_LOG_WINDOW_RAW(kind, name));
	NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
	r[NT_LRF_WIN_VALID] = FIELD(win.valid);
}

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

void nt_records_reset(bool threaded)
{
	size_t n = nt_records_count();
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&arena[i].flags, 0, __ATOMIC_RELEASE);
	if (!threaded)
		used = 0;
}

/* The rank's first reading of the node's tasks (nt_records_first_reading). */
static struct nt_cpushare *reading;

void nt_records_first_reading(struct nt_cpushare *c)
{
	reading = c;
}

uint64_t nt_records_dropped(void)
{
	return dropped;
}

const struct nt_record *nt_records_get(size_t i)
{
	return i < nt_records_count() ? &arena[i] : NULL;
}

void nt_records_instance(struct nt_site *s, uint64_t comm_id, uint64_t seq,
			 const struct nt_rec_instance *in, uint64_t phase_cyc, uint64_t p2p_cyc)
{
	struct nt_thread *t = &nt_thread_;
	nt_live_beat(in->t1_cyc); /* rate-limited: the policy lets few instances here */
	struct nt_rec_decision dec = nt_recpolicy_at_instance(&t->rec, &s->rec, in);
	if (dec.refresh)
		nt_recpolicy_refresh(&s->rec, in->calls,
				     __atomic_load_n(&s->total_cyc, __ATOMIC_RELAXED),
				     __atomic_load_n(&s->phase_cyc, __ATOMIC_RELAXED),
				     nt_clock_ns_to_cyc(NT_REC_SPAN_FLOOR_NS),
				     nt_clock_ns_to_cyc(NT_REC_ABS_FLOOR_NS));
	if (dec.close_window) {
		struct nt_window_read rd;
		if (nt_window_close(in->t1_cyc, &rd) == 0) {
			nt_window_counted(nt_recpolicy_window_closed(&t->rec, in->t1_cyc,
								      rd.end_cyc, rd.cost_cyc,
								      dec.on_grid));
			/* The first reading of the node's tasks, when it is due (cpushare.h). */
			if (dec.on_grid && reading)
				nt_recpolicy_spent(&t->rec, nt_cpushare_step(reading, in->seq));
		} else { /* no probe: no windows on this thread from here on */
			nt_recpolicy_thread_init(&t->rec);
			dec.flags &= ~NT_REC_WINDOW;
		}
	}
	if (!dec.flags)
		return;
	if (comm_id == NT_COMM_ID_UNKNOWN) {
		/* No other member can name this instance: no join, no place in the arena. */
		__atomic_fetch_add(&unknown_comm, 1, __ATOMIC_RELAXED);
		nt_live_lost(NT_LOSS_UNKNOWN_COMM, 1);
		return;
	}
	struct nt_record r = {
		.comm_id = comm_id,
		.seq = seq,
		.site = nt_sites_index(s),
		.flags = dec.flags,
		.t0_cyc = in->t0_cyc,
		.d_cyc = in->t1_cyc - in->t0_cyc,
		.phase_cyc = phase_cyc,
		.interval_cyc = in->interval ? in->span_cyc : 0,
		.p2p_cyc = p2p_cyc,
	};
	if (dec.flags & NT_REC_WINDOW)
		r.win = *nt_window_last();
	nt_records_add(&r);
}

uint64_t nt_records_unknown_comm(void)
{
	return __atomic_load_n(&unknown_comm, __ATOMIC_RELAXED);
}

void nt_records_windows_open(enum nt_probe_level level, uint64_t now_cyc)
{
	uint64_t costs_cyc[NT_REC_FIRST_READS];
	if (nt_window_open(level, costs_cyc, NT_REC_FIRST_READS) == 0)
		nt_recpolicy_windows_open(&nt_thread_.rec, now_cyc, costs_cyc, NT_REC_FIRST_READS);
	else
		nt_recpolicy_thread_init(&nt_thread_.rec);
}
