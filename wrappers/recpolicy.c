/* The recording policy's decisions: records kept and their flags, thresholds, probe windows. */
#include "recpolicy.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t load(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

static void store(uint64_t *v, uint64_t x)
{
	__atomic_store_n(v, x, __ATOMIC_RELAXED);
}

void nt_recpolicy_init(struct nt_rec_thresholds *th, uint64_t abs_cyc)
{
	/* Atomic: MPI_Pcontrol(2) resets a site other threads may be calling. */
	store(&th->slow_cyc, UINT64_MAX);
	store(&th->slow_span_cyc, UINT64_MAX);
	store(&th->keep_cyc, abs_cyc);
	store(&th->keep_span_cyc, abs_cyc);
	store(&th->refresh_at, NT_REC_REFRESH_FIRST);
}

bool nt_recpolicy_refresh(struct nt_rec_thresholds *th, uint64_t calls, uint64_t total_cyc,
			  uint64_t span_sum_cyc, uint64_t floor_cyc, uint64_t abs_cyc)
{
	uint64_t at = load(&th->refresh_at);
	uint64_t next = at < NT_REC_REFRESH_EVERY ? 2 * at : at + NT_REC_REFRESH_EVERY;
	if (calls < at || !__atomic_compare_exchange_n(&th->refresh_at, &at, next, false,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return false; /* another thread refreshes */
	uint64_t slow = NT_REC_SLOW_MEANS * (total_cyc / calls);
	uint64_t mean_span = span_sum_cyc / calls;
	uint64_t margin = mean_span / NT_REC_LONG_SPAN_MARGIN;
	uint64_t slow_span = mean_span + (margin > floor_cyc ? margin : floor_cyc);
	uint64_t abs = calls > NT_REC_ABS_CALLS ? abs_cyc * (calls / NT_REC_ABS_CALLS) : abs_cyc;
	store(&th->slow_cyc, slow);
	store(&th->slow_span_cyc, slow_span);
	store(&th->keep_cyc, min_u64(slow, abs));
	store(&th->keep_span_cyc, min_u64(slow_span, abs));
	return true;
}

void nt_recpolicy_thread_init(struct nt_rec_thread *rt)
{
	*rt = (struct nt_rec_thread)NT_REC_THREAD_NONE;
}

void nt_recpolicy_windows_open(struct nt_rec_thread *rt, uint64_t open_cyc,
			       const uint64_t *costs_cyc, int n)
{
	uint64_t least = UINT64_MAX;
	for (int i = 0; i < n; i++)
		least = min_u64(least, costs_cyc[i]);
	*rt = (struct nt_rec_thread){ .grid_mask = 0, .read_cost_cyc = least,
				      .grid_from_cyc = open_cyc, .credit_at_cyc = open_cyc };
}

/* The records' early reads' credit at now_cyc: what it held at credit_at_cyc, grown by half
 * the budget of the time since, up to NT_REC_EARLY_BURST reads at the estimated cost. */
static uint64_t early_credit(const struct nt_rec_thread *rt, uint64_t now_cyc)
{
	uint64_t cap = NT_REC_EARLY_BURST * rt->read_cost_cyc;
	uint64_t elapsed = now_cyc > rt->credit_at_cyc ? now_cyc - rt->credit_at_cyc : 0;
	double credit = (double)rt->credit_cyc + NT_REC_READ_BUDGET / 2 * (double)elapsed;
	return credit < (double)cap ? (uint64_t)credit : cap;
}

uint64_t nt_recpolicy_window_closed(struct nt_rec_thread *rt, uint64_t end_cyc,
				    uint64_t read_end_cyc, uint64_t cost_cyc, bool on_grid)
{
	if (!on_grid) { /* an early read spends its estimated cost from the credit */
		uint64_t credit = early_credit(rt, end_cyc);
		rt->credit_cyc = credit > rt->read_cost_cyc ? credit - rt->read_cost_cyc : 0;
		rt->credit_at_cyc = end_cyc;
	}
	uint64_t est = rt->read_cost_cyc;
	if (est && cost_cyc > NT_REC_COST_CLAMP * est)
		cost_cyc = NT_REC_COST_CLAMP * est;
	rt->read_cost_cyc =
		est ? (est * (NT_REC_COST_WEIGHT - 1) + cost_cyc) / NT_REC_COST_WEIGHT : cost_cyc;
	rt->window_end_cyc = end_cyc;
	rt->spent_cyc += cost_cyc;
	if (!on_grid)
		return cost_cyc;
	/* The share of the time since the last grid read that reads took, with what it pays of
	 * other readings' cost; each step of m halves or doubles the reads to come. */
	uint64_t elapsed = read_end_cyc > rt->grid_from_cyc ? read_end_cyc - rt->grid_from_cyc : 0;
	if (rt->owed_cyc) { /* what the reads left of the budget, at least NT_REC_OWED_SHARE */
		double room = NT_REC_READ_BUDGET * (double)elapsed - (double)rt->spent_cyc;
		double least = NT_REC_OWED_SHARE * (double)elapsed;
		uint64_t pay = (uint64_t)(room > least ? room : least);
		if (pay > rt->owed_cyc)
			pay = rt->owed_cyc;
		rt->owed_cyc -= pay;
		rt->spent_cyc += pay;
	}
	double share = elapsed ? (double)rt->spent_cyc / (double)elapsed : 1;
	unsigned m = (unsigned)__builtin_popcountll(rt->grid_mask);
	while (share > NT_REC_READ_BUDGET && m < NT_REC_GRID_MAX_BITS) {
		share /= 2;
		m++;
	}
	while (m > 0 && 2 * share <= NT_REC_READ_BUDGET) {
		share *= 2;
		m--;
	}
	rt->grid_mask = (1ull << m) - 1;
	rt->grid_from_cyc = read_end_cyc;
	rt->spent_cyc = 0;
	return cost_cyc;
}

void nt_recpolicy_spent(struct nt_rec_thread *rt, uint64_t cost_cyc)
{
	rt->owed_cyc += cost_cyc;
}

/* Whether a record's early read at now_cyc is affordable: the early reads' credit holds its
 * estimated cost (NT_REC_EARLY_BURST). Without a bound, early reads were bounded only by their
 * spans: an 8-byte allreduce loop with a 45 us gap every 100 calls (Intel, a read 1.3 us) made
 * one at every gap, 1.35 % of its time in reads and the default level 1.028x the timing
 * level. */
static bool early_read_affordable(const struct nt_rec_thread *rt, uint64_t now_cyc)
{
	return early_credit(rt, now_cyc) >= rt->read_cost_cyc;
}

struct nt_rec_decision nt_recpolicy_at_instance(const struct nt_rec_thread *rt,
						const struct nt_rec_thresholds *th,
						const struct nt_rec_instance *in)
{
	struct nt_rec_decision dec = { 0 };
	bool windows = rt->grid_mask != UINT64_MAX;
	/* Windows end at blocking collective instances on the grid, so that a window spans whole
	 * intervals between them (point-to-point phases included), and every member of the
	 * communicator reads at the same instances. */
	dec.close_window = windows && !in->completion && nt_recpolicy_on_grid(rt, in->seq);
	dec.on_grid = dec.close_window;

	/* One load of each threshold: the keep test and the flags agree even while another
	 * thread refreshes them. */
	uint64_t d = in->t1_cyc - in->t0_cyc;
	uint64_t keep = load(&th->keep_cyc), keep_span = load(&th->keep_span_cyc);
	uint64_t slow = load(&th->slow_cyc), slow_span = load(&th->slow_span_cyc);
	uint64_t refresh_at = load(&th->refresh_at);
	/* A completion's span is before its start, which alone does not keep it. */
	uint64_t keep_by_span = in->completion ? 0 : in->span_cyc;
	if (!(d > keep || keep_by_span > keep_span || in->calls >= refresh_at))
		return dec;
	uint32_t flags = (d > slow ? NT_REC_SLOW : 0) |
			 (in->span_cyc > slow_span ? NT_REC_LONG_PHASE : 0) |
			 (in->calls >= refresh_at ? NT_REC_SAMPLE : 0);
	if (!flags)
		flags = NT_REC_ABSOLUTE; /* over keep_cyc or keep_span_cyc, under the slow ones */
	dec.refresh = flags & NT_REC_SAMPLE;

	/* A record may end its window early: what it covers is the phase, or the whole
	 * interval since the previous collective (samples come at the same instance on every
	 * member, so that their windows can be compared), and the call itself, where a member
	 * held inside it (preempted, blocked) shows (issue 34: a 12 ms call after a 20 us phase
	 * had no window, its hold not measured). These reads come out of the budget:
	 * one is made only while the reads since the last grid read, with it, stay within half
	 * the budget of the time since (early_read_affordable), and the grid widens when
	 * they take its share. */
	if (windows && !dec.close_window && rt->window_end_cyc != in->t1_cyc &&
	    (in->span_cyc + d) / NT_REC_AFFORD_SPANS >= rt->read_cost_cyc &&
	    early_read_affordable(rt, in->t1_cyc))
		dec.close_window = true;
	if (windows && (dec.close_window || rt->window_end_cyc == in->t1_cyc))
		flags |= NT_REC_WINDOW;
	if (in->interval && in->span_cyc)
		flags |= NT_REC_INTERVAL;
	dec.flags = flags;
	return dec;
}
