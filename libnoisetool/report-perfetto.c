/* The Chrome trace-event timeline of a job (noisetool/perfetto.h): a process per host, a thread
 * track per rank, every record a slice on the job's global time base, the probe windows' OS
 * counters as counter tracks, injected noise as slices (doc/perfetto.md). */
#include "nt-config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/perfetto.h>
#include <noisetool/probe.h>

#include "json-write.h"
#include "report-merge.h"

/* Slices of one rank that overlap without nesting (nonblocking collectives completing after
 * later ones) go to extra lanes: a track holds only nested slices. Past this many lanes a slice
 * is cut (rank_slices); the nonblocking test program's 70 collectives completed by one
 * MPI_Waitall nest in one lane but for a few that end in another order. */
#define LANES 8

/* A rank's thread ids: 10 x rank + 1 + lane for its collectives, + 9 for its injected noise,
 * so that tid 31 is rank 3 at a glance. */
#define TID_STRIDE 10
#define TID_INJECTED 9

struct trace {
	FILE *f;
	const struct nt_report *rep;
	const struct nt_late **late; /* by (comm_id, seq) */
	size_t nlate;
	uint32_t *pid;               /* per rank (index in log->ranks): its host's process */
	double origin_ns;            /* the global time that is ts 0 */
	bool first;                  /* no event written yet */
	uint64_t cut;                /* slices cut to fit a lane (rank_slices) */
	struct lane *lanes;          /* LANES of them, for rank_slices */
};

static void put_key_str(FILE *f, const char *key, const char *value)
{
	fprintf(f, ",\"%s\":", key);
	nt_json_write_escaped(f, value);
}

static void put_key_u64(FILE *f, const char *key, uint64_t value)
{
	fprintf(f, ",\"%s\":%" PRIu64, key, value);
}

/* A global time in ns as a trace timestamp: us with three decimals (whole ns), never below 0. */
static void put_ts(const struct trace *t, const char *key, double global_ns)
{
	double us = (global_ns - t->origin_ns) / 1e3;
	fprintf(t->f, ",\"%s\":%.3f", key, us > 0 ? us : 0.0);
}

/* The start of an event: {"ph":..,"name":..,"pid":..,"tid":.. ; the caller adds the rest and
 * the closing brace. */
static void event_begin(struct trace *t, char ph, const char *name, uint32_t pid, uint64_t tid)
{
	fputs(t->first ? "\n" : ",\n", t->f);
	t->first = false;
	fprintf(t->f, "{\"ph\":\"%c\",\"name\":", ph);
	nt_json_write_escaped(t->f, name);
	fprintf(t->f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64, pid, tid);
}

/* A metadata event naming (or ordering) a process or a thread. */
static void meta_str(struct trace *t, const char *what, uint32_t pid, uint64_t tid,
		     const char *name)
{
	event_begin(t, 'M', what, pid, tid);
	fputs(",\"ts\":0,\"args\":{\"name\":", t->f);
	nt_json_write_escaped(t->f, name);
	fputs("}}", t->f);
}

static void meta_sort(struct trace *t, const char *what, uint32_t pid, uint64_t tid,
		      uint64_t index)
{
	event_begin(t, 'M', what, pid, tid);
	fprintf(t->f, ",\"ts\":0,\"args\":{\"sort_index\":%" PRIu64 "}}", index);
}

/* A local time of rank k (ns since its MPI_Init) on the global time base, as attribution puts
 * it (attrib.c): MPI_Init's global time plus the local time at the global clock's rate. */
static double global_ns(const struct nt_log_rank *k, double local_ns)
{
	return (double)k->init_global_ns + local_ns * (1 + (double)k->drift_ppb / 1e9);
}

static double rec_start(const struct nt_log_rank *k, const struct nt_log_record *x)
{
	return global_ns(k, (double)x->start_ns);
}

static double rec_end(const struct nt_log_rank *k, const struct nt_log_record *x)
{
	return global_ns(k, (double)x->start_ns + (double)x->duration_ns);
}

static bool has_window(const struct nt_log_record *x)
{
	return (x->flags & NT_LOG_REC_WINDOW) && x->win.wall_ns > 0;
}

/* The probe window of x ends at the call's exit and lasts win.wall_ns. */
static double win_start(const struct nt_log_rank *k, const struct nt_log_record *x)
{
	return global_ns(k, (double)x->start_ns + (double)x->duration_ns - (double)x->win.wall_ns);
}

static int cmp_late_key(const void *x, const void *y)
{
	const struct nt_late *a = *(const struct nt_late *const *)x,
			     *b = *(const struct nt_late *const *)y;
	if (a->comm_id != b->comm_id)
		return a->comm_id < b->comm_id ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The late instance a record belongs to, or NULL. */
static const struct nt_late *late_of(const struct trace *t, const struct nt_log_record *x)
{
	if (!t->nlate)
		return NULL;
	struct nt_late key = { .comm_id = x->comm_id, .seq = x->seq };
	const struct nt_late *kp = &key;
	const struct nt_late *const *hit = bsearch(&kp, t->late, t->nlate, sizeof *t->late,
						   cmp_late_key);
	return hit ? *hit : NULL;
}

/* Records (or windows) of one rank in time order: the sort key and the record's index. */
struct when {
	double ns;
	uint64_t i;
};

static int cmp_when(const void *x, const void *y)
{
	const struct when *a = x, *b = y;
	if (a->ns != b->ns)
		return a->ns < b->ns ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

static void comm_name(const struct nt_log_record *x, char *buf, size_t size)
{
	if (x->comm_id == 0)
		snprintf(buf, size, "world:%" PRIu64, x->seq);
	else
		snprintf(buf, size, "%" PRIx64 ":%" PRIu64, x->comm_id, x->seq);
}

/* Why the wrapper kept the record (NT_LOG_REC_* reasons), comma-separated. */
static void kept_because(uint32_t flags, char *buf, size_t size)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} why[] = { { NT_LOG_REC_SLOW, "slow" }, { NT_LOG_REC_SAMPLE, "sample" },
		    { NT_LOG_REC_LONG_PHASE, "long_phase" }, { NT_LOG_REC_ABSOLUTE, "absolute" } };
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof why / sizeof why[0]; i++)
		if ((flags & why[i].bit) && n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "", why[i].name);
}

/* On a late arrival's slice that preemption delayed: the process that took most of the rank's
 * CPUs over the job (log version 7), "culprit-hog (pid 948), 99 % of the other tasks' time on
 * its CPUs" or "this job's rank 2 (pid 979), ...". */
static void put_preempted_by(const struct trace *t, uint32_t r)
{
	const struct nt_log_rank *k = &t->rep->log->ranks[r];
	const struct nt_report_cpus *c = t->rep->cpus ? &t->rep->cpus[r] : NULL;
	if (!(k->others_flags & NT_LOG_OTHERS_KNOWN) || k->nothers == 0 || !c || !c->known)
		return;
	const struct nt_log_task *o = &k->others[0];
	char who[96];
	if (c->others_rank[0] >= 0)
		snprintf(who, sizeof who, "this job's rank %" PRId64 " (pid %" PRIu32 ")",
			 c->others_rank[0], o->pid);
	else
		snprintf(who, sizeof who, "%s (pid %" PRIu32 ")", o->comm, o->pid);
	char text[192];
	snprintf(text, sizeof text, "%s, %.0f %% of the other tasks' time on its CPUs", who,
		 k->others_ns ? 100.0 * (double)o->run_ns / (double)k->others_ns : 0.0);
	put_key_str(t->f, "preempted_by", text);
}

/* The slice of record x of rank r (index in log->ranks) on thread tid, its end cut by cut_ns
 * to fit the track. */
static void record_slice(struct trace *t, uint32_t r, const struct nt_log_record *x, uint64_t tid,
			 double start_ns, double end_ns, double cut_ns)
{
	const struct nt_log_rank *k = &t->rep->log->ranks[r];
	const struct nt_log_site *s = x->site < k->nsites ? &k->sites[x->site] : NULL;
	const struct nt_report_site *m = nt_report_merged_site(t->rep, s);
	const struct nt_late *l = late_of(t, x);
	bool last = l && l->rank == r;
	const char *fn = s && s->function ? s->function : "?";
	char name[160], comm[64], why[64];
	snprintf(name, sizeof name, last ? "%s (late arrival)" : "%s", fn);
	comm_name(x, comm, sizeof comm);
	kept_because(x->flags, why, sizeof why);
	FILE *f = t->f;
	event_begin(t, 'X', name, t->pid[r], tid);
	put_key_str(f, "cat", last ? "collective,late_arrival" : "collective");
	put_ts(t, "ts", start_ns);
	fprintf(f, ",\"dur\":%.3f", end_ns > start_ns ? (end_ns - start_ns) / 1e3 : 0.0);
	fputs(",\"args\":{\"rank\":", f);
	fprintf(f, "%" PRIu32, k->rank);
	put_key_str(f, "function", fn);
	put_key_str(f, "location", m ? m->location : "?");
	put_key_str(f, "module", s && s->module ? s->module : "?");
	put_key_u64(f, "offset", s ? s->offset : 0);
	put_key_str(f, "instance", comm);
	put_key_u64(f, "comm_id", x->comm_id);
	put_key_u64(f, "seq", x->seq);
	put_key_u64(f, "time_in_call_ns", x->duration_ns);
	put_key_u64(f, "start_local_ns", x->start_ns);
	put_key_u64(f, "phase_ns", x->phase_ns);
	if (x->flags & NT_LOG_REC_INTERVAL) {
		put_key_u64(f, "interval_ns", x->interval_ns);
		put_key_u64(f, "p2p_ns", x->p2p_ns);
	}
	put_key_str(f, "kept_because", why);
	if (cut_ns > 0)
		fprintf(f, ",\"dur_cut_ns\":%.0f", cut_ns);
	if (x->flags & NT_LOG_REC_WINDOW) {
		const struct nt_log_window *w = &x->win;
#define WINDOW_FIELD(id, name, kind, source, since, key)                                        \
		put_key_u64(f, "window_" key, w->NT_LOG_WINDOW_NAME(kind, name));
		NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
		put_key_u64(f, "window_sources", w->valid);
	}
	fprintf(f, ",\"late_instance\":%s,\"late_arrival\":%s", l ? "true" : "false",
		last ? "true" : "false");
	if (l) {
		put_key_u64(f, "instance_delay_ns", l->delay_ns);
		put_key_u64(f, "last_arriver", l->rank);
		put_key_str(f, "last_arriver_host", l->host);
		put_key_u64(f, "members", l->members);
		put_key_u64(f, "median_arrival_ns", l->start_ns);
		for (int c = 0; c < NT_CAUSE_COUNT; c++)
			put_key_u64(f, nt_cause_key((enum nt_cause)c), l->causes.ns[c]);
		if (last && l->causes.ns[NT_CAUSE_PREEMPTION] > 0)
			put_preempted_by(t, r);
	}
	fputs("}}", f);
}

/* The ends of a lane's open slices, innermost last. */
struct lane {
	double *end;
	size_t n, cap;
};

/* The end of the lane's innermost open slice (the lane has one). */
static double innermost(const struct lane *l)
{
	return l->end[l->n - 1];
}

static int lane_push(struct lane *l, double end)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		double *more = realloc(l->end, cap * sizeof *more);
		if (!more)
			return -ENOMEM;
		l->end = more;
		l->cap = cap;
	}
	l->end[l->n++] = end;
	return 0;
}

/* The collectives of rank r in time order, each on the first lane where it fits: after the
 * lane's open slices end, or inside the innermost (a nonblocking collective started within
 * another's span and completed before it). With every lane taken, the slice goes where it is
 * cut least, its end cut to the innermost open slice's (args.dur_cut_ns says by how much).
 * *nlanes: how many lanes were used. order: scratch for the rank's records. 0 or -ENOMEM. */
static int rank_slices(struct trace *t, uint32_t r, struct when *order, unsigned *nlanes)
{
	const struct nt_log_rank *k = &t->rep->log->ranks[r];
	struct lane *lanes = t->lanes;
	*nlanes = 0;
	for (unsigned q = 0; q < LANES; q++)
		lanes[q].n = 0;
	for (uint64_t i = 0; i < k->nrecords; i++)
		order[i] = (struct when){ rec_start(k, &k->records[i]), i };
	qsort(order, (size_t)k->nrecords, sizeof *order, cmp_when);
	for (uint64_t i = 0; i < k->nrecords; i++) {
		const struct nt_log_record *x = &k->records[order[i].i];
		double start = order[i].ns, end = rec_end(k, x), cut = 0;
		if (end < start)
			end = start;
		unsigned lane = LANES;
		for (unsigned q = 0; q < *nlanes; q++) {
			struct lane *l = &lanes[q];
			while (l->n && innermost(l) <= start)
				l->n--;
			if (lane == LANES && (!l->n || end <= innermost(l)))
				lane = q;
		}
		if (lane == LANES && *nlanes < LANES)
			lane = (*nlanes)++;
		if (lane == LANES) { /* every lane taken: the one whose innermost slice ends last */
			lane = 0;
			for (unsigned q = 1; q < LANES; q++)
				if (innermost(&lanes[q]) > innermost(&lanes[lane]))
					lane = q;
			cut = end - innermost(&lanes[lane]);
			end -= cut;
			t->cut++;
		}
		if (lane_push(&lanes[lane], end) != 0)
			return -ENOMEM;
		record_slice(t, r, x, (uint64_t)k->rank * TID_STRIDE + 1 + lane, start, end, cut);
	}
	return 0;
}

/* The OS counters of rank r's probe windows, and its injected noise. A counter holds a
 * window's value from the window's start to its end (or the next window's start), and 0
 * where no window was recorded. order: scratch for the rank's records. Whether the rank had
 * injected noise in a window. */
static bool rank_windows(struct trace *t, uint32_t r, struct when *order)
{
	const struct nt_log_rank *k = &t->rep->log->ranks[r];
	size_t n = 0;
	for (uint64_t i = 0; i < k->nrecords; i++)
		if (has_window(&k->records[i]))
			order[n++] = (struct when){ win_start(k, &k->records[i]), i };
	qsort(order, n, sizeof *order, cmp_when);
	uint32_t pid = t->pid[r];
	uint64_t tid = (uint64_t)k->rank * TID_STRIDE + 1;
	char name[4][64];
	snprintf(name[0], sizeof name[0], "rank %" PRIu32 " run delay", k->rank);
	snprintf(name[1], sizeof name[1], "rank %" PRIu32 " CPU time", k->rank);
	snprintf(name[2], sizeof name[2], "rank %" PRIu32 " context switches", k->rank);
	snprintf(name[3], sizeof name[3], "rank %" PRIu32 " page faults", k->rank);
	const uint32_t needs[4] = { NT_SRC_SCHEDSTAT, NT_SRC_THREAD_CPU, NT_SRC_RUSAGE,
				    NT_SRC_RUSAGE };
	bool injected = false;
	for (size_t i = 0; i < n; i++) {
		const struct nt_log_window *w = &k->records[order[i].i].win;
		double start = order[i].ns, end = start + (double)w->wall_ns *
				(1 + (double)k->drift_ppb / 1e9);
		if (i + 1 < n && order[i + 1].ns < end)
			end = order[i + 1].ns;
		double wall = (double)w->wall_ns;
		for (int c = 0; c < 4; c++) {
			if (!(w->valid & needs[c]))
				continue;
			event_begin(t, 'C', name[c], pid, tid);
			put_ts(t, "ts", start);
			if (c == 0)
				fprintf(t->f, ",\"args\":{\"%% of window\":%.3f}}",
					100.0 * (double)w->run_delay_ns / wall);
			else if (c == 1)
				fprintf(t->f, ",\"args\":{\"%% of window\":%.3f}}",
					100.0 * (double)w->cpu_ns / wall);
			else if (c == 2)
				fprintf(t->f, ",\"args\":{\"voluntary\":%" PRIu64
					",\"involuntary\":%" PRIu64 "}}",
					w->vol_switches, w->invol_switches);
			else
				fprintf(t->f, ",\"args\":{\"minor\":%" PRIu64 ",\"major\":%" PRIu64
					"}}", w->minor_faults, w->major_faults);
			event_begin(t, 'C', name[c], pid, tid);
			put_ts(t, "ts", end);
			fputs(c < 2 ? ",\"args\":{\"% of window\":0}}"
			      : c == 2 ? ",\"args\":{\"voluntary\":0,\"involuntary\":0}}"
				       : ",\"args\":{\"minor\":0,\"major\":0}}", t->f);
		}
	}
	/* Injected noise: the log holds what the injector spun in each window, not when; the
	 * slice covers the window it happened in (doc/perfetto.md, "Injected noise"). */
	uint64_t itid = (uint64_t)k->rank * TID_STRIDE + TID_INJECTED;
	double prev_end = 0;
	for (size_t i = 0; i < n; i++) {
		const struct nt_log_record *x = &k->records[order[i].i];
		if (!x->win.injected_ns)
			continue;
		double start = order[i].ns, end = rec_end(k, x);
		if (injected && start < prev_end)
			start = prev_end;
		if (end < start)
			end = start;
		for (size_t q = i + 1; q < n; q++) /* up to the next injected window's start */
			if (k->records[order[q].i].win.injected_ns) {
				if (order[q].ns < end)
					end = order[q].ns > start ? order[q].ns : start;
				break;
			}
		char comm[64];
		comm_name(x, comm, sizeof comm);
		event_begin(t, 'X', "injected noise", pid, itid);
		put_key_str(t->f, "cat", "injected");
		put_ts(t, "ts", start);
		fprintf(t->f, ",\"dur\":%.3f,\"args\":{\"rank\":%" PRIu32, (end - start) / 1e3,
			k->rank);
		put_key_u64(t->f, "injected_ns", x->win.injected_ns);
		put_key_u64(t->f, "window_wall_ns", x->win.wall_ns);
		fprintf(t->f, ",\"injected_pct_of_window\":%.3f",
			100.0 * (double)x->win.injected_ns / (double)x->win.wall_ns);
		put_key_str(t->f, "window_ends_at", comm);
		fputs("}}", t->f);
		injected = true;
		prev_end = end;
	}
	return injected;
}

/* A rank by its host, and a host's group of ranks. */
struct by_host {
	const char *host;
	uint32_t r; /* index in log->ranks */
};

static int cmp_by_host(const void *x, const void *y)
{
	const struct by_host *a = x, *b = y;
	int c = strcmp(a->host, b->host);
	return c ? c : (a->r > b->r) - (a->r < b->r);
}

struct host_group {
	uint32_t first_rank; /* its lowest rank index */
	uint32_t at, n;      /* its ranks in the by_host array */
};

static int cmp_group(const void *x, const void *y)
{
	const struct host_group *a = x, *b = y;
	return (a->first_rank > b->first_rank) - (a->first_rank < b->first_rank);
}

/* Give each rank its host's process id, 1, 2, ... in order of the hosts' lowest ranks, and
 * name the processes after the hosts. O(n log n) in the ranks. */
static int host_processes(struct trace *t)
{
	const struct nt_log *log = t->rep->log;
	uint32_t n = log->nranks;
	struct by_host *h = calloc(n ? n : 1, sizeof *h);
	struct host_group *g = calloc(n ? n : 1, sizeof *g);
	if (!h || !g) {
		free(h);
		free(g);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < n; r++)
		h[r] = (struct by_host){ log->ranks[r].host ? log->ranks[r].host : "", r };
	qsort(h, n, sizeof *h, cmp_by_host);
	uint32_t ng = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(h[i - 1].host, h[i].host) != 0)
			g[ng++] = (struct host_group){ h[i].r, i, 0 };
		g[ng - 1].n++;
	}
	qsort(g, ng, sizeof *g, cmp_group);
	for (uint32_t p = 0; p < ng; p++) {
		for (uint32_t i = g[p].at; i < g[p].at + g[p].n; i++)
			t->pid[h[i].r] = p + 1;
		const char *host = h[g[p].at].host;
		meta_str(t, "process_name", p + 1, 0, host[0] ? host : "(no host)");
		meta_sort(t, "process_sort_index", p + 1, 0, p);
	}
	free(h);
	free(g);
	return 0;
}

/* The thread names of rank r's tracks: "rank R" (its first lane), "rank R overlapping K" (the
 * others), "rank R injected noise". */
static void rank_threads(struct trace *t, uint32_t r, unsigned lanes, bool injected)
{
	const struct nt_log_rank *k = &t->rep->log->ranks[r];
	uint64_t base = (uint64_t)k->rank * TID_STRIDE;
	char name[96];
	for (unsigned lane = 0; lane < (lanes ? lanes : 1); lane++) {
		if (lane == 0)
			snprintf(name, sizeof name, "rank %" PRIu32, k->rank);
		else
			snprintf(name, sizeof name, "rank %" PRIu32 " overlapping %u", k->rank,
				 lane);
		meta_str(t, "thread_name", t->pid[r], base + 1 + lane, name);
		meta_sort(t, "thread_sort_index", t->pid[r], base + 1 + lane, base + 1 + lane);
	}
	if (injected) {
		snprintf(name, sizeof name, "rank %" PRIu32 " injected noise", k->rank);
		meta_str(t, "thread_name", t->pid[r], base + TID_INJECTED, name);
		meta_sort(t, "thread_sort_index", t->pid[r], base + TID_INJECTED,
			  base + TID_INJECTED);
	}
}

/* ts 0: the global origin (rank 0's MPI_Init), or the earliest event when one comes before
 * it (a rank's clock offset, a window begun before), so that no timestamp is negative. */
static double time_origin(const struct nt_log *log)
{
	double origin = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		for (uint64_t i = 0; i < k->nrecords; i++) {
			const struct nt_log_record *x = &k->records[i];
			double s = has_window(x) ? win_start(k, x) : rec_start(k, x);
			double s2 = rec_start(k, x);
			if (s2 < s)
				s = s2;
			if (s < origin)
				origin = s;
		}
	}
	return origin;
}

int nt_perfetto_write(FILE *f, const struct nt_report *rep)
{
	if (!f || !rep || !rep->log || (rep->log->nranks && !rep->log->ranks))
		return -EINVAL;
	const struct nt_log *log = rep->log;
	uint64_t most = 0, records = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		if ((k->nrecords && !k->records) || (k->nsites && !k->sites))
			return -EINVAL;
		if (k->nrecords > most)
			most = k->nrecords;
		records += k->nrecords;
	}
	if (most > SIZE_MAX / sizeof(struct when))
		return -ENOMEM;
	struct trace t = { .f = f, .rep = rep, .first = true, .origin_ns = time_origin(log) };
	int rc = 0;
	const struct nt_attrib *a = &rep->attrib;
	t.nlate = a->nlate;
	t.late = calloc(a->nlate ? a->nlate : 1, sizeof *t.late);
	t.pid = calloc(log->nranks ? log->nranks : 1, sizeof *t.pid);
	struct when *order = calloc(most ? (size_t)most : 1, sizeof *order);
	t.lanes = calloc(LANES, sizeof *t.lanes);
	if (!t.late || !t.pid || !order || !t.lanes) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < a->nlate; i++)
		t.late[i] = &a->late[i];
	qsort(t.late, t.nlate, sizeof *t.late, cmp_late_key);

	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	rc = host_processes(&t);
	if (rc)
		goto out;
	for (uint32_t r = 0; r < log->nranks; r++) {
		unsigned lanes;
		rc = rank_slices(&t, r, order, &lanes);
		if (rc)
			goto out;
		bool injected = rank_windows(&t, r, order);
		rank_threads(&t, r, lanes, injected);
		if (ferror(f)) {
			rc = -EIO;
			goto out;
		}
	}
	fputs("\n],\n\"otherData\":{", f);
	fputs("\"schema\":\"noisetool-trace/1\",\"tool\":\"noisetool\"", f);
	put_key_str(f, "version", NT_VERSION);
	put_key_u64(f, "ranks", log->nranks);
	put_key_str(f, "level", nt_report_level_name(log->level));
	put_key_str(f, "wait_mode", nt_report_wait_name(log->wait_mode));
	put_key_u64(f, "poll_sample", log->poll_sample);
	put_key_u64(f, "crowded_ranks", rep->crowded_ranks);
	put_key_u64(f, "records", records);
	fprintf(f, ",\"time_origin_ns\":%.0f", t.origin_ns);
	put_key_u64(f, "clock_error_ns", a->clock_error_ns);
	put_key_u64(f, "instances_joined", a->instances_joined);
	put_key_u64(f, "instances_late", a->instances_late);
	put_key_u64(f, "late_threshold_ns", a->threshold_ns);
	put_key_u64(f, "slices_cut", t.cut);
	fprintf(f, ",\"partial\":%s}}\n", rep->partial ? "true" : "false");
	rc = ferror(f) ? -EIO : 0;
out:
	for (unsigned q = 0; t.lanes && q < LANES; q++)
		free(t.lanes[q].end);
	free(t.lanes);
	free(order);
	free(t.pid);
	free((void *)t.late);
	return rc;
}
