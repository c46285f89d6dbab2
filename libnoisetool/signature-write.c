/* A node's noise signature written out (noisetool/noise.h): the JSON document
 * (doc/detour-json.md) and the human table. */
#include "nt-config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <noisetool/noise.h>

#include "json-write.h"

static void json_host(struct nt_json *j, const struct nt_node_noise *r)
{
	const struct nt_sysinfo *s = &r->sys;
	nt_json_object_begin(j, "host");
	nt_json_string(j, "hostname", s->hostname);
	nt_json_string(j, "kernel", s->kernel);
	nt_json_string(j, "cpu_model", s->cpu_model);
	nt_json_string(j, "clocksource", s->clocksource);
	nt_json_int(j, "kernel_hz", s->kernel_hz);
	nt_json_string(j, "isolcpus", s->isolcpus);
	nt_json_string(j, "nohz_full", s->nohz_full);
	nt_json_string(j, "allowed_cpus", s->allowed_cpus);
	nt_json_int(j, "online_cpus", s->online_cpus);
	nt_json_object_end(j);

	const struct nt_clock_info *c = &r->clock;
	nt_json_object_begin(j, "clock");
	nt_json_string(j, "source", nt_clock_source_name(c->source));
	nt_json_double(j, "hz", c->hz);
	nt_json_double(j, "calib_error_ppm", c->calib_error_ppm);
	nt_json_double(j, "read_cost_ns", c->read_cost_ns);
	nt_json_bool(j, "constant_tsc", c->constant_tsc);
	nt_json_bool(j, "nonstop_tsc", c->nonstop_tsc);
	nt_json_object_end(j);
}

/* Every kept detour, in time order, as three parallel arrays (the page's time series). */
static void json_detours(struct nt_json *j, const struct nt_cpu_noise *c)
{
	nt_json_object_begin(j, "detours");
	nt_json_array_begin(j, "start_ns");
	for (size_t i = 0; i < c->ndetours; i++)
		nt_json_uint(j, NULL, c->detours[i].start_ns);
	nt_json_array_end(j);
	nt_json_array_begin(j, "duration_ns");
	for (size_t i = 0; i < c->ndetours; i++)
		nt_json_uint(j, NULL, c->detours[i].duration_ns);
	nt_json_array_end(j);
	nt_json_array_begin(j, "preempted");
	for (size_t i = 0; i < c->ndetours; i++)
		nt_json_bool(j, NULL, c->detours[i].flags & NT_DETOUR_PREEMPTED);
	nt_json_array_end(j);
	if (c->softirqs.n) {
		nt_json_array_begin(j, "softirqs");
		for (size_t i = 0; i < c->ndetours; i++) {
			uint32_t fl = c->detours[i].flags;
			if (fl & NT_DETOUR_SOFTIRQS_READ)
				nt_json_uint(j, NULL, fl >> NT_DETOUR_SOFTIRQ_SHIFT);
			else
				nt_json_double(j, NULL, NAN); /* null: not read */
		}
		nt_json_array_end(j);
	}
	nt_json_object_end(j);
}

static void json_quantiles(struct nt_json *j, const char *key, const struct nt_quantiles *q)
{
	nt_json_array_begin(j, key);
	for (size_t i = 0; i < q->n; i++)
		nt_json_uint(j, NULL, q->ns[i]);
	nt_json_array_end(j);
}

/* Where a CPU's detour time went: detours another task ran in (the loop's schedstat moved),
 * periodic components that an interrupt line or softirq kind matches (or the tick, by HZ),
 * other detours in which a softirq ran (read after each detour), and the rest: not preempted,
 * nothing counted at its rate or in it (interrupts that raise no softirq, the hypervisor, the
 * hardware). */
struct split {
	uint64_t total_ns, task_ns, irq_ns, softirq_ns, rest_ns;
	uint64_t kind_ns[NT_DETOUR_SOFTIRQ_KINDS];            /* of softirq_ns, by kind */
	const struct nt_count_use *line[NT_SIG_MAX_PERIODIC]; /* matched, or NULL */
	bool tick[NT_SIG_MAX_PERIODIC];                       /* at the kernel's HZ */
};

static void add_kinds(uint64_t *to, const uint64_t *from)
{
	for (unsigned k = 0; k < NT_DETOUR_SOFTIRQ_KINDS; k++)
		to[k] += from[k];
}

static void split_time(int kernel_hz, const struct nt_cpu_noise *c, struct split *o)
{
	memset(o, 0, sizeof *o);
	const struct nt_signature *sig = &c->sig;
	o->total_ns = sig->other_total_ns;
	o->task_ns = sig->other_preempted_ns;
	o->softirq_ns = sig->other_softirq_ns;
	add_kinds(o->kind_ns, sig->other_softirq_kind_ns);
	for (size_t k = 0; k < sig->nperiodic; k++) {
		const struct nt_periodic *p = &sig->periodic[k];
		o->total_ns += p->total_ns;
		o->task_ns += p->preempted_ns;
		o->line[k] = nt_meanwhile_rate_match(&c->meanwhile, p->freq_hz);
		o->tick[k] = kernel_hz > 0 && fabs(p->freq_hz - kernel_hz) < 0.02 * kernel_hz;
		if (o->line[k] || o->tick[k]) {
			o->irq_ns += p->total_ns - p->preempted_ns;
		} else {
			o->softirq_ns += p->softirq_ns;
			add_kinds(o->kind_ns, p->softirq_kind_ns);
		}
	}
	o->rest_ns = o->total_ns - o->task_ns - o->irq_ns - o->softirq_ns;
}

/* The kinds of kind_ns with most time, most first: up to max indices into top. */
static size_t top_kinds(const struct nt_softirq_kinds *names, const uint64_t *kind_ns,
			unsigned *top, size_t max)
{
	size_t n = 0;
	for (unsigned k = 0; k < names->n && k < NT_DETOUR_SOFTIRQ_KINDS; k++) {
		if (!kind_ns[k])
			continue;
		size_t at = n < max ? n++ : max;
		while (at > 0 && kind_ns[top[at - 1]] < kind_ns[k]) {
			if (at < max)
				top[at] = top[at - 1];
			at--;
		}
		if (at < max)
			top[at] = k;
	}
	return n;
}

static void json_counts(struct nt_json *j, const char *key, uint64_t total,
			const struct nt_count_use *u, size_t n)
{
	nt_json_object_begin(j, key);
	nt_json_uint(j, "count", total);
	nt_json_array_begin(j, "top");
	for (size_t i = 0; i < n; i++) {
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "name", u[i].name);
		nt_json_string(j, "desc", u[i].desc);
		nt_json_uint(j, "count", u[i].count);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_object_end(j);
}

/* "softirq_kinds": the kinds with most time, most first (absent when softirqs were not read). */
static void json_kinds(struct nt_json *j, const struct nt_softirq_kinds *names,
		       const uint64_t *kind_ns)
{
	if (!names->n)
		return;
	unsigned top[NT_DETOUR_SOFTIRQ_KINDS];
	size_t n = top_kinds(names, kind_ns, top, 3);
	nt_json_array_begin(j, "softirq_kinds");
	for (size_t k = 0; k < n; k++) {
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "name", names->name[top[k]]);
		nt_json_uint(j, "ns", kind_ns[top[k]]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
}

/* What else ran on the CPU (absent when it was not read). */
static void json_meanwhile(struct nt_json *j, const struct nt_cpu_meanwhile *m)
{
	if (!m->known)
		return;
	nt_json_object_begin(j, "meanwhile");
	nt_json_uint(j, "elapsed_ns", m->elapsed_ns);
	nt_json_uint(j, "tasks_ns", m->others.run_ns);
	nt_json_uint(j, "task_count", m->others.count);
	nt_json_array_begin(j, "tasks");
	for (size_t i = 0; i < m->others.n; i++) {
		const struct nt_task_use *t = &m->others.tasks[i];
		nt_json_object_begin(j, NULL);
		nt_json_int(j, "pid", t->pid);
		nt_json_string(j, "comm", t->comm);
		nt_json_string(j, "kind", nt_task_kind_name(t->kind));
		nt_json_uint(j, "run_ns", t->run_ns);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	json_counts(j, "interrupts", m->irq_count, m->irqs, m->nirqs);
	json_counts(j, "softirqs", m->softirq_count, m->softirqs, m->nsoftirqs);
	nt_json_object_end(j);
}

static void json_cpu(struct nt_json *j, const struct nt_node_noise *r, const struct nt_cpu_noise *c)
{
	const struct nt_detour_stats *st = &c->stats;
	struct split split;
	split_time(r->sys.kernel_hz, c, &split);
	nt_json_object_begin(j, NULL);
	nt_json_int(j, "cpu", c->cpu);
	nt_json_array_begin(j, "ran_on");
	nt_json_int(j, NULL, c->os.cpu_start);
	nt_json_int(j, NULL, c->os.cpu_end);
	nt_json_array_end(j);
	nt_json_double(j, "t_min_ns", c->t_min_ns);
	if (strcmp(r->method, "detour") == 0)
		nt_json_double(j, "t_min_raw_ns", c->t_min_raw_ns);
	nt_json_uint(j, "elapsed_ns", c->elapsed_ns);
	nt_json_uint(j, "start_offset_ns", c->start_offset_ns);
	nt_json_uint(j, "iterations", c->iterations);
	if (strcmp(r->method, "detour") != 0) {
		nt_json_uint(j, "quantum_ns", c->quantum_ns);
		nt_json_uint(j, "best", c->best);
	}
	nt_json_double(j, "noise_ratio", st->noise_ratio);
	nt_json_uint(j, "detour_count", st->count);
	nt_json_uint(j, "preempted_count", st->preempted);
	nt_json_bool(j, "classified", c->classified);
	nt_json_uint(j, "dropped", c->dropped);
	nt_json_uint(j, "total_ns", st->total_ns);
	nt_json_uint(j, "max_ns", st->max_ns);
	nt_json_double(j, "mean_ns", st->mean_ns);
	nt_json_double(j, "median_ns", st->median_ns);
	nt_json_uint(j, "p99_ns", st->p99_ns);
	if (c->os.run_delay_known)
		nt_json_uint(j, "run_delay_ns", c->os.run_delay_ns);
	else
		nt_json_double(j, "run_delay_ns", NAN);
	if (c->os.steal_known)
		nt_json_uint(j, "steal_ns", c->os.steal_ns);
	else
		nt_json_double(j, "steal_ns", NAN);

	nt_json_array_begin(j, "histogram");
	for (int b = 0; b < NT_HIST_BINS; b++) {
		if (!st->hist[b])
			continue;
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "lo_ns", b == 0 ? 0 : 1ull << b);
		nt_json_uint(j, "hi_ns", 1ull << (b + 1));
		nt_json_uint(j, "count", st->hist[b]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);

	nt_json_array_begin(j, "periodic");
	for (size_t i = 0; i < c->sig.nperiodic; i++) {
		const struct nt_periodic *p = &c->sig.periodic[i];
		nt_json_object_begin(j, NULL);
		nt_json_double(j, "freq_hz", p->freq_hz);
		nt_json_double(j, "typical_ns", p->typical_ns);
		nt_json_uint(j, "count", p->count);
		nt_json_double(j, "jitter_ns", p->jitter_ns);
		nt_json_double(j, "phase_ns", p->phase_ns);
		nt_json_double(j, "hit_fraction", p->hit_fraction);
		nt_json_uint(j, "total_ns", p->total_ns);
		nt_json_uint(j, "preempted_ns", p->preempted_ns);
		if (c->softirqs.n) {
			nt_json_uint(j, "softirq_ns", p->softirq_ns);
			json_kinds(j, &c->softirqs, p->softirq_kind_ns);
		}
		if (split.line[i]) {
			const struct nt_count_use *u = split.line[i];
			nt_json_object_begin(j, "line");
			nt_json_string(j, "name", u->name);
			nt_json_string(j, "desc", u->desc);
			nt_json_double(j, "per_second",
				       (double)u->count / ((double)c->meanwhile.elapsed_ns / 1e9));
			nt_json_object_end(j);
		}
		json_quantiles(j, "duration_quantiles_ns", &p->durations);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_object_begin(j, "detour_time");
	nt_json_uint(j, "total_ns", split.total_ns);
	if (c->classified)
		nt_json_uint(j, "another_task_ns", split.task_ns);
	else
		nt_json_double(j, "another_task_ns", NAN); /* null: preemption not told */
	nt_json_uint(j, "periodic_interrupts_ns", split.irq_ns);
	if (c->softirqs.n)
		nt_json_uint(j, "softirqs_ns", split.softirq_ns);
	else
		nt_json_double(j, "softirqs_ns", NAN); /* null: not read */
	json_kinds(j, &c->softirqs, split.kind_ns);
	nt_json_uint(j, "neither_ns", split.rest_ns);
	nt_json_object_end(j);
	if (c->softirqs.n) {
		nt_json_object_begin(j, "softirq_reads");
		nt_json_uint(j, "count", c->softirq_reads);
		nt_json_uint(j, "time_ns", c->softirq_read_ns);
		nt_json_uint(j, "detours_read", c->sig.softirqs_read);
		nt_json_array_begin(j, "kinds");
		for (unsigned k = 0; k < c->softirqs.n; k++)
			nt_json_string(j, NULL, c->softirqs.name[k]);
		nt_json_array_end(j);
		nt_json_object_end(j);
	}

	nt_json_object_begin(j, "rare_long");
	nt_json_uint(j, "threshold_ns", c->sig.rare_threshold_ns);
	nt_json_uint(j, "count", c->sig.rare_count);
	nt_json_array_begin(j, "longest");
	for (size_t i = 0; i < c->sig.nrare; i++) {
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "start_ns", c->sig.rare[i].start_ns);
		nt_json_uint(j, "duration_ns", c->sig.rare[i].duration_ns);
		nt_json_bool(j, "preempted", c->sig.rare[i].flags & NT_DETOUR_PREEMPTED);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_object_end(j);
	nt_json_object_begin(j, "other");
	nt_json_uint(j, "count", c->sig.other_count);
	nt_json_uint(j, "total_ns", c->sig.other_total_ns);
	nt_json_uint(j, "preempted_ns", c->sig.other_preempted_ns);
	json_quantiles(j, "duration_quantiles_ns", &c->sig.other_durations);
	json_quantiles(j, "gap_quantiles_ns", &c->sig.other_gaps);
	nt_json_object_end(j);
	json_meanwhile(j, &c->meanwhile);
	if (r->with_detours)
		json_detours(j, c);
	nt_json_object_end(j);
}

int nt_node_noise_write_json(FILE *f, const struct nt_node_noise *r)
{
	if (!f || !r)
		return -EINVAL;
	struct nt_json j;
	nt_json_init(&j, f);
	nt_json_object_begin(&j, NULL);
	nt_json_string(&j, "schema", "noisetool-noise/1");
	nt_json_string(&j, "version", NT_VERSION);
	nt_json_string(&j, "method", r->method);
	nt_json_double(&j, "seconds", r->seconds);
	nt_json_uint(&j, "threshold_ns", r->threshold_ns);
	json_host(&j, r);
	nt_json_array_begin(&j, "cpus");
	for (size_t i = 0; i < r->ncpus; i++)
		json_cpu(&j, r, &r->cpus[i]);
	nt_json_array_end(&j);
	nt_json_object_end(&j);
	return nt_json_finish(&j);
}

/* "812 ns", "2.1 us", "4.20 ms", "1.23 s". */
static const char *fmt_ns(double ns, char *buf, size_t size)
{
	if (ns < 1e3)
		snprintf(buf, size, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, size, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.2f s", ns / 1e9);
	return buf;
}

/* What a periodic component is: another task when one ran in most of its detours (named by its
 * time there), else its frequency against the kernel's tick, and the interrupt line or softirq
 * kind that fired on its CPU at its rate. */
static const char *periodic_note(const struct nt_node_noise *r, const struct nt_cpu_noise *c,
				 const struct nt_periodic *p, char *buf, size_t size)
{
	double hz = p->freq_hz;
	int khz = r->sys.kernel_hz;
	const char *tick = "";
	if (khz > 0 && fabs(hz - khz) < 0.02 * khz)
		tick = "scheduler tick (CONFIG_HZ)";
	else if (khz > 0 && fabs(hz - khz / 2.0) < 0.02 * khz / 2.0)
		tick = "every other tick";
	const struct nt_count_use *u = nt_meanwhile_rate_match(&c->meanwhile, hz);
	if (!*tick && 2 * p->preempted_ns >= p->total_ns && p->total_ns > 0) {
		/* Another task ran in most of its detours: the one whose time there is closest to
		 * theirs (within a factor of 2), when one is; else the busiest, when it ran at least
		 * as long as they lasted. A component may hold only some of a task's detours: on a
		 * loaded CPU a 500 Hz SCHED_FIFO ticker's wake-ups were 123 detours of 18 us in the
		 * component and its 229 ms mostly long detours of varied length, "not periodic". */
		const struct nt_task_top *o = &c->meanwhile.others;
		const struct nt_task_use *best = NULL;
		double d = (double)p->preempted_ns, best_ratio = 2;
		for (size_t i = 0; c->meanwhile.known && i < o->n; i++) {
			double q = (double)o->tasks[i].run_ns / d;
			double ratio = q > 1 ? q : q > 0 ? 1 / q : 1e9;
			if (ratio <= best_ratio) {
				best_ratio = ratio;
				best = &o->tasks[i];
			}
		}
		if (!best && c->meanwhile.known && o->n > 0 && (double)o->tasks[0].run_ns >= d)
			best = &o->tasks[0]; /* the busiest: the list is kept in order */
		if (best)
			snprintf(buf, size, "another task: %s (pid %d), %.2f ms there", best->comm,
				 best->pid, (double)best->run_ns / 1e6);
		else
			snprintf(buf, size, "another task ran (preempted)");
		return buf;
	}
	/* The softirq kind that ran in most of its time, when softirqs ran in half of it. */
	char sq[48] = "";
	unsigned top;
	if (2 * p->softirq_ns >= p->total_ns && p->total_ns > 0 &&
	    top_kinds(&c->softirqs, p->softirq_kind_ns, &top, 1))
		snprintf(sq, sizeof sq, "softirq %s in %.0f %% of its time", c->softirqs.name[top],
			 100.0 * (double)p->softirq_kind_ns[top] / (double)p->total_ns);
	if (!u && !*tick && *sq)
		return snprintf(buf, size, "%s", sq), buf;
	if (!u && c->meanwhile.known && !*tick)
		return "no interrupt or softirq counted at this rate";
	if (!u) {
		snprintf(buf, size, "%s%s%s", tick, *sq ? "; " : "", sq);
		return buf;
	}
	double rate = (double)u->count / ((double)c->meanwhile.elapsed_ns / 1e9);
	snprintf(buf, size, "%s%s%s %.0f/s%s%s%s%s%s", tick, *tick ? "; " : "", u->name, rate,
		 u->desc[0] ? " (" : "", u->desc, u->desc[0] ? ")" : "", *sq ? "; " : "", sq);
	return buf;
}

/* "5 tasks 12.30 ms: stress (pid 4321) 10.10 ms, kworker/0:1 (pid 12, kernel thread) ..." */
static void text_meanwhile(FILE *f, const struct nt_cpu_noise *c)
{
	const struct nt_cpu_meanwhile *m = &c->meanwhile;
	char a[32];
	double s = (double)m->elapsed_ns / 1e9;
	fprintf(f, "%4d  other tasks: ", c->cpu);
	if (m->others.count == 0)
		fprintf(f, "none");
	else
		fprintf(f, "%s in %zu", fmt_ns((double)m->others.run_ns, a, sizeof a), m->others.count);
	for (size_t i = 0; i < m->others.n && i < 3; i++) {
		const struct nt_task_use *t = &m->others.tasks[i];
		fprintf(f, "%s %s (pid %d%s%s) %s", i ? "," : ":", t->comm, t->pid,
			t->kind == NT_TASK_PROCESS ? "" : ", ",
			t->kind == NT_TASK_PROCESS ? "" : nt_task_kind_name(t->kind),
			fmt_ns((double)t->run_ns, a, sizeof a));
	}
	fprintf(f, "\n");
	for (int pass = 0; pass < 2 && s > 0; pass++) {
		const struct nt_count_use *u = pass ? m->softirqs : m->irqs;
		size_t n = pass ? m->nsoftirqs : m->nirqs;
		fprintf(f, "      %s %.0f/s", pass ? "softirqs" : "interrupts",
			(double)(pass ? m->softirq_count : m->irq_count) / s);
		for (size_t i = 0; i < n && i < 4; i++) {
			double rate = (double)u[i].count / s;
			fprintf(f, "%s %s %.*f/s%s%s%s", i ? "," : ":", u[i].name, rate < 9.95 ? 1 : 0,
				rate, u[i].desc[0] ? " (" : "", u[i].desc, u[i].desc[0] ? ")" : "");
		}
		fprintf(f, "\n");
	}
}

int nt_node_noise_write_text(FILE *f, const struct nt_node_noise *r)
{
	if (!f || !r)
		return -EINVAL;
	char a[32], b[32], c[32], d[32], e[32], g[32], h[32];
	const struct nt_sysinfo *s = &r->sys;
	fprintf(f, "Node noise (%s): %.1f s per CPU, threshold %s, host %s, kernel %s", r->method,
		r->seconds, fmt_ns((double)r->threshold_ns, a, sizeof a), s->hostname, s->kernel);
	if (s->kernel_hz)
		fprintf(f, ", HZ %d", s->kernel_hz);
	fprintf(f, "\n");
	fprintf(f, "Clock: %s %.1f MHz (%s), read %.1f ns, clocksource %s; CPUs allowed %s, "
		   "isolcpus %s, nohz_full %s\n\n",
		nt_clock_source_name(r->clock.source), r->clock.hz / 1e6,
		r->clock.constant_tsc ? "invariant" : "NOT invariant", r->clock.read_cost_ns,
		s->clocksource[0] ? s->clocksource : "?", s->allowed_cpus,
		s->isolcpus[0] ? s->isolcpus : "none", s->nohz_full[0] ? s->nohz_full : "none");

	fprintf(f, "%4s %5s %9s %8s %8s %8s %10s %10s %10s %10s %10s %10s\n", "cpu", "ran",
		"t_min", "noise%", "detours", "preempt", "max", "mean", "median", "p99",
		"run-delay", "steal");
	for (size_t i = 0; i < r->ncpus; i++) {
		const struct nt_cpu_noise *cn = &r->cpus[i];
		const struct nt_detour_stats *st = &cn->stats;
		char ran[16], pre[16];
		const struct nt_run_os *os = &cn->os;
		if (os->cpu_start == os->cpu_end)
			snprintf(ran, sizeof ran, "%d", os->cpu_start);
		else
			snprintf(ran, sizeof ran, "%d>%d", os->cpu_start, os->cpu_end);
		if (cn->classified)
			snprintf(pre, sizeof pre, "%zu", st->preempted);
		else
			snprintf(pre, sizeof pre, "?");
		char tmin[32];
		snprintf(tmin, sizeof tmin, "%.1f ns", cn->t_min_ns);
		fprintf(f, "%4d %5s %9s %8.4f %8zu %8s %10s %10s %10s %10s %10s %10s\n", cn->cpu, ran,
			tmin, st->noise_ratio * 100.0, st->count, pre,
			fmt_ns((double)st->max_ns, a, sizeof a), fmt_ns(st->mean_ns, b, sizeof b),
			fmt_ns(st->median_ns, c, sizeof c), fmt_ns((double)st->p99_ns, d, sizeof d),
			os->run_delay_known ? fmt_ns((double)os->run_delay_ns, e, sizeof e) : "?",
			os->steal_known ? fmt_ns((double)os->steal_ns, g, sizeof g) : "?");
		if (cn->dropped)
			fprintf(f, "     (%zu more detours not kept: array full)\n", cn->dropped);
	}

	bool any = false;
	for (size_t i = 0; i < r->ncpus; i++) {
		const struct nt_signature *sig = &r->cpus[i].sig;
		for (size_t k = 0; k < sig->nperiodic; k++) {
			const struct nt_periodic *p = &sig->periodic[k];
			if (!any) {
				fprintf(f, "\nPeriodic components\n%4s %10s %10s %8s %10s  %s\n", "cpu",
					"freq", "typical", "count", "jitter", "note");
				any = true;
			}
			char fr[32];
			snprintf(fr, sizeof fr, "%.1f Hz", p->freq_hz);
			char note[160];
			fprintf(f, "%4d %10s %10s %8zu %10s  %s\n", r->cpus[i].cpu, fr,
				fmt_ns(p->typical_ns, a, sizeof a), p->count,
				fmt_ns(p->jitter_ns, b, sizeof b),
				periodic_note(r, &r->cpus[i], p, note, sizeof note));
		}
	}
	if (!any)
		fprintf(f, "\nPeriodic components: none found\n");

	any = false;
	for (size_t i = 0; i < r->ncpus; i++) {
		const struct nt_signature *sig = &r->cpus[i].sig;
		if (!sig->rare_count)
			continue;
		if (!any) {
			fprintf(f, "\nRare long detours (not periodic)\n%4s %8s %10s  %s\n", "cpu",
				"count", ">=", "longest (at)");
			any = true;
		}
		fprintf(f, "%4d %8zu %10s ", r->cpus[i].cpu, sig->rare_count,
			fmt_ns((double)sig->rare_threshold_ns, a, sizeof a));
		for (size_t k = 0; k < sig->nrare && k < 3; k++)
			fprintf(f, " %s (%s%s)", fmt_ns((double)sig->rare[k].duration_ns, b, sizeof b),
				fmt_ns((double)sig->rare[k].start_ns, h, sizeof h),
				sig->rare[k].flags & NT_DETOUR_PREEMPTED ? ", preempted" : "");
		fprintf(f, "\n");
	}
	if (!any)
		fprintf(f, "\nRare long detours: none\n");

	fprintf(f, "\nWhere the detour time went (another task ran: the loop's schedstat moved; "
		   "periodic interrupts: components an interrupt line or softirq kind fired at, or "
		   "the tick; softirqs: other detours in which a softirq ran (/proc/softirqs read "
		   "after each); neither: not preempted, nothing counted at its rate or in it)\n"
		   "%4s %10s  %s\n",
		"cpu", "total", "another task, periodic interrupts, softirqs, neither");
	for (size_t i = 0; i < r->ncpus; i++) {
		const struct nt_cpu_noise *cn = &r->cpus[i];
		struct split sp;
		split_time(s->kernel_hz, cn, &sp);
		double t = sp.total_ns ? (double)sp.total_ns : 1;
		fprintf(f, "%4d %10s  ", cn->cpu, fmt_ns((double)sp.total_ns, a, sizeof a));
		if (cn->classified)
			fprintf(f, "%.0f %%", 100.0 * (double)sp.task_ns / t);
		else
			fprintf(f, "?"); /* FTQ, --no-classify: preempted time is in "neither" */
		if (cn->meanwhile.known && cn->meanwhile.others.n > 0 && sp.task_ns > 0)
			fprintf(f, " (%s%s)", cn->meanwhile.others.tasks[0].comm,
				cn->meanwhile.others.n > 1 ? ", ..." : "");
		fprintf(f, ", %.0f %%", 100.0 * (double)sp.irq_ns / t);
		bool first = true;
		for (size_t k = 0; k < cn->sig.nperiodic; k++) {
			if (!sp.line[k] && !sp.tick[k])
				continue;
			fprintf(f, "%s%s", first ? " (" : ", ",
				sp.line[k] ? sp.line[k]->name : "the tick");
			first = false;
		}
		fprintf(f, "%s, ", first ? "" : ")");
		if (cn->softirqs.n) {
			fprintf(f, "%.0f %%", 100.0 * (double)sp.softirq_ns / t);
			unsigned top[3];
			size_t n = top_kinds(&cn->softirqs, sp.kind_ns, top, 3);
			for (size_t k = 0; k < n && k < 3; k++)
				fprintf(f, "%s%s", k ? ", " : " (", cn->softirqs.name[top[k]]);
			fprintf(f, "%s", n ? ")" : "");
		} else {
			fprintf(f, "?"); /* not read (FTQ, --no-classify): in "neither" */
		}
		fprintf(f, ", %.0f %%\n", 100.0 * (double)sp.rest_ns / t);
	}

	any = false;
	for (size_t i = 0; i < r->ncpus; i++) {
		if (!r->cpus[i].meanwhile.known)
			continue;
		if (!any)
			fprintf(f, "\nWhat else ran on each CPU meanwhile (%.1f s: other tasks by CPU "
				   "time there; interrupts and softirqs counted there)\n",
				(double)r->cpus[i].meanwhile.elapsed_ns / 1e9);
		any = true;
		text_meanwhile(f, &r->cpus[i]);
	}
	return ferror(f) ? -EIO : 0;
}
