/* The probe: one per thread, reading every working source; rate-limited windows. */
#include "nt-config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>
#include <noisetool/probe.h>

#include "probe-source.h"

static const struct nt_probe_source_ops *const sources[] = {
	&nt_probe_source_rusage,
	&nt_probe_source_schedstat,
	/* After schedstat, whose CPU time it replaces: schedstat's run time of a running thread
	 * is only brought up to date at ticks and switches (a 1 ms spin read 2 to 880 us here),
	 * the thread CPU clock is exact. schedstat still gives the run delay. */
	&nt_probe_source_thread_cpu,
	&nt_probe_source_papi,
	&nt_probe_source_null,
};
enum { NSOURCES = sizeof sources / sizeof sources[0] };

struct nt_probe {
	struct nt_probe_config cfg;
	uint32_t working;                 /* NT_SRC_* bits that opened */
	const struct nt_probe_source_ops *open_ops[NSOURCES];
	void *state[NSOURCES];
	int nopen;
	uint64_t read_cost_cyc;           /* one full read, measured at open */
	struct nt_probe_stats stats;
};

static int bit_index(uint32_t bit)
{
	return bit ? __builtin_ctz(bit) : 0;
}

int nt_probe_open(struct nt_probe **out, const struct nt_probe_config *cfg)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	struct nt_probe_config c = { .level = NT_PROBE_OS };
	if (cfg)
		c = *cfg;
	if (c.level < NT_PROBE_TIMING || c.level > NT_PROBE_FULL)
		return -EINVAL;

	nt_clock_init();
	struct nt_probe *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	p->cfg = c;
	p->working = NT_SRC_COUNTER;
	for (int i = 0; i < NSOURCES; i++) {
		const struct nt_probe_source_ops *ops = sources[i];
		if (c.level < ops->min_level)
			continue;
		void *st = NULL;
		uint32_t bits = ops->open(&st, &p->cfg);
		if (!bits) {
			ops->close(st);
			continue;
		}
		p->open_ops[p->nopen] = ops;
		p->state[p->nopen] = st;
		p->nopen++;
		p->working |= bits;
	}

	/* The cost of a full read, for the report (and the first read warms every source). */
	struct nt_probe_sample s;
	uint64_t t0 = nt_clock_now_cyc();
	nt_probe_read(p, &s);
	p->read_cost_cyc = nt_clock_now_cyc() - t0;
	p->stats.reads = 0;
	*out = p;
	return 0;
}

void nt_probe_close(struct nt_probe *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nopen; i++)
		p->open_ops[i]->close(p->state[i]);
	free(p);
}

uint32_t nt_probe_sources(const struct nt_probe *p)
{
	return p ? p->working : 0;
}

const char *nt_probe_source_name(uint32_t bit)
{
	switch (bit) {
	case NT_SRC_COUNTER:
		return "counter";
	case NT_SRC_RUSAGE:
		return "getrusage";
	case NT_SRC_SCHEDSTAT:
		return "schedstat";
	case NT_SRC_THREAD_CPU:
		return "thread-cpu";
	case NT_SRC_PAPI_SW:
		return "papi-sw";
	case NT_SRC_PAPI_HW:
		return "papi-hw";
	}
	return "unknown";
}

int nt_probe_read(struct nt_probe *p, struct nt_probe_sample *s)
{
	if (!p || !s)
		return -EINVAL;
	memset(s, 0, sizeof *s);
	s->counter_cyc = nt_clock_now_cyc();
	s->valid = NT_SRC_COUNTER;
	for (int i = 0; i < p->nopen; i++) {
		const struct nt_probe_source_ops *ops = p->open_ops[i];
		uint32_t got = ops->read(p->state[i], s);
		uint32_t missing = ops->bits & p->working & ~got;
		while (missing) {
			uint32_t bit = missing & -missing;
			p->stats.failures[bit_index(bit)]++;
			missing &= ~bit;
		}
		s->valid |= got;
	}
	p->stats.reads++;
	return 0;
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : 0;
}

void nt_probe_delta(const struct nt_probe_sample *a, const struct nt_probe_sample *b,
		    struct nt_probe_delta *d)
{
	memset(d, 0, sizeof *d);
	d->valid = a->valid & b->valid;
	d->papi_valid = a->papi_valid & b->papi_valid;
	d->wall_cyc = sub(a->counter_cyc, b->counter_cyc);
#define DELTA(field, source, what)                                                             \
	if (d->valid & (source))                                                               \
		d->field = sub(a->field, b->field);
	NT_PROBE_FIELDS(DELTA)
#undef DELTA
	for (int i = 0; i < NT_PAPI_MAX; i++)
		if (d->papi_valid & (1u << i))
			d->papi[i] = sub(a->papi[i], b->papi[i]);
}

void nt_probe_get_stats(const struct nt_probe *p, struct nt_probe_stats *st)
{
	if (!p || !st)
		return;
	*st = p->stats;
	st->read_cost_ns = nt_clock_cyc_to_ns(p->read_cost_cyc);
}
