/* FTQ and FWQ loops and their conversion to detours. */
#include "nt-config.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>
#include <noisetool/ftq.h>
#include <noisetool/sysinfo.h>

#include "cpurun.h"
#include "run-os.h"

/* One basic operation: a short dependent chain the compiler cannot remove (~5 ns). */
static inline uint64_t basic_op(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static volatile uint64_t sink;

static int check_config(const struct nt_ftq_config *cfg)
{
	if (!cfg || !(cfg->seconds > 0) || !isfinite(cfg->seconds) || cfg->seconds > 1e6)
		return -EINVAL;
	if (cfg->mode != NT_FTQ && cfg->mode != NT_FWQ)
		return -EINVAL;
	if (cfg->quantum_ns < 1000 || cfg->quantum_ns > 10ull * 1000 * 1000 * 1000)
		return -EINVAL;
	if (cfg->seconds * 1e9 / (double)cfg->quantum_ns > NT_FTQ_MAX_SAMPLES)
		return -EINVAL;
	return 0;
}

static void progress(const struct nt_ftq_config *cfg, double elapsed_s)
{
	if (cfg->progress)
		cfg->progress(cfg->progress_ctx, cfg->cpu, elapsed_s, cfg->seconds);
}

/* FTQ: count basic operations (each followed by a counter read) in fixed quanta. A detour
 * longer than a quantum leaves the quanta it covers at 0. After a progress report the grid
 * restarts, so the report's cost falls in no quantum. */
static void ftq_loop(const struct nt_ftq_config *cfg, struct nt_ftq_result *r)
{
	const uint64_t q = nt_clock_ns_to_cyc((double)cfg->quantum_ns);
	const size_t per_s = (size_t)(1e9 / (double)cfg->quantum_ns);
	uint64_t x = 88172645463325252ull, count = 0;
	r->start_cyc = nt_clock_now_cyc();
	uint64_t next = r->start_cyc + q;
	size_t i = 0, next_report = per_s;
	while (i < r->nsamples) {
		x = basic_op(x);
		count++;
		uint64_t now = nt_clock_now_cyc();
		if (NT_LIKELY(now < next))
			continue;
		r->samples[i++] = count;
		count = 0;
		next += q;
		while (now >= next && i < r->nsamples) {
			r->samples[i++] = 0;
			next += q;
		}
		if (NT_UNLIKELY(i >= next_report && i < r->nsamples)) {
			progress(cfg, (double)i * (double)cfg->quantum_ns / 1e9);
			next_report += per_s;
			next = nt_clock_now_cyc() + q;
		}
	}
	sink = x;
	r->elapsed_ns = r->nsamples * cfg->quantum_ns;
	uint64_t best = 0, total = 0;
	for (size_t k = 0; k < r->nsamples; k++) {
		total += r->samples[k];
		if (r->samples[k] > best)
			best = r->samples[k];
	}
	r->best = best;
	r->noise_ratio = best ? 1.0 - (double)total / ((double)best * (double)r->nsamples) : 0;
}

/* Operations that take about target_ns undisturbed: the fastest of several trials. */
static uint64_t calibrate_ops(uint64_t target_ns)
{
	const uint64_t trial_ops = 100000;
	uint64_t best = UINT64_MAX, x = 1;
	for (int t = 0; t < 10; t++) {
		uint64_t t0 = nt_clock_now_cyc();
		for (uint64_t k = 0; k < trial_ops; k++)
			x = basic_op(x);
		uint64_t d = nt_clock_now_cyc() - t0;
		if (d < best)
			best = d;
	}
	sink = x;
	double ns_per_op = nt_clock_cyc_to_ns(best) / (double)trial_ops;
	uint64_t ops = (uint64_t)((double)target_ns / (ns_per_op > 0 ? ns_per_op : 1));
	return ops ? ops : 1;
}

/* FWQ: time a fixed number of operations, again and again. */
static void fwq_loop(const struct nt_ftq_config *cfg, struct nt_ftq_result *r)
{
	r->work_ops = calibrate_ops(cfg->quantum_ns);
	const uint64_t ops = r->work_ops;
	uint64_t x = 88172645463325252ull, total_ns = 0, best = UINT64_MAX;
	const uint64_t budget_ns = (uint64_t)(cfg->seconds * 1e9);
	uint64_t next_report = 1000000000ull;
	size_t i = 0;
	r->start_cyc = nt_clock_now_cyc();
	while (i < r->nsamples && total_ns < budget_ns) {
		uint64_t t0 = nt_clock_now_cyc();
		for (uint64_t k = 0; k < ops; k++)
			x = basic_op(x);
		uint64_t ns = (uint64_t)llround(nt_clock_cyc_to_ns(nt_clock_now_cyc() - t0));
		r->samples[i++] = ns;
		total_ns += ns;
		if (ns < best)
			best = ns;
		if (NT_UNLIKELY(total_ns >= next_report)) {
			progress(cfg, (double)total_ns / 1e9);
			next_report += 1000000000ull;
		}
	}
	sink = x;
	r->nsamples = i;
	r->elapsed_ns = total_ns;
	r->best = i ? best : 0;
	r->noise_ratio = total_ns ? (double)(total_ns - r->best * i) / (double)total_ns : 0;
}

int nt_ftq_measure(const struct nt_ftq_config *cfg, struct nt_ftq_result *res)
{
	int rc = check_config(cfg);
	if (rc || !res)
		return rc ? rc : -EINVAL;
	memset(res, 0, sizeof *res);
	res->mode = cfg->mode;
	res->cpu = cfg->cpu;
	res->quantum_ns = cfg->quantum_ns;
	nt_clock_init();
	if (cfg->cpu >= 0 && (rc = nt_pin_self(cfg->cpu)) != 0)
		return rc;
	/* FWQ samples are at least quantum_ns long, so this bounds both modes. */
	res->nsamples = (size_t)ceil(cfg->seconds * 1e9 / (double)cfg->quantum_ns);
	res->samples = malloc(res->nsamples * sizeof *res->samples);
	if (!res->samples)
		return -ENOMEM;
	memset(res->samples, 0, res->nsamples * sizeof *res->samples);
	struct nt_run_os_meter rs;
	nt_run_os_open(&rs);
	if (nt_cpurun_ready() != 0) {
		nt_run_os_close(&rs);
		nt_ftq_result_free(res);
		return -ECANCELED;
	}
	nt_run_os_begin(&rs);
	if (cfg->mode == NT_FTQ)
		ftq_loop(cfg, res);
	else
		fwq_loop(cfg, res);
	nt_run_os_end(&rs);
	nt_run_os_close(&rs);
	res->os = rs.out;
	return 0;
}

struct multi {
	const struct nt_ftq_config *cfg;
	struct nt_ftq_result *res;
};

static int measure_one(void *ctx, size_t i, int cpu)
{
	const struct multi *m = ctx;
	struct nt_ftq_config c = *m->cfg;
	c.cpu = cpu;
	return nt_ftq_measure(&c, &m->res[i]);
}

int nt_ftq_measure_cpus(const struct nt_ftq_config *cfg, const int *cpus, size_t ncpus,
			struct nt_ftq_result *res)
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
			nt_ftq_result_free(&res[i]);
	return rc;
}

void nt_ftq_result_free(struct nt_ftq_result *res)
{
	if (!res)
		return;
	free(res->samples);
	res->samples = NULL;
	res->nsamples = 0;
}

/* Time lost in sample k (0 for a sample better than `best`, which only a hand-made result has). */
static double lost_ns(const struct nt_ftq_result *r, size_t k)
{
	uint64_t v = r->samples[k];
	if (r->mode == NT_FTQ)
		return r->best && v < r->best
			       ? (double)(r->best - v) / (double)r->best * (double)r->quantum_ns
			       : 0;
	return v > r->best ? (double)(v - r->best) : 0;
}

int nt_ftq_detours(const struct nt_ftq_result *r, uint64_t threshold_ns, struct nt_detour **out,
		   size_t *n)
{
	if (!r || !out || !n || (r->nsamples && !r->samples))
		return -EINVAL;
	*out = NULL;
	*n = 0;
	size_t cap = 0, cnt = 0;
	struct nt_detour *d = NULL;
	double t = 0, run_start = 0, run_lost = 0;
	bool in_run = false;
	for (size_t k = 0; k <= r->nsamples; k++) {
		double lost = k < r->nsamples ? lost_ns(r, k) : 0;
		if (lost >= (double)threshold_ns && lost > 0) {
			if (!in_run) {
				in_run = true;
				run_start = t;
				run_lost = 0;
			}
			run_lost += lost;
		} else if (in_run) {
			in_run = false;
			if (cnt == cap) {
				cap = cap ? cap * 2 : 256;
				struct nt_detour *nd = realloc(d, cap * sizeof *d);
				if (!nd) {
					free(d);
					return -ENOMEM;
				}
				d = nd;
			}
			d[cnt++] = (struct nt_detour){ (uint64_t)run_start, (uint64_t)llround(run_lost), 0 };
		}
		if (k < r->nsamples)
			t += r->mode == NT_FTQ ? (double)r->quantum_ns : (double)r->samples[k];
	}
	*out = d;
	*n = cnt;
	return 0;
}
