/* Joining records across ranks and splitting each late arrival's delay by cause. */
#include "nt-config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/attrib.h>
#include <noisetool/coverage.h>
#include <noisetool/probe.h>

#include "site-identity.h"

/* Cost of a minor page fault, charged as on-CPU time: the kernel's time in the window
 * (sys_ns, getrusage's ru_stime: faults and system calls), at least 0.25 us and at most 10 us
 * a fault, or 0.25 us a fault in a log without it (version < 5); then, of the delay left
 * unexplained, up to 10 us a fault more than the median member's (split). A first touch of an anonymous
 * page costs 0.25 us on bare metal and 1.5-1.7 us of CPU in this KVM guest (2,048 pages
 * touched every 2 of 300 phases: 959 ms measured, 7 % of it given to faults at a fixed 0.25 us,
 * the bench attrib-matrix's faults case). A major fault is charged its share of the blocked
 * time, at most 100 us each. */
#define MINOR_FAULT_NS 250.0
#define MINOR_FAULT_MAX_NS 10000.0
#define MAJOR_FAULT_NS 100000.0

/* A time in ns computed in double, as a count: NaN and negatives are 0, values past 2^64 - 1
 * saturate. Converting an out-of-range double to an integer is undefined behaviour; a log's
 * numbers are range-checked when it is read (doc/ntlog-format.md, "Ranges"), but a caller may
 * build a struct nt_log by hand, and every sum here must stay defined whatever it holds. */
static uint64_t ns_from_double(double ns)
{
	if (!(ns > 0))
		return 0;
	return ns < 0x1p64 ? (uint64_t)ns : UINT64_MAX;
}

/* a + b, at most UINT64_MAX: totals over many instances never wrap round to small numbers. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

struct member {
	uint64_t comm_id, seq;
	uint32_t rank;
	const struct nt_log_record *rec;
	double arrival_ns; /* global */
};

/* Members of one instance by arrival; at equal arrivals in the order they were listed (rank,
 * then record), as the stable sort of all members by (comm_id, seq, arrival) left them. */
static int cmp_arrival(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	if (a->arrival_ns != b->arrival_ns)
		return (a->arrival_ns > b->arrival_ns) - (a->arrival_ns < b->arrival_ns);
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return (a->rec > b->rec) - (a->rec < b->rec);
}

/* All members by (comm_id, seq, arrival): sort_members's order, each instance by arrival. */
static int cmp_member(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	if (a->comm_id != b->comm_id)
		return a->comm_id < b->comm_id ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return cmp_arrival(a, b);
}

/* Byte d (0: the lowest) of a member's key (comm_id, seq): seq's bytes, then comm_id's. */
static unsigned key_byte(const struct member *x, unsigned d)
{
	return (unsigned)((d < 8 ? x->seq >> (8 * d) : x->comm_id >> (8 * (d - 8))) & 0xff);
}

/* Sort m[0..n) by (comm_id, seq): a stable LSD radix sort on the 16 bytes of the key, passing
 * only over the bytes that differ between members (seq's low two or three in most logs); the
 * join then sorts each instance's few members by arrival (cmp_arrival). qsort's merge sort of the
 * 40-byte members took ~23 copying passes over them at 10^7 records, and once they no longer
 * fit in the caches its time grew faster than n log n (doc/bench-growth.md). */
static void sort_members(struct member *m, size_t n)
{
	size_t (*count)[256] = n > 1 ? calloc(16, sizeof *count) : NULL;
	struct member *tmp = count ? malloc(n * sizeof *tmp) : NULL;
	if (!tmp) { /* n < 2, or no room: the same order, more slowly */
		free(count);
		qsort(m, n, sizeof *m, cmp_member);
		return;
	}
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < 16; d++)
			count[d][key_byte(&m[i], d)]++;
	struct member *src = m, *dst = tmp;
	for (unsigned d = 0; d < 16; d++) {
		if (count[d][key_byte(&m[0], d)] == n)
			continue; /* every member has this byte: the pass would move nothing */
		size_t at[256], sum = 0;
		for (unsigned b = 0; b < 256; b++) {
			at[b] = sum;
			sum += count[d][b];
		}
		for (size_t i = 0; i < n; i++)
			dst[at[key_byte(&src[i], d)]++] = src[i];
		struct member *t = src;
		src = dst;
		dst = t;
	}
	free(count);
	if (src != m)
		memcpy(m, src, n * sizeof *m);
	free(tmp);
}

static int cmp_late_desc(const void *x, const void *y)
{
	const struct nt_late *a = x, *b = y;
	return (a->delay_ns < b->delay_ns) - (a->delay_ns > b->delay_ns);
}

/* Late instances by the last arriver's host, then by its call site's identity. */
static int cmp_late_host(const void *x, const void *y)
{
	const struct nt_late *const *a = x, *const *b = y;
	return strcmp((*a)->host, (*b)->host);
}

static int cmp_late_site(const void *x, const void *y)
{
	const struct nt_late *const *a = x, *const *b = y;
	return nt_site_identity_cmp((*a)->site, (*b)->site);
}

static int cmp_delay_desc(const void *x, const void *y)
{
	const struct nt_culprit *a = x, *b = y;
	return (a->delay_ns < b->delay_ns) - (a->delay_ns > b->delay_ns);
}

/* The list's strings; a text table's column fits 5 characters. */
#define NT_CAUSE_INFO_(id, key, column, words, colour) { key, column, words, colour },
static const struct nt_cause_info cause_info[NT_CAUSE_COUNT] = { NT_CAUSES(NT_CAUSE_INFO_) };
#undef NT_CAUSE_INFO_
#define NT_CAUSE_KEY_(id, key, column, words, colour) key "_ns",
static const char *const cause_keys[NT_CAUSE_COUNT] = { NT_CAUSES(NT_CAUSE_KEY_) };
#undef NT_CAUSE_KEY_
#define NT_CAUSE_COLUMN_(id, key, column, words, colour)                                       \
	_Static_assert(sizeof(column) <= 6, "the text tables' column of " key " is 5 wide");
NT_CAUSES(NT_CAUSE_COLUMN_)
#undef NT_CAUSE_COLUMN_

const char *nt_cause_key(enum nt_cause c)
{
	return (unsigned)c < NT_CAUSE_COUNT ? cause_keys[c] : "?";
}

const struct nt_cause_info *nt_cause_info(enum nt_cause c)
{
	return (unsigned)c < NT_CAUSE_COUNT ? &cause_info[c] : NULL;
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
	/* A thread that never switched out voluntarily was not blocked: time it lost without
	 * running or waiting in the run queue was taken by the hypervisor (steal: the guest
	 * kernel takes it out of the thread's CPU time, not out of its run delay), or by
	 * interrupts, which it takes out the same way. A major fault that had to wait for its
	 * page sleeps, a voluntary switch; one counted without any (the page arrived meanwhile)
	 * waited for nothing: 11 ms of steal beside 3 such faults in a 40 ms compute phase were
	 * called blocked while the rule asked for no major fault. */
	double steal = 0;
	if ((w->valid & NT_SRC_RUSAGE) && w->vol_switches == 0) {
		steal = blocked;
		blocked = 0;
	}
	/* Major faults are charged out of the blocked time that is left: taken before the rule
	 * above, they were counted twice (as steal and as faults) and left blocked time below
	 * 0, which a median member's window then added to the late rank's. */
	double major = (double)w->major_faults * MAJOR_FAULT_NS;
	if (major > blocked)
		major = blocked;
	c[NT_CAUSE_PREEMPTION] = run_delay;
	c[NT_CAUSE_STEAL] = steal;
	c[NT_CAUSE_BLOCKED] = blocked - major;
	double minor = (double)w->minor_faults * MINOR_FAULT_NS;
	if (w->sys_ns > minor)
		minor = (double)w->sys_ns < (double)w->minor_faults * MINOR_FAULT_MAX_NS
				? (double)w->sys_ns
				: (double)w->minor_faults * MINOR_FAULT_MAX_NS;
	c[NT_CAUSE_PAGE_FAULT] = major + minor;
	c[NT_CAUSE_INJECTED] = (double)w->injected_ns;
}

/* Split delay_ns of an instance whose last arriver is l, against the median member m. */
static void split(const struct nt_log_record *l, const struct nt_log_record *m, double delay_ns,
		  struct nt_causes *out, uint64_t *no_window)
{
	double cl[NT_CAUSE_COUNT], cm[NT_CAUSE_COUNT] = { 0 };
	memset(out, 0, sizeof *out);
	if (!(l->flags & NT_LOG_REC_WINDOW) || l->win.wall_ns == 0) {
		out->ns[NT_CAUSE_UNEXPLAINED] = ns_from_double(delay_ns);
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
		double os = cm[NT_CAUSE_PREEMPTION] + cm[NT_CAUSE_STEAL] + cm[NT_CAUSE_BLOCKED] +
			    cm[NT_CAUSE_PAGE_FAULT];
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
		out->ns[k] = ns_from_double(cl[k] * f);
		given += (double)out->ns[k];
	}
	double unexplained = delay_ns - given;
	/* On-CPU time left unexplained beside many more minor faults than the median member's
	 * is theirs, up to MINOR_FAULT_MAX_NS a fault with what they were given: the kernel's
	 * time does not hold all of a fault's cost in a VM (the host's part lands wherever the
	 * guest was; 40 % of the bench's faults case came out as sys time). */
	double faults = (double)l->win.minor_faults -
			(m && (m->flags & NT_LOG_REC_WINDOW) ? (double)m->win.minor_faults * scale : 0);
	double room = faults * MINOR_FAULT_MAX_NS - (double)out->ns[NT_CAUSE_PAGE_FAULT];
	if (unexplained > 0 && room > 0) {
		uint64_t moved = ns_from_double(unexplained < room ? unexplained : room);
		out->ns[NT_CAUSE_PAGE_FAULT] = add_sat(out->ns[NT_CAUSE_PAGE_FAULT], moved);
		unexplained -= (double)moved;
	}
	out->ns[NT_CAUSE_UNEXPLAINED] = add_sat(out->ns[NT_CAUSE_UNEXPLAINED],
						ns_from_double(unexplained));
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
	c->delay_ns = add_sat(c->delay_ns, delay_ns);
	c->instances++;
	for (int i = 0; i < NT_CAUSE_COUNT; i++)
		c->causes.ns[i] = add_sat(c->causes.ns[i], k->ns[i]);
}

/* The culprits of groups of late instances that compare equal under cmp (by host, by call
 * site): one per group, in out[], whose count goes to *nout. order: scratch for nlate
 * pointers. Sorting keeps it n log n: a log of 10^6 late instances at 10^5 call sites or
 * hosts takes no 10^11 comparisons. */
static void group_culprits(const struct nt_late *late, size_t nlate, const struct nt_late **order,
			   int (*cmp)(const void *, const void *), bool by_site,
			   struct nt_culprit *out, size_t *nout)
{
	size_t n = 0;
	for (size_t i = 0; i < nlate; i++)
		if (!by_site || late[i].site)
			order[n++] = &late[i];
	qsort(order, n, sizeof *order, cmp);
	*nout = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || cmp(&order[i - 1], &order[i]) != 0)
			out[(*nout)++] = by_site ? (struct nt_culprit){ .site = order[i]->site }
						 : (struct nt_culprit){ .host = order[i]->host };
		add(&out[*nout - 1], order[i]->delay_ns, &order[i]->causes);
	}
}

/* The OS time in a member's window (every cause a window shows), 0 without a window. */
static double window_os(const struct nt_log_record *r)
{
	if (!(r->flags & NT_LOG_REC_WINDOW) || r->win.wall_ns == 0)
		return 0;
	double c[NT_CAUSE_COUNT] = { 0 }, os = 0;
	window_causes(&r->win, c);
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		os += c[k];
	return os;
}

/* How long member x stayed in the call after the last arrival (last, global) and its site's
 * own cost (coverage.h), at least 0; -1 when that cost is not known (no histogram). */
static double member_held(const struct nt_log *log, const struct member *x, double last)
{
	const struct nt_log_rank *k = &log->ranks[x->rank];
	const struct nt_log_record *r = x->rec;
	if (r->site >= k->nsites || !k->sites)
		return -1;
	uint64_t own = nt_coverage_own_ns(&k->sites[r->site], log->clock_hz);
	if (!own)
		return -1;
	double held = x->arrival_ns + (double)r->duration_ns - (last + (double)own);
	return held > 0 ? held : 0;
}

/* A hold inside the instance of members g[0..cnt) (by arrival; late: its last arriver when
 * the instance was late by late_delay at the entry, else NULL), on log's sites: each member
 * stayed in the call held_r after the last arrival and its site's own cost. The member held
 * longest held the call (a member preempted inside it holds itself, and the others too when
 * it had not yet given its part); among those held about as long (within a tenth, or the
 * threshold), the one whose window shows the most OS time. The hold's delay is its held_r,
 * waited_ns every member's, summed. Fills *h and returns true when the delay is over
 * threshold_ns and the sites' own costs are known. */
static bool held_instance(const struct nt_log *log, const struct member *g, size_t cnt,
			  const struct member *late, double late_delay, uint64_t threshold_ns,
			  struct nt_late *h)
{
	double last = g[cnt - 1].arrival_ns, waited = 0, longest = 0;
	for (size_t q = 0; q < cnt; q++) {
		double held = member_held(log, &g[q], last);
		if (held < 0)
			return false; /* no histogram: the site's own cost is not known */
		waited += held;
		if (held > longest)
			longest = held;
	}
	double near = longest / 10 > (double)threshold_ns ? longest / 10 : (double)threshold_ns;
	const struct member *culprit = NULL, *quiet = NULL;
	double most = -1, least = 0, delay = 0;
	for (size_t q = 0; q < cnt; q++) {
		double held = member_held(log, &g[q], last), os = window_os(g[q].rec);
		if (held >= longest - near && os > most) {
			most = os;
			culprit = &g[q];
			delay = held;
		}
	}
	for (size_t q = 0; q < cnt; q++) {
		double os = window_os(g[q].rec);
		if (&g[q] != culprit && (!quiet || os < least)) {
			least = os;
			quiet = &g[q];
		}
	}
	if (!(delay >= (double)threshold_ns))
		return false;
	uint64_t no_window = 0;
	struct nt_causes c;
	if (late == culprit) {
		/* Its window holds its lateness at the entry too: what that took is not given
		 * twice. */
		struct nt_causes both, at_entry;
		split(culprit->rec, quiet->rec, late_delay + delay, &both, &no_window);
		split(culprit->rec, quiet->rec, late_delay, &at_entry, &no_window);
		double given = 0;
		memset(&c, 0, sizeof c);
		for (int k = 0; k < NT_CAUSE_COUNT; k++) {
			if (k == NT_CAUSE_UNEXPLAINED)
				continue;
			c.ns[k] = both.ns[k] > at_entry.ns[k] ? both.ns[k] - at_entry.ns[k] : 0;
			given += (double)c.ns[k];
		}
		c.ns[NT_CAUSE_UNEXPLAINED] = ns_from_double(delay - given);
	} else {
		split(culprit->rec, quiet->rec, delay, &c, &no_window);
	}
	const struct nt_log_rank *cr = &log->ranks[culprit->rank];
	*h = (struct nt_late){
		.comm_id = culprit->comm_id, .seq = culprit->seq, .rank = culprit->rank,
		.host = cr->host ? cr->host : "",
		.members = cnt < UINT32_MAX ? (uint32_t)cnt : UINT32_MAX,
		.site = culprit->rec->site < cr->nsites && cr->sites ? &cr->sites[culprit->rec->site]
								     : NULL,
		.start_ns = ns_from_double(last), .delay_ns = ns_from_double(delay),
		.waited_ns = ns_from_double(waited), .causes = c,
		.os_data = (culprit->rec->flags & NT_LOG_REC_WINDOW) && culprit->rec->win.wall_ns,
	};
	return true;
}

/* Rank loss l lost amount ns to instance x (a late arrival's or a hold's: held), split as x's
 * delay is. */
static void lose(struct nt_rank_loss *l, double amount, const struct nt_late *x, bool held)
{
	uint64_t w = ns_from_double(amount);
	if (!w)
		return;
	if (held)
		l->held_ns = add_sat(l->held_ns, w);
	else
		l->waited_ns = add_sat(l->waited_ns, w);
	if (!x->os_data) {
		l->no_data_ns = add_sat(l->no_data_ns, w);
		return;
	}
	double f = x->delay_ns ? (double)x->causes.ns[NT_CAUSE_UNEXPLAINED] / (double)x->delay_ns : 1;
	uint64_t un = ns_from_double((double)w * (f < 1 ? f : 1));
	un = un < w ? un : w;
	l->unexplained_ns = add_sat(l->unexplained_ns, un);
	l->cause_ns = add_sat(l->cause_ns, w - un);
}

/* What member m lost (lose), booked to its rank and to its call site. */
static void lose_member(const struct nt_log *log, struct nt_attrib *out, const struct member *m,
			double amount, const struct nt_late *x, bool held)
{
	lose(&out->loss[m->rank], amount, x, held);
	const struct nt_log_rank *k = &log->ranks[m->rank];
	if (k->sites && m->rec->site < k->nsites)
		lose(&out->site_loss[out->site_at[m->rank] + m->rec->site], amount, x, held);
}

/* A late arrival's unexplained delay (in c) that its last arriver carried from a hold inside
 * the instance just before (h): a member held inside a call leaves it late, after the others,
 * and arrives that much later at the next one, with nothing in that interval's window to show
 * why (Open MPI beside a hog on every CPU: held 45 ms in one allreduce, 43.7 ms of it
 * runnable, then 45.9 ms late at the next, 35.8 ms of it unexplained). Up to the hold's delay,
 * the unexplained part takes the hold's causes, in the hold's shares. */
static void carry_hold(const struct nt_late *h, struct nt_causes *c)
{
	uint64_t un = c->ns[NT_CAUSE_UNEXPLAINED];
	double carry = (double)(un < h->delay_ns ? un : h->delay_ns), moved = 0;
	if (!(carry > 0) || !h->os_data)
		return;
	for (int k = 0; k < NT_CAUSE_COUNT; k++) {
		if (k == NT_CAUSE_UNEXPLAINED)
			continue;
		uint64_t add_k = ns_from_double(carry * (double)h->causes.ns[k] / (double)h->delay_ns);
		c->ns[k] = add_sat(c->ns[k], add_k);
		moved += (double)add_k;
	}
	uint64_t taken = ns_from_double(moved);
	c->ns[NT_CAUSE_UNEXPLAINED] = un - (taken < un ? taken : un);
}

/* The late member's own record of the instance just before on its communicator, when it has
 * the window that ended at that exit; NULL otherwise. m[0..i) are the members of the earlier
 * instances, sorted by (communicator, number): that record, when kept, is among the last. */
static const struct nt_log_record *own_previous(const struct member *m, size_t i,
						const struct member *late)
{
	for (size_t q = i; q-- > 0 && m[q].comm_id == late->comm_id && m[q].seq + 1 >= late->seq;)
		if (m[q].seq + 1 == late->seq && m[q].rank == late->rank)
			return (m[q].rec->flags & NT_LOG_REC_WINDOW) && m[q].rec->win.wall_ns
				       ? m[q].rec
				       : NULL;
	return NULL;
}

/* A late arrival (delay_ns, its causes in c) whose last arriver l spent less time outside MPI
 * since the instance before (its interval) than the delay, and whose call of that instance (p,
 * its own record, with the window that ended at that exit) lasted long enough to make the
 * rest: it left that call late, after the others had, and its lateness here is what held it
 * there, which that window saw. Up to the unexplained part, the window's OS time (less the CPU
 * time it spent) takes it, in its causes' shares. Carries a hold that no joined instance shows:
 * a rank that waits inside every collective for the others (an idle or light rank) records its
 * preempted call, the others' quick calls there are not recorded, so the instance is not
 * joined (2 ranks, the hog on the idle rank's CPU under MPICH: 4.9 ms runnable in that call,
 * then 4.5 ms late, unexplained; 250 of its 256 ms of delay). Returns whether it carried. */
static bool carry_own(const struct nt_log_record *p, const struct nt_log_record *l,
		      double delay_ns, struct nt_causes *c)
{
	if (!p || !(l->flags & NT_LOG_REC_INTERVAL) || (double)l->interval_ns >= delay_ns ||
	    (double)p->duration_ns + (double)l->interval_ns < delay_ns)
		return false;
	double cw[NT_CAUSE_COUNT], pool = 0;
	window_causes(&p->win, cw);
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		if (k != NT_CAUSE_UNEXPLAINED && k != NT_CAUSE_EXTRA_WORK)
			pool += cw[k];
	uint64_t un = c->ns[NT_CAUSE_UNEXPLAINED];
	if (!(pool > 0) || un == 0)
		return false;
	/* The window may reach back before that call, to OS time that made that instance late
	 * (and explained it there): at most the call's length of it is carried. */
	double room = (double)un < (double)p->duration_ns ? (double)un : (double)p->duration_ns;
	double f = room < pool ? room / pool : 1, moved = 0;
	for (int k = 0; k < NT_CAUSE_COUNT; k++) {
		if (k == NT_CAUSE_UNEXPLAINED || k == NT_CAUSE_EXTRA_WORK)
			continue;
		uint64_t add_k = ns_from_double(cw[k] * f);
		c->ns[k] = add_sat(c->ns[k], add_k);
		moved += (double)add_k;
	}
	uint64_t taken = ns_from_double(moved);
	c->ns[NT_CAUSE_UNEXPLAINED] = un - (taken < un ? taken : un);
	return true;
}

int nt_attrib_build(const struct nt_log *log, struct nt_attrib *out)
{
	if (!log || !out || (log->nranks && !log->ranks))
		return -EINVAL;
	memset(out, 0, sizeof *out);
	size_t n = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		if (k->nrecords > SIZE_MAX - n || (k->nrecords && !k->records))
			return -EINVAL;
		n += (size_t)k->nrecords;
		if (k->clock_error_ns > out->clock_error_ns)
			out->clock_error_ns = k->clock_error_ns;
		if (k->clock_test_error_ns > out->clock_test_error_ns)
			out->clock_test_error_ns = k->clock_test_error_ns;
	}
	out->threshold_ns = add_sat(1000, add_sat(out->clock_error_ns, out->clock_error_ns));
	/* calloc checks n * size for overflow. */
	struct member *m = calloc(n ? n : 1, sizeof *m);
	struct busy *busy = calloc(n ? n : 1, sizeof *busy);
	const struct nt_late **order = calloc(n ? n : 1, sizeof *order);
	out->ranks = calloc(log->nranks ? log->nranks : 1, sizeof *out->ranks);
	out->late = calloc(n ? n : 1, sizeof *out->late);
	out->held = calloc(n ? n : 1, sizeof *out->held);
	out->held_ranks = calloc(log->nranks ? log->nranks : 1, sizeof *out->held_ranks);
	out->loss = calloc(log->nranks ? log->nranks : 1, sizeof *out->loss);
	out->nloss = log->nranks;
	out->site_at = calloc(log->nranks ? log->nranks : 1, sizeof *out->site_at);
	for (uint32_t r = 0; out->site_at && r < log->nranks; r++) {
		out->site_at[r] = out->nsite_loss;
		out->nsite_loss += log->ranks[r].sites ? log->ranks[r].nsites : 0;
	}
	out->site_loss = calloc(out->nsite_loss ? out->nsite_loss : 1, sizeof *out->site_loss);
	if (!m || !busy || !order || !out->ranks || !out->late || !out->held || !out->held_ranks ||
	    !out->loss || !out->site_at || !out->site_loss) {
		free(m);
		free(busy);
		free(order);
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
	sort_members(m, k);
	/* The hold inside the previous instance joined (held: none when it had none). */
	struct nt_late prev = { 0 };
	bool prev_held = false;
	for (size_t i = 0, j; i < k; i = j) {
		for (j = i; j < k && m[j].comm_id == m[i].comm_id && m[j].seq == m[i].seq; j++)
			;
		size_t cnt = j - i;
		if (cnt < 2)
			continue;
		/* A hold inside the instance just before on this communicator, by a member that
		 * then arrives late here: its lateness may be that hold's (carry_hold). */
		const struct nt_late *before = prev_held && prev.comm_id == m[i].comm_id &&
							       prev.seq + 1 == m[i].seq
						       ? &prev
						       : NULL;
		prev_held = false;
		qsort(&m[i], cnt, sizeof *m, cmp_arrival);
		out->instances_joined++;
		const struct member *late = &m[j - 1], *med = &m[i + (cnt - 1) / 2];
		double delay = late->arrival_ns - med->arrival_ns, by_arrival = delay;
		interval_culprit(&m[i], cnt, busy, &late, &med, &delay);
		bool is_late = delay >= (double)out->threshold_ns;
		struct nt_late h;
		if (held_instance(log, &m[i], cnt, is_late ? late : NULL, is_late ? delay : 0,
				  out->threshold_ns, &h)) {
			out->instances_held++;
			out->held_delay_ns = add_sat(out->held_delay_ns, h.delay_ns);
			out->held[out->nheld++] = h;
			struct nt_culprit *hc = &out->held_ranks[h.rank];
			hc->rank = h.rank;
			hc->host = h.host;
			add(hc, h.delay_ns, &h.causes);
			prev = h;
			prev_held = true;
			for (size_t q = i; q < j; q++)
				lose_member(log, out, &m[q],
					    member_held(log, &m[q], m[j - 1].arrival_ns), &h, true);
		}
		if (!is_late)
			continue;
		/* What the members waited, summed: by arrival, or by busy time when the interval
		 * named the culprit (busy[] then holds the members sorted, the culprit last). */
		double waited = 0;
		if (delay == by_arrival)
			for (size_t q = i; q < j; q++)
				waited += late->arrival_ns - m[q].arrival_ns;
		else
			for (size_t q = 0; q < cnt; q++)
				waited += busy[cnt - 1].ns - busy[q].ns;
		out->instances_late++;
		/* Clock-free check: the last arriver waits least inside the collective. */
		const struct member *least = &m[i];
		for (size_t q = i; q < j; q++)
			if (m[q].rec->duration_ns < least->rec->duration_ns)
				least = &m[q];
		out->crosscheck_agree += least == late;
		struct nt_causes c;
		uint64_t delay_ns = ns_from_double(delay), no_window = out->instances_no_window;
		split(late->rec, med->rec, delay, &c, &out->instances_no_window);
		if (before && before->rank == late->rank && out->instances_no_window == no_window)
			carry_hold(before, &c);
		else if (carry_own(own_previous(m, i, late), late->rec, delay, &c))
			out->instances_no_window = no_window; /* the OS data of its previous call */
		out->total_delay_ns = add_sat(out->total_delay_ns, delay_ns);
		if (out->instances_no_window != no_window)
			out->delay_no_window_ns = add_sat(out->delay_no_window_ns, delay_ns);
		const struct nt_log_rank *lr = &log->ranks[late->rank];
		struct nt_culprit *rc_ = &out->ranks[late->rank];
		rc_->rank = late->rank;
		rc_->host = lr->host;
		add(rc_, delay_ns, &c);
		out->late[out->nlate++] = (struct nt_late){
			.comm_id = late->comm_id, .seq = late->seq, .rank = late->rank,
			.members = cnt < UINT32_MAX ? (uint32_t)cnt : UINT32_MAX,
			.site = late->rec->site < lr->nsites && lr->sites ? &lr->sites[late->rec->site]
									  : NULL,
			.start_ns = ns_from_double(med->arrival_ns), .delay_ns = delay_ns,
			.waited_ns = ns_from_double(waited),
			.causes = c, .host = lr->host ? lr->host : "",
			.os_data = out->instances_no_window == no_window };
		const struct nt_late *x = &out->late[out->nlate - 1];
		if (delay == by_arrival)
			for (size_t q = i; q < j; q++)
				lose_member(log, out, &m[q], late->arrival_ns - m[q].arrival_ns, x,
					    false);
		else
			for (size_t q = 0; q < cnt; q++)
				lose_member(log, out, busy[q].m, busy[cnt - 1].ns - busy[q].ns, x,
					    false);
	}
	free(m);
	free(busy);
	/* Per node and per call site: the late instances grouped by host and by site. */
	size_t groups = out->nlate ? out->nlate : 1;
	out->nodes = calloc(groups, sizeof *out->nodes);
	out->sites = calloc(groups, sizeof *out->sites);
	if (!out->nodes || !out->sites) {
		free(order);
		nt_attrib_free(out);
		return -ENOMEM;
	}
	group_culprits(out->late, out->nlate, order, cmp_late_host, false, out->nodes,
		       &out->nnodes);
	group_culprits(out->late, out->nlate, order, cmp_late_site, true, out->sites,
		       &out->nsites);
	free(order);
	/* Give back what the groups did not take (nlate entries were room for the worst case). */
	struct nt_culprit *fit = realloc(out->nodes, (out->nnodes ? out->nnodes : 1) * sizeof *fit);
	if (fit)
		out->nodes = fit;
	fit = realloc(out->sites, (out->nsites ? out->nsites : 1) * sizeof *fit);
	if (fit)
		out->sites = fit;
	/* Keep the ranks that imposed delay, largest first. */
	size_t kept = 0;
	for (uint32_t r = 0; r < log->nranks; r++)
		if (out->ranks[r].instances)
			out->ranks[kept++] = out->ranks[r];
	out->nranks = kept;
	kept = 0;
	for (uint32_t r = 0; r < log->nranks; r++)
		if (out->held_ranks[r].instances)
			out->held_ranks[kept++] = out->held_ranks[r];
	out->nheld_ranks = kept;
	qsort(out->held_ranks, out->nheld_ranks, sizeof *out->held_ranks, cmp_delay_desc);
	qsort(out->held, out->nheld, sizeof *out->held, cmp_late_desc);
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
	free(a->held);
	free(a->held_ranks);
	free(a->site_at);
	free(a->site_loss);
	free(a->loss);
	memset(a, 0, sizeof *a);
}
