/* The recording policy's decisions: records kept, thresholds, the window limiter. */
#include "recpolicy.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void nt_recpolicy_init(struct nt_rec_thresholds *th, uint64_t abs_cyc)
{
	th->slow_cyc = UINT64_MAX;
	th->slow_span_cyc = UINT64_MAX;
	th->keep_cyc = abs_cyc;
	th->keep_span_cyc = abs_cyc;
	th->refresh_at = NT_REC_REFRESH_FIRST;
}

static uint64_t load(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

static void store(uint64_t *v, uint64_t x)
{
	__atomic_store_n(v, x, __ATOMIC_RELAXED);
}

uint32_t nt_recpolicy_flags(const struct nt_rec_thresholds *th, uint64_t calls, uint64_t d_cyc,
			    uint64_t span_cyc)
{
	uint32_t f = (d_cyc > load(&th->slow_cyc) ? NT_REC_SLOW : 0) |
		     (span_cyc > load(&th->slow_span_cyc) ? NT_REC_LONG_PHASE : 0) |
		     (calls >= load(&th->refresh_at) ? NT_REC_SAMPLE : 0);
	if (!f && (d_cyc > load(&th->keep_cyc) || span_cyc > load(&th->keep_span_cyc)))
		f = NT_REC_ABSOLUTE;
	return f;
}

void nt_recpolicy_refresh(struct nt_rec_thresholds *th, uint64_t calls, uint64_t total_cyc,
			  uint64_t span_sum_cyc, uint64_t floor_cyc, uint64_t abs_cyc)
{
	/* Often at first, while the means settle, then every 1024: a sample is also a record
	 * that every member of the communicator keeps at the same instance. */
	uint64_t at = load(&th->refresh_at);
	uint64_t next = at < NT_REC_REFRESH_EVERY ? 2 * at : at + NT_REC_REFRESH_EVERY;
	if (calls < at || !__atomic_compare_exchange_n(&th->refresh_at, &at, next, false,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return; /* another thread refreshes */
	uint64_t slow = 3 * (total_cyc / calls);
	uint64_t mean_span = span_sum_cyc / calls;
	uint64_t slow_span = mean_span + (mean_span / 2 > floor_cyc ? mean_span / 2 : floor_cyc);
	uint64_t abs = calls > NT_REC_ABS_CALLS ? abs_cyc * (calls / NT_REC_ABS_CALLS) : abs_cyc;
	store(&th->slow_cyc, slow);
	store(&th->slow_span_cyc, slow_span);
	store(&th->keep_cyc, min_u64(slow, abs));
	store(&th->keep_span_cyc, min_u64(slow_span, abs));
}

uint32_t nt_recpolicy_record_flags(uint64_t window_end_cyc, uint64_t t1_cyc,
				   uint64_t interval_cyc)
{
	return (window_end_cyc == t1_cyc ? NT_REC_WINDOW : 0) |
	       (interval_cyc ? NT_REC_INTERVAL : 0);
}

void nt_recpolicy_read_init(struct nt_rec_reads *rl)
{
	*rl = (struct nt_rec_reads){ 0 };
}

uint64_t nt_recpolicy_read_done(struct nt_rec_reads *rl, uint64_t end_cyc, uint64_t cost_cyc)
{
	/* Taken whole, one 200 us detour in a read pushed the next read 2.6 ms away here. */
	if (rl->cost_cyc && cost_cyc > 2 * rl->cost_cyc)
		cost_cyc = 2 * rl->cost_cyc;
	rl->cost_cyc = rl->cost_cyc ? (rl->cost_cyc * 7 + cost_cyc) / 8 : cost_cyc;
	return end_cyc + (uint64_t)((double)rl->cost_cyc / NT_REC_READ_BUDGET);
}

bool nt_recpolicy_read_affordable(const struct nt_rec_reads *rl, uint64_t span_cyc)
{
	return span_cyc >= 20 * rl->cost_cyc;
}

bool nt_recpolicy_record_ends_window(const struct nt_rec_reads *rl, uint64_t window_end_cyc,
				     uint64_t t1_cyc, uint64_t span_cyc)
{
	return window_end_cyc != t1_cyc && nt_recpolicy_read_affordable(rl, span_cyc);
}
