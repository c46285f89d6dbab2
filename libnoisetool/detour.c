/* The selfish-detour loop: read the counter back to back, record every gap above the
 * threshold, classify each as preempted (the thread's schedstat run count moved) or not, and note
 * which softirq kinds ran on the CPU during it (/proc/softirqs read before and after). */
#include "nt-config.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>
#include <noisetool/detour.h>
#include <noisetool/sysinfo.h>

#include <noisetool-private/softirqcol.h>

#include "cpurun.h"
#include "run-os.h"

static size_t default_capacity(double seconds)
{
	double c = seconds * 50000.0;
	if (c < 65536)
		c = 65536;
	if (c > (double)(1u << 24))
		c = (double)(1u << 24);
	return (size_t)c;
}

static int check_config(const struct nt_detour_config *cfg)
{
	if (!cfg || !(cfg->seconds > 0) || !isfinite(cfg->seconds) || cfg->seconds > 1e6)
		return -EINVAL;
	return 0;
}

/* The timed loop. Raw cycles go into d[i].start_ns / duration_ns and are converted after. */
struct loop {
	uint64_t thr_cyc;       /* in: threshold */
	uint64_t duration_cyc;  /* in: how long to run */
	uint64_t start_cyc;     /* out: counter at the first read */
	uint64_t stop_cyc;      /* out: counter at the last read */
	struct nt_detour *d;
	size_t cap, count, dropped;
	uint64_t min_cyc, raw_min_cyc, iterations;
	const struct nt_run_os_meter *rs; /* schedstat for classification, NULL when off */
	uint64_t last_run_count;
	uint64_t bk_cyc;        /* undisturbed cost of the bookkeeping after a detour */
	struct nt_softirq_col *sq; /* the CPU's softirq counts, NULL when not read */
	uint64_t sq_min_cyc;    /* undisturbed cost of a softirq read */
	uint64_t sq_spent_cyc;  /* all reads so far (the 2 % budget) */
	uint64_t sq_blind_cyc;  /* of them, the reads not inside a detour */
	uint64_t sq_reads;
	bool sq_fresh;          /* the last detour was read after: the next one's reading is its own */
	const struct nt_detour_config *cfg;
	int cpu;
};

static void report_progress(struct loop *l, uint64_t now)
{
	if (!l->cfg->progress)
		return;
	double elapsed_s = nt_clock_cyc_to_ns(now - l->start_cyc) / 1e9;
	l->cfg->progress(l->cfg->progress_ctx, l->cpu, elapsed_s, l->cfg->seconds);
}

/* Whether the thread was preempted since the last call (its schedstat run count moved). */
static uint32_t classify(struct loop *l)
{
	uint64_t run_count;
	uint32_t flags = 0;
	if (l->rs && nt_run_os_run_count(l->rs, &run_count) == 0) {
		if (run_count != l->last_run_count)
			flags = NT_DETOUR_PREEMPTED;
		l->last_run_count = run_count;
	}
	return flags;
}

/* The undisturbed cost of the bookkeeping after a detour: the fastest of a few classifications
 * (a schedstat read, 0.54-0.59 us here under a load). */
static uint64_t bookkeeping_cyc(struct loop *l)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t t0 = nt_clock_now_cyc();
		classify(l);
		uint64_t t = nt_clock_now_cyc() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

/* Softirq reads may take 2 % of the loop's time, and 100 us from the start. */
#define SQ_BUDGET_DIV 50
#define SQ_ALLOW_NS 100000.0

/* After detour d (NULL: it was dropped) that began at prev: which softirq kinds ran on the CPU
 * since the previous reading (the previous detour's, or the loop's start). A detour whose
 * previous one went unread (over the budget) gets no bits: its reading covers both. A read
 * slowed by more than half its undisturbed cost and the threshold was interrupted: as in the
 * bookkeeping, that time was taken from the loop and extends the detour. Returns the counter at
 * the end of the read, where the loop resumes. */
static uint64_t softirqs_after(struct loop *l, struct nt_detour *d, uint64_t prev, uint64_t now)
{
	if (l->sq_spent_cyc * SQ_BUDGET_DIV > now - l->start_cyc + nt_clock_ns_to_cyc(SQ_ALLOW_NS)) {
		l->sq_fresh = false;
		return now;
	}
	uint32_t moved;
	int rc = nt_softirq_col_read(l->sq, &moved);
	uint64_t end = nt_clock_now_cyc(), spent = end - now;
	l->sq_spent_cyc += spent;
	l->sq_reads++;
	bool interrupted = spent > l->sq_min_cyc + l->sq_min_cyc / 2 + l->thr_cyc;
	if (d && interrupted) {
		d->duration_ns = end - prev; /* raw cycles until convert() */
		d->flags |= classify(l);
	} else {
		l->sq_blind_cyc += spent;
	}
	if (rc != 0) {
		l->sq = NULL; /* the file changed shape: no more reads */
		l->sq_fresh = false;
		return end;
	}
	if (d && l->sq_fresh)
		d->flags |= NT_DETOUR_SOFTIRQS_READ | moved << NT_DETOUR_SOFTIRQ_SHIFT;
	l->sq_fresh = true;
	return end;
}

/* The undisturbed cost of a softirq read: the fastest of a few (the last one is the baseline of
 * the first detour's). */
static uint64_t softirq_read_cyc(struct loop *l)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint32_t moved;
		uint64_t t0 = nt_clock_now_cyc();
		nt_softirq_col_read(l->sq, &moved);
		uint64_t t = nt_clock_now_cyc() - t0;
		if (t < best)
			best = t;
	}
	l->sq_fresh = true;
	return best;
}

static void run_loop(struct loop *l)
{
	const uint64_t thr = l->thr_cyc;
	uint64_t min = UINT64_MAX, iters = 0;
	uint64_t hist[NT_TMIN_HIST] = { 0 };
	const uint64_t one_s_cyc = nt_clock_ns_to_cyc(1e9);
	uint64_t cur = nt_clock_now_cyc();
	l->start_cyc = cur;
	const uint64_t end = cur + l->duration_cyc;
	/* One compare per iteration covers both the end and the once-a-second progress report. */
	uint64_t next_check = cur + (one_s_cyc < l->duration_cyc ? one_s_cyc : l->duration_cyc);

	for (;;) {
		uint64_t prev = cur;
		cur = nt_clock_now_cyc();
		uint64_t gap = cur - prev;
		iters++;
		if (gap < min)
			min = gap;
		if (NT_UNLIKELY((iters & NT_TMIN_SAMPLE_MASK) == 0) && gap < NT_TMIN_HIST)
			hist[gap]++;
		if (NT_UNLIKELY(gap > thr)) {
			uint32_t flags = classify(l);
			/* The bookkeeping is not loop time, but an interruption inside it is time
			 * taken from the loop: it extends this detour (under a load, preemptions at
			 * the return of the schedstat read hid 14 ms holding two injected detours
			 * about once a run), up to where the loop resumes. The undisturbed cost of
			 * each interrupted read stays in: subtracting it ended the detour that much
			 * before the loop resumed, and after a preemption under a load up to 29
			 * reads in a row ran slow (17 us early, an injected detour ending 13 us
			 * after the recorded end). */
			for (;;) {
				uint64_t after = nt_clock_now_cyc(), spent = after - cur;
				cur = after;
				if (spent <= l->bk_cyc + thr)
					break;
				gap = after - prev;
				flags |= classify(l);
			}
			struct nt_detour *d = NULL;
			if (l->count < l->cap) {
				d = &l->d[l->count++];
				*d = (struct nt_detour){ prev, gap, flags };
			} else {
				l->dropped++;
			}
			if (l->sq)
				cur = softirqs_after(l, d, prev, cur);
		}
		if (NT_UNLIKELY(cur >= next_check)) {
			if (cur >= end)
				break;
			report_progress(l, cur);
			next_check += one_s_cyc;
			if (next_check > end)
				next_check = end;
			cur = nt_clock_now_cyc();
		}
	}
	l->raw_min_cyc = min;
	l->min_cyc = nt_detour_tmin_from_hist(hist, NT_TMIN_HIST);
	if (l->min_cyc == 0)
		l->min_cyc = min;
	l->iterations = iters;
	l->stop_cyc = cur;
}

static void convert(struct loop *l, struct nt_detour_result *res)
{
	uint64_t tmin = l->min_cyc;
	for (size_t i = 0; i < l->count; i++) {
		struct nt_detour *d = &l->d[i];
		uint64_t start_cyc = d->start_ns - l->start_cyc + tmin;
		uint64_t dur_cyc = d->duration_ns > tmin ? d->duration_ns - tmin : 0;
		d->start_ns = (uint64_t)llround(nt_clock_cyc_to_ns(start_cyc));
		d->duration_ns = (uint64_t)llround(nt_clock_cyc_to_ns(dur_cyc));
	}
	res->t_min_cyc = tmin;
	res->t_min_ns = nt_clock_cyc_to_ns(tmin);
	res->t_min_raw_cyc = l->raw_min_cyc;
	res->start_cyc = l->start_cyc;
	res->elapsed_ns = (uint64_t)llround(nt_clock_cyc_to_ns(l->stop_cyc - l->start_cyc));
	res->iterations = l->iterations;
	res->count = l->count;
	res->dropped = l->dropped;
	res->detours = l->d;
	res->softirq_reads = l->sq_reads;
	res->softirq_read_ns = (uint64_t)llround(nt_clock_cyc_to_ns(l->sq_blind_cyc));
}

int nt_detour_measure(const struct nt_detour_config *cfg, struct nt_detour_result *res)
{
	int rc = check_config(cfg);
	if (rc || !res)
		return rc ? rc : -EINVAL;
	memset(res, 0, sizeof *res);
	res->cpu = cfg->cpu;
	nt_clock_init();
	if (cfg->cpu >= 0 && (rc = nt_pin_self(cfg->cpu)) != 0)
		return rc;

	struct loop l = { .cfg = cfg, .cpu = cfg->cpu };
	res->threshold_ns = cfg->threshold_ns ? cfg->threshold_ns : NT_DETOUR_DEFAULT_THRESHOLD_NS;
	l.thr_cyc = nt_clock_ns_to_cyc((double)res->threshold_ns);
	l.duration_cyc = nt_clock_ns_to_cyc(cfg->seconds * 1e9);
	l.cap = cfg->capacity ? cfg->capacity : default_capacity(cfg->seconds);
	l.d = malloc(l.cap * sizeof *l.d);
	if (!l.d)
		return -ENOMEM;
	memset(l.d, 0, l.cap * sizeof *l.d); /* pre-fault: no page fault inside the loop */

	struct nt_run_os_meter rs;
	nt_run_os_open(&rs);
	if (rs.schedstat_fd >= 0 && !cfg->no_classify)
		l.rs = &rs;
	res->classified = l.rs != NULL;
	struct nt_softirq_col sq;
	if (l.rs && cfg->cpu >= 0 && nt_softirq_col_open(&sq, NULL, cfg->cpu) == 0) {
		l.sq = &sq;
		res->softirqs = sq.kinds;
	}
	if (nt_cpurun_ready() != 0) {
		free(l.d);
		nt_run_os_close(&rs);
		if (l.sq)
			nt_softirq_col_close(l.sq);
		return -ECANCELED;
	}
	/* Baselines after the start gate, where the thread may have slept. */
	l.bk_cyc = bookkeeping_cyc(&l);
	if (l.sq)
		l.sq_min_cyc = softirq_read_cyc(&l);
	nt_run_os_begin(&rs);
	l.last_run_count = rs.run_count0;
	run_loop(&l);
	nt_run_os_end(&rs);
	nt_run_os_close(&rs);
	if (res->softirqs.n)
		nt_softirq_col_close(&sq); /* l.sq may be NULL by now: the file changed shape */
	res->os = rs.out;
	convert(&l, res);
	return 0;
}

struct multi {
	const struct nt_detour_config *cfg;
	struct nt_detour_result *res;
};

static int measure_one(void *ctx, size_t i, int cpu)
{
	const struct multi *m = ctx;
	struct nt_detour_config c = *m->cfg;
	c.cpu = cpu;
	return nt_detour_measure(&c, &m->res[i]);
}

int nt_detour_measure_cpus(const struct nt_detour_config *cfg, const int *cpus, size_t ncpus,
			   struct nt_detour_result *res)
{
	int rc = check_config(cfg);
	if (rc || !cpus || !res || ncpus == 0)
		return rc ? rc : -EINVAL;
	nt_clock_init();
	memset(res, 0, ncpus * sizeof *res);
	struct multi m = { cfg, res };
	rc = nt_cpurun_measure(cpus, ncpus, measure_one, &m);
	if (rc)
		for (size_t i = 0; i < ncpus; i++)
			nt_detour_result_free(&res[i]);
	return rc;
}

void nt_detour_result_free(struct nt_detour_result *res)
{
	if (!res)
		return;
	free(res->detours);
	res->detours = NULL;
	res->count = 0;
}

uint64_t nt_detour_tmin_from_hist(const uint64_t *hist, size_t nbins)
{
	uint64_t total = 0;
	for (size_t g = 0; g < nbins; g++)
		total += hist[g];
	if (total == 0)
		return 0;
	uint64_t below = 0;
	for (size_t g = 0; g < nbins; g++) {
		below += hist[g];
		if (2 * below >= total)
			return g;
	}
	return 0;
}

void nt_detour_bare_loop(uint64_t iterations, struct nt_loop_timing *out)
{
	uint64_t hist[NT_TMIN_HIST] = { 0 };
	uint64_t min = UINT64_MAX;
	uint64_t start = nt_clock_now_cyc(), cur = start;
	for (uint64_t i = 0; i < iterations; i++) {
		uint64_t prev = cur;
		cur = nt_clock_now_cyc();
		uint64_t gap = cur - prev;
		if (gap < min)
			min = gap;
		if (NT_UNLIKELY((i & NT_TMIN_SAMPLE_MASK) == 0) && gap < NT_TMIN_HIST)
			hist[gap]++;
	}
	out->iterations = iterations;
	out->raw_min_cyc = min;
	out->t_min_cyc = nt_detour_tmin_from_hist(hist, NT_TMIN_HIST);
	out->mean_cyc = iterations ? (double)(cur - start) / (double)iterations : 0;
}
