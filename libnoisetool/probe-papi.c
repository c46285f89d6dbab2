/* PAPI probe source: perf software events always (when PAPI initialises), hardware events at
 * level full when the machine has a PMU. Any PAPI failure turns the source off for that
 * thread; the rest of the probe goes on. In a VM without a PMU only software events exist, and
 * context switches / migrations read 0 in the user domain (getrusage and schedstat cover them). */
#include "nt-config.h"

#include <stdlib.h>

#include "probe-source.h"

#if NT_HAVE_PAPI
#include <pthread.h>
#include <papi.h>

static const struct {
	const char *name;
	enum nt_probe_papi_event slot;
	uint32_t bit;
} papi_events[] = {
	{ "perf::CONTEXT-SWITCHES", NT_PAPI_CTX_SWITCHES, NT_SRC_PAPI_SW },
	{ "perf::CPU-MIGRATIONS", NT_PAPI_MIGRATIONS, NT_SRC_PAPI_SW },
	{ "perf::PAGE-FAULTS", NT_PAPI_PAGE_FAULTS, NT_SRC_PAPI_SW },
	{ "perf::TASK-CLOCK", NT_PAPI_TASK_CLOCK_NS, NT_SRC_PAPI_SW },
	{ "PAPI_TOT_INS", NT_PAPI_INSTRUCTIONS, NT_SRC_PAPI_HW },
	{ "PAPI_TOT_CYC", NT_PAPI_CYCLES, NT_SRC_PAPI_HW },
};
enum { NEVENTS = sizeof papi_events / sizeof papi_events[0] };

struct papi_state {
	int evset;
	int nslots;
	enum nt_probe_papi_event slot_of[NEVENTS]; /* position in PAPI_read's array -> slot */
	uint32_t papi_valid;
	uint32_t bits;
};

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static int lib_ok;

static unsigned long thread_id(void)
{
	return (unsigned long)pthread_self();
}

static void lib_init(void)
{
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return;
	if (PAPI_thread_init(thread_id) != PAPI_OK)
		return;
	lib_ok = 1;
}

static uint32_t papi_open(void **state, const struct nt_probe_config *cfg)
{
	*state = NULL;
	if (cfg->disable_papi)
		return 0;
	pthread_once(&lib_once, lib_init);
	if (!lib_ok)
		return 0;
	struct papi_state *st = calloc(1, sizeof *st);
	if (!st)
		return 0;
	st->evset = PAPI_NULL;
	if (PAPI_create_eventset(&st->evset) != PAPI_OK)
		goto fail;
	for (int i = 0; i < NEVENTS; i++) {
		if (papi_events[i].bit == NT_SRC_PAPI_HW && cfg->level < NT_PROBE_FULL)
			continue;
		if (PAPI_add_named_event(st->evset, papi_events[i].name) != PAPI_OK)
			continue;
		st->slot_of[st->nslots++] = papi_events[i].slot;
		st->papi_valid |= 1u << papi_events[i].slot;
		st->bits |= papi_events[i].bit;
	}
	if (st->nslots == 0 || PAPI_start(st->evset) != PAPI_OK)
		goto fail;
	*state = st;
	return st->bits;
fail:
	if (st->evset != PAPI_NULL) {
		PAPI_cleanup_eventset(st->evset);
		PAPI_destroy_eventset(&st->evset);
	}
	free(st);
	return 0;
}

static uint32_t papi_read(void *state, struct nt_probe_sample *s)
{
	struct papi_state *st = state;
	long long v[NEVENTS];
	if (PAPI_read(st->evset, v) != PAPI_OK)
		return 0;
	for (int i = 0; i < st->nslots; i++)
		s->papi[st->slot_of[i]] = (uint64_t)v[i];
	s->papi_valid = st->papi_valid;
	return st->bits;
}

static void papi_close(void *state)
{
	struct papi_state *st = state;
	if (!st)
		return;
	long long v[NEVENTS];
	PAPI_stop(st->evset, v);
	PAPI_cleanup_eventset(st->evset);
	PAPI_destroy_eventset(&st->evset);
	free(st);
}

const struct nt_probe_source_ops nt_probe_source_papi = {
	.name = "papi",
	.bits = NT_SRC_PAPI_SW | NT_SRC_PAPI_HW,
	.min_level = NT_PROBE_OS,
	.open = papi_open,
	.read = papi_read,
	.close = papi_close,
};

#else /* !NT_HAVE_PAPI */

static uint32_t papi_open(void **state, const struct nt_probe_config *cfg)
{
	(void)cfg;
	*state = NULL;
	return 0;
}

static uint32_t papi_read(void *state, struct nt_probe_sample *s)
{
	(void)state;
	(void)s;
	return 0;
}

static void papi_close(void *state)
{
	(void)state;
}

const struct nt_probe_source_ops nt_probe_source_papi = {
	.name = "papi (not built)",
	.bits = 0,
	.min_level = NT_PROBE_OS,
	.open = papi_open,
	.read = papi_read,
	.close = papi_close,
};
#endif
