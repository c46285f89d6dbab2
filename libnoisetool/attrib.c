/* Joining records across ranks and splitting each late arrival's delay by cause. */
#include "nt-config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/attrib.h>
#include <noisetool/probe.h>

#include "util.h"

/* Cost of one minor page fault, charged as on-CPU time (measured here: ~0.25 us for a
 * first touch of an anonymous page); a major fault is charged its share of the blocked time,
 * at most 100 us each. */
#define MINOR_FAULT_NS 250.0
#define MAJOR_FAULT_NS 100000.0

struct member {
	uint64_t comm_id, seq;
	uint32_t rank;
	const struct nt_log_record *rec;
	double arrival_ns; /* global */
};

static int cmp_member(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	if (a->comm_id != b->comm_id)
		return a->comm_id < b->comm_id ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return (a->arrival_ns > b->arrival_ns) - (a->arrival_ns < b->arrival_ns);
}

static int cmp_late_desc(const void *x, const void *y)
{
	const struct nt_late *a = x, *b = y;
	return (a->delay_ns < b->delay_ns) - (a->delay_ns > b->delay_ns);
}

static int cmp_delay_desc(const void *x, const void *y)
{
	const struct nt_culprit *a = x, *b = y;
	return (a->delay_ns < b->delay_ns) - (a->delay_ns > b->delay_ns);
}

const char *nt_cause_key(enum nt_cause c)
{
	static const char *const keys[NT_CAUSE_COUNT] = {
		"preemption_ns", "blocked_ns", "page_fault_ns", "extra_work_ns", "injected_ns",
		"unexplained_ns",
	};
	return (unsigned)c < NT_CAUSE_COUNT ? keys[c] : "?";
}

/* What the OS did in a window, by cause (extra work and unexplained left at 0). */
static void window_causes(const struct nt_log_window *w, double c[NT_CAUSE_COUNT])
{
	memset(c, 0, NT_CAUSE_COUNT * sizeof *c);
	double run_delay = (w->valid & NT_SRC_SCHEDSTAT) ? (double)w->run_delay_ns : 0;
	double blocked = 0;
	if (w->valid & (NT_SRC_SCHEDSTAT | NT_SRC_THREAD_CPU)) {
		blocked = (double)w->wall_ns - (double)w->cpu_ns - run_delay;
		if (blocked < 0)
			blocked = 0;
	}
	double major = (double)w->major_faults * MAJOR_FAULT_NS;
	if (major > blocked)
		major = blocked;
	/* A thread that never switched out voluntarily was not blocked: time it lost without
	 * running or waiting in the run queue was taken by the hypervisor (steal), which is
	 * preemption one level down. */
	if ((w->valid & NT_SRC_RUSAGE) && w->vol_switches == 0 && w->major_faults == 0) {
		run_delay += blocked;
		blocked = 0;
	}
	c[NT_CAUSE_PREEMPTION] = run_delay;
	c[NT_CAUSE_BLOCKED] = blocked - major;
	c[NT_CAUSE_PAGE_FAULT] = major + (double)w->minor_faults * MINOR_FAULT_NS;
	c[NT_CAUSE_INJECTED] = (double)w->injected_ns;
}

/* Split delay_ns of an instance whose last arriver is l, against the median member m. */
static void split(const struct nt_log_record *l, const struct nt_log_record *m, double delay_ns,
		  struct nt_causes *out, uint64_t *no_window)
{
	double cl[NT_CAUSE_COUNT], cm[NT_CAUSE_COUNT] = { 0 };
	memset(out, 0, sizeof *out);
	if (!(l->flags & NT_LOG_REC_WINDOW) || l->win.wall_ns == 0) {
		out->ns[NT_CAUSE_UNEXPLAINED] = (uint64_t)delay_ns;
		(*no_window)++;
		return;
	}
	window_causes(&l->win, cl);
	double scale = 0;
	if (m && (m->flags & NT_LOG_REC_WINDOW) && m->win.wall_ns) {
		window_causes(&m->win, cm);
		/* m's window ends at its exit, so it holds m's wait for L inside this instance.
		 * What the OS took from m while it waited did not make m arrive any later: the
		 * part that counts against L is at most the window's time before m's arrival.
		 * Under a CPU hog on every core, m waiting out L's 4 ms preemption was itself
		 * preempted for half of it; subtracted whole, that left L's lateness half
		 * unexplained. */
		double before = m->duration_ns < m->win.wall_ns
					? (double)(m->win.wall_ns - m->duration_ns) : 0;
		double os = cm[NT_CAUSE_PREEMPTION] + cm[NT_CAUSE_BLOCKED] + cm[NT_CAUSE_PAGE_FAULT];
		if (os > before)
			for (int k = 0; k < NT_CAUSE_COUNT; k++)
				cm[k] *= before / os;
		scale = (double)l->win.wall_ns / (double)m->win.wall_ns; /* as a rate */
		if (l->win.instructions && m->win.instructions &&
		    l->win.instructions > m->win.instructions) {
			double on_cpu = (double)l->win.cpu_ns - (double)l->win.injected_ns;
			cl[NT_CAUSE_EXTRA_WORK] = on_cpu > 0 ? on_cpu * (double)(l->win.instructions -
						  m->win.instructions) / (double)l->win.instructions : 0;
		}
	}
	double noise = 0;
	for (int k = 0; k < NT_CAUSE_COUNT; k++) {
		/* The injector's count is exact: nothing to take away from it. */
		double base = k == NT_CAUSE_INJECTED || k == NT_CAUSE_EXTRA_WORK ? 0 : cm[k] * scale;
		cl[k] = cl[k] > base ? cl[k] - base : 0;
		noise += cl[k];
	}
	double f = noise > delay_ns ? delay_ns / noise : 1;
	double given = 0;
	for (int k = 0; k < NT_CAUSE_COUNT; k++) {
		out->ns[k] = (uint64_t)(cl[k] * f);
		given += (double)out->ns[k];
	}
	out->ns[NT_CAUSE_UNEXPLAINED] += delay_ns > given ? (uint64_t)(delay_ns - given) : 0;
}

/* A member's busy time in the interval before an instance: the interval minus its MPI time. */
struct busy {
	double ns;
	const struct member *m;
};

static int cmp_busy(const void *x, const void *y)
{
	double a = ((const struct busy *)x)->ns, b = ((const struct busy *)y)->ns;
	return (a > b) - (a < b);
}

/* When the members spent MPI time outside collectives since their previous collective instance
 * (halo exchanges), a late rank's lateness is mostly absorbed there, by the ranks waiting for
 * its messages, and hardly shows at the collective's entry. Then the rank that was busy
 * longest in the interval (its time outside MPI) is the culprit, and its busy time over the
 * median member's is the delay, when that exceeds the lateness at the entry. busy: scratch
 * space for cnt members. */
static void interval_culprit(const struct member *g, size_t cnt, struct busy *busy,
			     const struct member **late, const struct member **med, double *delay)
{
	bool p2p = false;
	for (size_t q = 0; q < cnt; q++) {
		const struct nt_log_record *r = g[q].rec;
		if (!(r->flags & NT_LOG_REC_INTERVAL))
			return;
		p2p |= r->p2p_ns > 0;
		busy[q] = (struct busy){
			r->interval_ns > r->p2p_ns ? (double)(r->interval_ns - r->p2p_ns) : 0, &g[q]
		};
	}
	if (!p2p)
		return;
	qsort(busy, cnt, sizeof *busy, cmp_busy);
	const struct busy *top = &busy[cnt - 1], *mid = &busy[(cnt - 1) / 2];
	if (top->ns - mid->ns <= *delay)
		return;
	*late = top->m;
	*med = mid->m;
	*delay = top->ns - mid->ns;
}

static void add(struct nt_culprit *c, uint64_t delay_ns, const struct nt_causes *k)
{
	c->delay_ns += delay_ns;
	c->instances++;
	for (int i = 0; i < NT_CAUSE_COUNT; i++)
		c->causes.ns[i] += k->ns[i];
}

int nt_attrib_build(const struct nt_log *log, struct nt_attrib *out)
{
	if (!log || !out)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	size_t n = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		n += k->nrecords;
		if (k->clock_error_ns > out->clock_error_ns)
			out->clock_error_ns = k->clock_error_ns;
		if (k->clock_test_error_ns > out->clock_test_error_ns)
			out->clock_test_error_ns = k->clock_test_error_ns;
	}
	out->threshold_ns = 1000 + 2 * out->clock_error_ns;
	struct member *m = malloc((n ? n : 1) * sizeof *m);
	struct busy *busy = malloc((n ? n : 1) * sizeof *busy);
	out->ranks = calloc(log->nranks ? log->nranks : 1, sizeof *out->ranks);
	out->nodes = calloc(log->nranks ? log->nranks : 1, sizeof *out->nodes);
	size_t site_cap = 64;
	out->sites = calloc(site_cap, sizeof *out->sites);
	out->late = calloc(n ? n : 1, sizeof *out->late);
	if (!m || !busy || !out->ranks || !out->nodes || !out->sites || !out->late) {
		free(m);
		free(busy);
		nt_attrib_free(out);
		return -ENOMEM;
	}
	size_t k = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *rk = &log->ranks[r];
		for (uint64_t i = 0; i < rk->nrecords; i++) {
			const struct nt_log_record *x = &rk->records[i];
			if (x->comm_id == UINT64_MAX)
				continue;
			m[k++] = (struct member){ x->comm_id, x->seq, r, x,
						  (double)rk->init_global_ns +
							  (double)x->start_ns *
								  (1 + (double)rk->drift_ppb / 1e9) };
		}
	}
	qsort(m, k, sizeof *m, cmp_member);
	int rc = 0;
	for (size_t i = 0, j; i < k; i = j) {
		for (j = i; j < k && m[j].comm_id == m[i].comm_id && m[j].seq == m[i].seq; j++)
			;
		size_t cnt = j - i;
		if (cnt < 2)
			continue;
		out->instances_joined++;
		const struct member *late = &m[j - 1], *med = &m[i + (cnt - 1) / 2];
		double delay = late->arrival_ns - med->arrival_ns;
		interval_culprit(&m[i], cnt, busy, &late, &med, &delay);
		if (delay < (double)out->threshold_ns)
			continue;
		out->instances_late++;
		/* Clock-free check: the last arriver waits least inside the collective. */
		const struct member *least = &m[i];
		for (size_t q = i; q < j; q++)
			if (m[q].rec->duration_ns < least->rec->duration_ns)
				least = &m[q];
		out->crosscheck_agree += least == late;
		struct nt_causes c;
		split(late->rec, med->rec, delay, &c, &out->instances_no_window);
		out->total_delay_ns += (uint64_t)delay;
		const struct nt_log_rank *lr = &log->ranks[late->rank];
		struct nt_culprit *rc_ = &out->ranks[late->rank];
		rc_->rank = late->rank;
		rc_->host = lr->host;
		add(rc_, (uint64_t)delay, &c);
		size_t h = 0;
		while (h < out->nnodes && strcmp(out->nodes[h].host, lr->host))
			h++;
		if (h == out->nnodes)
			out->nodes[out->nnodes++] = (struct nt_culprit){ .host = lr->host };
		add(&out->nodes[h], (uint64_t)delay, &c);
		const struct nt_log_site *site = late->rec->site < lr->nsites
							 ? &lr->sites[late->rec->site] : NULL;
		out->late[out->nlate++] = (struct nt_late){
			.comm_id = late->comm_id, .seq = late->seq, .rank = late->rank,
			.members = (uint32_t)cnt, .site = site,
			.start_ns = med->arrival_ns > 0 ? (uint64_t)med->arrival_ns : 0,
			.delay_ns = (uint64_t)delay, .causes = c };
		if (!site)
			continue;
		size_t s = 0;
		while (s < out->nsites && nt_site_identity_cmp(out->sites[s].site, site) != 0)
			s++;
		if (s == out->nsites) {
			if (out->nsites == site_cap) {
				struct nt_culprit *grown =
					realloc(out->sites, 2 * site_cap * sizeof *grown);
				if (!grown) {
					rc = -ENOMEM;
					break;
				}
				out->sites = grown;
				site_cap *= 2;
			}
			out->sites[out->nsites++] = (struct nt_culprit){ .site = site };
		}
		add(&out->sites[s], (uint64_t)delay, &c);
	}
	free(m);
	free(busy);
	if (rc) {
		nt_attrib_free(out);
		return rc;
	}
	/* Keep the ranks that imposed delay, largest first. */
	size_t kept = 0;
	for (uint32_t r = 0; r < log->nranks; r++)
		if (out->ranks[r].instances)
			out->ranks[kept++] = out->ranks[r];
	out->nranks = kept;
	qsort(out->ranks, out->nranks, sizeof *out->ranks, cmp_delay_desc);
	qsort(out->nodes, out->nnodes, sizeof *out->nodes, cmp_delay_desc);
	qsort(out->sites, out->nsites, sizeof *out->sites, cmp_delay_desc);
	qsort(out->late, out->nlate, sizeof *out->late, cmp_late_desc);
	return 0;
}

void nt_attrib_free(struct nt_attrib *a)
{
	if (!a)
		return;
	free(a->ranks);
	free(a->nodes);
	free(a->sites);
	free(a->late);
	memset(a, 0, sizeof *a);
}
