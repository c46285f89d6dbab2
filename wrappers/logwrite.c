/* The job log writer (format: doc/ntlog-format.md). */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include <noisetool/clock.h>
#include <noisetool/inject.h>
#include <noisetool/loss.h>
#include <noisetool/ntlog.h>
#include <noisetool-private/atomic-file.h>

#include "logwrite.h"
#include "modules.h"
#include "nbreqs.h"
#include "pysite.h"
#include "records.h"
#include "sites.h"
#include "window.h"
#include "toolwait.h"
#include NT_WRAPPER_IDS_FILE /* wrapper-ids-MPI.h, generated for this MPI (meson.build) */

/* Module path (absolute: a report names the same file:line from any directory) and offset of
 * an address (the call instruction is just before a return address). */
static void locate(uintptr_t addr, const char **module, uint64_t *offset)
{
	struct nt_module m;
	if (nt_module_of(addr, &m) == 0) {
		*module = m.path;
		*offset = addr - m.base;
	} else {
		*module = "";
		*offset = addr;
	}
}

void nt_logwrite_losses(uint64_t lost[NT_LOSS_COUNT])
{
	lost[NT_LOSS_MERGED_CALLS] = nt_sites_overflow();
	lost[NT_LOSS_RECORDS] = nt_records_dropped();
	lost[NT_LOSS_UNTIMED] = nt_requests_untimed();
	lost[NT_LOSS_UNREGISTERED] = nt_requests_unregistered();
	lost[NT_LOSS_UNKNOWN_COMM] = nt_records_unknown_comm();
}

/* Whether the rank's block is PARTIAL: exactly when it counts a loss of any kind. */
static bool rank_partial(const struct nt_log_rank *r)
{
	for (int k = 0; k < NT_LOSS_COUNT; k++)
		if (nt_loss_count(r, (enum nt_loss)k))
			return true;
	return false;
}

/* The global time base (rank 0's clock from its MPI_Init): this rank's MPI_Init on it and the
 * rate of global to local time, from the offsets measured at init and finalize. */
struct global_base {
	double local_init_ns;  /* this rank's MPI_Init on its own clock */
	double init_global_ns; /* and on the global base */
	double drift;          /* global time runs 1 + drift times as fast as local */
};

static struct global_base global_base(const struct nt_runtime *rt)
{
	const struct nt_clocksync_point *a = &rt->sync_init, *e = &rt->sync_fin;
	struct global_base g = { .local_init_ns = nt_clocksync_local_ns(rt->init_cyc) };
	double span = e->local_ns - a->local_ns;
	g.drift = span > 0 ? (e->offset_ns - a->offset_ns) / span : 0;
	g.init_global_ns = nt_clocksync_global_ns(a, e, g.local_init_ns) - rt->origin_ns;
	return g;
}

/* This rank's block, ready to be streamed: its fields, and its sites and records read from
 * their tables one at a time as the encoder asks, each given its log form on the way. The
 * tables are only read: until the log is on the disk, the live file holds the measurement
 * whole (a log that cannot be written leaves it readable, live.h). */
struct rank_block {
	struct nt_log_rank rank;
	char host[256];
	size_t site_it;        /* the site table position after the site last handed out */
	uint32_t site_next;    /* the log index of the next site with calls */
	uint32_t *log_index;   /* the log's site index of each table position (UINT32_MAX: none) */
	size_t log_cap;        /* its positions */
	size_t rec_pos;        /* the arena's record after the one last handed out */
	uint64_t rec_next;     /* the log's index of the next record handed out */
	struct global_base base;
	struct nt_log_source src;
	struct nt_log_block measured;
	unsigned char *chunk;  /* NT_LOG_CHUNK_BYTES: all the memory streaming it takes */
};

/* A site with calls in its log form; its strings point into static storage. */
static void describe_site(const struct nt_site *s, struct nt_log_site *o)
{
	o->function = s->fn < NT_FN_COUNT ? nt_fn_name[s->fn] : "?";
	const char *py = nt_pysite_module(s);
	if (s->ret == NT_SITE_OVERFLOW) {
		o->module = "[other call sites: the site table was full]";
		o->offset = 0;
	} else if (py) { /* "python:FUNCTION:FILE", and the line (doc/ntlog-format.md) */
		o->module = py;
		o->offset = s->py_line;
	} else {
		locate(s->ret - 1, &o->module, &o->offset);
	}
	o->calls = s->calls;
	o->total_ns = (uint64_t)nt_clock_cyc_to_ns(s->total_cyc);
	/* min, max and histogram are of the calls that did something: a site of polls alone has
	 * none (sites.h, nt_sites_add_poll), and 0 for both, as the live files' reader says */
	o->min_ns = s->min_cyc == UINT64_MAX ? 0 : (uint64_t)nt_clock_cyc_to_ns(s->min_cyc);
	o->max_ns = (uint64_t)nt_clock_cyc_to_ns(s->max_cyc);
	o->bytes = s->bytes;
	/* The log's last bin takes every longer call (sites.h). */
	memcpy(o->hist, s->hist, sizeof o->hist);
	for (unsigned b = NT_LOG_HIST_BINS; b < NT_SITE_HIST; b++)
		o->hist[NT_LOG_HIST_BINS - 1] += s->hist[b];
	o->depth = (uint32_t)(s->depth < NT_LOG_MAX_DEPTH ? s->depth : NT_LOG_MAX_DEPTH);
	for (uint32_t k = 0; k < o->depth; k++)
		locate(s->stack[k] - (k ? 1 : 0), &o->frames[k].module, &o->frames[k].offset);
}

/* The encoder's site source (nt_log_site_fn): the sites with calls in table order, so that
 * site i is the next one after site i - 1; each pass starts over at 0. */
static int site_at(void *ctx, uint32_t i, struct nt_log_site *o)
{
	struct rank_block *b = ctx;
	if (i < b->site_next) {
		b->site_it = 0;
		b->site_next = 0;
	}
	for (struct nt_site *s; (s = nt_sites_next(&b->site_it));) {
		if (s->calls == 0)
			continue;
		if (b->site_next++ == i) {
			describe_site(s, o);
			return 0;
		}
	}
	return -EIO; /* fewer sites with calls than counted */
}

/* The rank's own fields: times, the global time base, the injector, the probe, its losses. */
static void rank_fields(const struct nt_runtime *rt, struct rank_block *b)
{
	struct nt_log_rank *r = &b->rank;
	gethostname(b->host, sizeof b->host - 1);
	r->rank = (uint32_t)rt->rank;
	r->host = b->host;
	r->command = rt->job.command;
	r->mpi_library = rt->job.mpi_library;
	r->tool_version = rt->job.tool_version;
	r->user = rt->job.batch.user;
	r->batch_system = rt->job.batch.system;
	r->batch_job = rt->job.batch.job;
	r->batch_nodes = rt->job.batch.nodes;
	r->cpus = rt->cpus.list;
	r->cpu_ns = rt->cpus.cpu_ns;
	r->run_delay_ns = rt->cpus.run_delay_ns;
	r->cpus_busy_ns = rt->cpus.busy_ns;
	r->cpus_steal_ns = rt->cpus.steal_ns;
	r->pid = (uint32_t)getpid();
	r->scan_ns = rt->cpus.scan_ns[0] + rt->cpus.scan_ns[1];
	const struct nt_cpushare *c = &rt->cpus;
	r->others_from_ns = c->first_reading_ns; /* 0 when never read: no other tasks then */
	r->others_run_delay_ns = c->others_run_delay_ns;
	if (c->others_known) {
		r->others_flags = NT_LOG_OTHERS_KNOWN |
				  (c->threads_left_out ? NT_LOG_OTHERS_PARTIAL : 0);
		r->others_ns = c->others.run_ns;
		r->others_count = (uint32_t)c->others.count;
		r->nothers = (uint32_t)(c->others.n < NT_LOG_OTHERS_MAX ? c->others.n
									: NT_LOG_OTHERS_MAX);
		for (uint32_t i = 0; i < r->nothers; i++) {
			const struct nt_task_use *u = &c->others.tasks[i];
			r->others[i].pid = (uint32_t)u->pid;
			r->others[i].kind = u->kind == NT_TASK_KERNEL	   ? NT_LOG_TASK_KERNEL
					    : u->kind == NT_TASK_OTHER_USER ? NT_LOG_TASK_OTHER_USER
									    : NT_LOG_TASK_PROCESS;
			r->others[i].run_ns = u->run_ns;
			memcpy(r->others[i].comm, u->comm, sizeof r->others[i].comm);
		}
	}
	if (c->others_skipped)
		r->others_flags = NT_LOG_OTHERS_SKIPPED;
	if (c->irqs_known) {
		r->others_flags |= NT_LOG_IRQS_KNOWN;
		r->irq_count = c->irq_count;
		r->softirq_count = c->softirq_count;
		r->nirqs = (uint32_t)(c->nirq_top < NT_LOG_IRQS_MAX ? c->nirq_top : NT_LOG_IRQS_MAX);
		for (uint32_t i = 0; i < r->nirqs; i++) {
			struct nt_log_irq *q = &r->irqs[i];
			const struct nt_cpushare_irq *t = &c->irq_top[i];
			q->kind = t->soft ? NT_LOG_IRQ_SOFTIRQ : NT_LOG_IRQ_INTERRUPT;
			snprintf(q->name, sizeof q->name, "%s", t->c.name);
			snprintf(q->desc, sizeof q->desc, "%s", t->c.desc);
			q->count = t->c.count;
		}
	}
	r->wall_ns = (uint64_t)nt_clock_cyc_to_ns(rt->finalize_cyc - rt->init_cyc);
	struct global_base g = global_base(rt);
	r->init_global_ns = (int64_t)llround(g.init_global_ns);
	r->drift_ppb = (int64_t)llround(g.drift * 1e9);
	const struct nt_clocksync_point *a = &rt->sync_init, *e = &rt->sync_fin;
	r->clock_error_ns = (uint64_t)(a->error_ns > e->error_ns ? a->error_ns : e->error_ns);
	r->injected_ns = (uint64_t)nt_clock_cyc_to_ns(nt_inject_taken_cyc());
	r->injected_count = nt_inject_count();
	double cost_ns;
	nt_window_stats(&r->probe_reads, &cost_ns);
	r->probe_cost_ns = (uint64_t)cost_ns;
	uint64_t lost[NT_LOSS_COUNT];
	nt_logwrite_losses(lost);
	r->dropped = lost[NT_LOSS_MERGED_CALLS];
	r->dropped_records = lost[NT_LOSS_RECORDS];
	r->untimed_instances = lost[NT_LOSS_UNTIMED];
	r->unregistered_persistent = lost[NT_LOSS_UNREGISTERED];
	r->unknown_comm_records = lost[NT_LOSS_UNKNOWN_COMM];
	if (rank_partial(r))
		r->flags |= NT_LOG_FLAG_PARTIAL;
	/* Sites with calls (the rest do not go into the log), and the rank's MPI time. */
	size_t it = 0;
	for (struct nt_site *s; (s = nt_sites_next(&it));) {
		if (s->calls == 0)
			continue;
		r->nsites++;
		if (!s->nonblocking) /* overlapped with other work: not time spent in MPI */
			r->mpi_ns += (uint64_t)nt_clock_cyc_to_ns(s->total_cyc);
	}
}

/* The log's site index of each table position (at most 2^16 + NT_FN_COUNT of them: 256 KiB,
 * 17 KiB with the default arena). 0 or -ENOMEM. */
static int index_sites(struct rank_block *b)
{
	size_t cap = nt_sites_slots(), it = 0;
	b->log_index = malloc((cap ? cap : 1) * sizeof *b->log_index);
	if (!b->log_index)
		return -ENOMEM;
	b->log_cap = cap;
	/* A site without calls is not in the log (a site with none since MPI_Pcontrol(2)): a
	 * record of it was made before the reset, or while another thread reset it, and is
	 * left out with the records the reset forgot (flags 0), never given to another site. */
	for (size_t k = 0; k < cap; k++)
		b->log_index[k] = UINT32_MAX;
	uint32_t n = 0;
	for (struct nt_site *s; (s = nt_sites_next(&it));)
		if (s->calls > 0)
			b->log_index[nt_sites_index(s)] = n++;
	return 0;
}

/* Whether the arena's record x goes into the log: one the reset did not forget, of a site in
 * the log. */
static bool record_kept(const struct rank_block *b, const struct nt_record *x)
{
	return x->flags && x->site < b->log_cap && b->log_index[x->site] != UINT32_MAX;
}

/* With NOISETOOL_TEST_CLOCK: the largest error of a record's global time. One node, one
 * counter: the truth is rank 0's clock read at our counter. */
static uint64_t clock_test_error(const struct nt_runtime *rt, const struct rank_block *b)
{
	const struct global_base *g = &b->base;
	double worst = 0;
	for (size_t i = 0; rt->clock_hook && i < nt_records_count(); i++) {
		if (!record_kept(b, nt_records_get(i)))
			continue;
		uint64_t t0_cyc = nt_records_get(i)->t0_cyc;
		double truth = nt_clocksync_local_ns_with(&rt->rank0, t0_cyc) - rt->origin_ns;
		double est = g->init_global_ns +
			     (nt_clocksync_local_ns(t0_cyc) - g->local_init_ns) * (1 + g->drift);
		if (fabs(est - truth) > worst)
			worst = fabs(est - truth);
	}
	return (uint64_t)ceil(worst);
}

/* The records the log keeps (record_kept). */
static uint64_t kept_records(const struct rank_block *b)
{
	uint64_t n = 0;
	for (size_t i = 0; i < nt_records_count(); i++)
		n += record_kept(b, nt_records_get(i));
	return n;
}

/* The encoder's record source (nt_log_record_fn): the log's record i in its log form, made from
 * the arena's record, which stays as it is (a copy of all of them would double MPI_Finalize's
 * peak: +12 MiB with a full default arena). The log's records are the arena's kept ones, in
 * order; the encoder asks for them in order (once to measure the block, once to stream it), so
 * the next one is found from where the last one was. */
static int record_at(void *ctx, uint64_t i, struct nt_log_record *o)
{
	struct rank_block *b = ctx;
	if (i != b->rec_next) { /* from the start: skip i kept records */
		b->rec_pos = 0;
		b->rec_next = 0;
	}
	const struct nt_record *x;
	for (;;) {
		x = nt_records_get(b->rec_pos++);
		if (!x)
			return -EIO; /* fewer records than counted */
		if (record_kept(b, x) && b->rec_next++ == i)
			break;
	}
	const struct global_base *g = &b->base;
	*o = (struct nt_log_record){
		.comm_id = x->comm_id,
		.seq = x->seq,
		.site = b->log_index[x->site],
		.flags = x->flags,
		.start_ns = (uint64_t)(nt_clocksync_local_ns(x->t0_cyc) - g->local_init_ns),
		.duration_ns = (uint64_t)nt_clock_cyc_to_ns(x->d_cyc),
		.phase_ns = (uint64_t)nt_clock_cyc_to_ns(x->phase_cyc),
		.interval_ns = (uint64_t)nt_clock_cyc_to_ns(x->interval_cyc),
		.p2p_ns = (uint64_t)nt_clock_cyc_to_ns(x->p2p_cyc),
	};
	struct nt_log_window *w = &o->win;
#define WIN_VALUE_NS(v) (v)
#define WIN_VALUE_CYC(v) (uint64_t)nt_clock_cyc_to_ns(v)
#define WIN_VALUE_COUNT(v) (v)
#define WINDOW_FIELD(id, name, kind, source, since, key)                                        \
	w->NT_LOG_WINDOW_NAME(kind, name) = WIN_VALUE_##kind(x->win.NT_LOG_WINDOW_RAW(kind, name));
	NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
#undef WIN_VALUE_NS
#undef WIN_VALUE_CYC
#undef WIN_VALUE_COUNT
	w->valid = x->win.valid;
	return 0;
}

static void free_block(struct rank_block *b)
{
	free(b->chunk);
	free(b->log_index);
	b->chunk = NULL;
	b->log_index = NULL;
}

/* This rank's block: its fields, its size and checksum measured (its sites and records read
 * from their tables), and the chunk that will stream it. 0 or -errno (then free_block). */
static int prepare_block(const struct nt_runtime *rt, struct rank_block *b)
{
	memset(b, 0, sizeof *b);
	rank_fields(rt, b);
	int rc = index_sites(b);
	if (rc)
		return rc;
	b->base = global_base(rt);
	b->rank.clock_test_error_ns = clock_test_error(rt, b);
	b->rank.nrecords = kept_records(b);
	b->src = (struct nt_log_source){ .rank = &b->rank, .site = site_at, .site_ctx = b,
					 .record = record_at, .record_ctx = b };
	rc = nt_log_rank_measure(&b->src, &b->measured);
	if (rc)
		return rc;
	b->chunk = malloc(NT_LOG_CHUNK_BYTES);
	return b->chunk ? 0 : -ENOMEM;
}

/* Hand the rank's block to sink, a chunk at a time. */
static int stream_block(struct rank_block *b, nt_log_sink_fn sink, void *sink_ctx)
{
	return nt_log_rank_stream(&b->src, &b->measured, b->chunk, NT_LOG_CHUNK_BYTES, sink,
				  sink_ctx);
}

/* The job's id in its name: NOISETOOL_JOB, else rank 0's host and pid (unique among the jobs
 * running at one time on that host). */
static void job_id(const char *job, char *id, size_t size)
{
	if (job) {
		snprintf(id, size, "%s", job);
		return;
	}
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	/* A host name may hold characters a file name should not. */
	for (char *c = host; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-", *c))
			*c = c[1] ? '_' : '\0';
	snprintf(id, size, "%.64s-%ld", host[0] ? host : "host", (long)getpid());
}

int nt_logwrite_reserve(const char *out_dir, const char *job, char *name, size_t size)
{
	struct stat st;
	if (stat(out_dir, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(out_dir, W_OK | X_OK) != 0)
		return -errno;
	/* Absolute: the program may change its directory before MPI_Finalize. */
	char abs_dir[PATH_MAX];
	if (realpath(out_dir, abs_dir))
		out_dir = abs_dir;
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char stamp[32], id[128];
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	job_id(job, id, sizeof id);
	extern char *program_invocation_short_name;
	for (int n = 0; n < 1000; n++) {
		char suffix[16] = "", live[NT_LOG_NAME_MAX + 16], log[NT_LOG_NAME_MAX + 16];
		if (n)
			snprintf(suffix, sizeof suffix, "-%d", n);
		int w = snprintf(name, size, "%s/%s-%s-%s%s", out_dir, program_invocation_short_name,
				 stamp, id, suffix);
		if (w < 0 || (size_t)w >= size || (size_t)w + 16 > sizeof live)
			return -ENAMETOOLONG;
		snprintf(live, sizeof live, "%s.live", name);
		snprintf(log, sizeof log, "%s.ntlog", name);
		if (access(log, F_OK) == 0)
			continue;
		if (mkdir(live, 0755) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

void nt_logwrite_unreserve(const char *name)
{
	char live[NT_LOG_NAME_MAX + 16];
	snprintf(live, sizeof live, "%s.live", name);
	rmdir(live);
}

/* The sink of a file (nt_log_sink_fn): ctx points at its descriptor. */
static int to_fd(void *ctx, const unsigned char *bytes, size_t len)
{
	int fd = *(const int *)ctx;
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, bytes + done, len - done);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			done += (size_t)n;
	}
	return 0;
}

/* What goes into a new file: fill writes it to fd. 0 or -errno. */
typedef int (*fill_fn)(void *ctx, int fd);

static int fill_header(void *header, int fd)
{
	return to_fd(&fd, header, NT_LOG_HEADER_BYTES);
}

static int fill_block(void *block, int fd)
{
	return stream_block(block, to_fd, &fd);
}

/* A new file at path, written by fill, never replacing an existing file (noisetool-private/atomic-file.h):
 * PATH.tmp, fsync'ed, then link(). */
static int write_new_file(const char *path, fill_fn fill, void *ctx)
{
	char tmp[NT_ATOMIC_FILE_TMP_MAX];
	int fd = nt_atomic_file_create(path, NT_ATOMIC_FILE_TMP_FIXED, 0644, tmp, sizeof tmp);
	if (fd < 0)
		return fd;
	int rc = fill(ctx, fd);
	if (rc != 0) {
		nt_atomic_file_discard(fd, tmp);
		return rc;
	}
	rc = nt_atomic_file_close(fd);
	if (rc != 0) {
		nt_atomic_file_discard(-1, tmp);
		return rc;
	}
	return nt_atomic_file_link(tmp, path);
}

/* The log's names on the disk: its directory fsync'ed after they were linked, before any rank
 * lets its live file go (a machine that fails just after MPI_Finalize keeps one or the other).
 * Best effort: a file system that cannot sync a directory (EINVAL) has no other way. */
static void sync_dir(const char *name)
{
	char dir[NT_LOG_NAME_MAX + 16];
	snprintf(dir, sizeof dir, "%s", name);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* The tool's own exchanges: nonblocking, waited for by the loop that gives the CPU away. */
static void allreduce_min(int *mine, int *all, MPI_Comm c)
{
	MPI_Request q;
	PMPI_Iallreduce(mine, all, 1, MPI_INT, MPI_MIN, c, &q);
	nt_toolwait(&q, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS);
}

static void bcast_int(int *v, MPI_Comm c)
{
	MPI_Request q;
	PMPI_Ibcast(v, 1, MPI_INT, 0, c, &q);
	nt_toolwait(&q, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS);
}

/* The sink of the shared file (nt_log_sink_fn): each chunk at the next offset. */
struct file_at {
	int fd;
	off_t offset;
};

static int to_file_at(void *ctx, const unsigned char *bytes, size_t len)
{
	struct file_at *f = ctx;
	for (size_t done = 0; done < len;) {
		ssize_t n = pwrite(f->fd, bytes + done, len - done, f->offset);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0) {
			done += (size_t)n;
			f->offset += n;
		}
	}
	return 0;
}

/* One file: rank 0 creates it, then every rank opens it by itself and writes its block at its
 * offset, a chunk at a time, with plain POSIX calls. A collective MPI-IO open and write spun in
 * MPICH's busy waits for 110-190 ms at 4 ranks on 2 CPUs; independent MPI-IO writes took
 * ~10 ms, as these do, but ran ~0.5 MiB of ROMIO's code and data in every rank, past its arena
 * (doc/environment.md, NOISETOOL_MEM). The blocks are disjoint byte ranges, which NFS clients
 * and parallel file systems write as such. Each rank puts its block on the disk (fsync) before
 * rank 0 gives the file its name (link: never over an existing file; noisetool-private/atomic-file.h). A rank that
 * cannot open the file makes every rank take the per-rank fallback. Collective; returns the
 * same result on every rank. */
static int write_shared(const struct nt_runtime *rt, const char *name,
			const unsigned char *header, struct rank_block *b, unsigned long long before)
{
	MPI_Comm c = rt->comm;
	char tmp[NT_ATOMIC_FILE_TMP_MAX] = "";
	int fd = -1, all_opened = 0;
	if (rt->rank == 0)
		fd = nt_atomic_file_create(name, NT_ATOMIC_FILE_TMP_FIXED, 0644, tmp, sizeof tmp);
	int opened = rt->rank != 0 || fd >= 0;
	allreduce_min(&opened, &all_opened, c);
	if (!all_opened) {
		if (fd >= 0)
			nt_atomic_file_discard(fd, tmp);
		return -EIO;
	}
	if (rt->rank != 0)
		fd = nt_atomic_file_open_fixed(name);
	int ok = fd >= 0;
	if (ok) {
		struct file_at at = { fd, 0 };
		if (rt->rank == 0)
			ok = to_file_at(&at, header, NT_LOG_HEADER_BYTES) == 0;
		at.offset = (off_t)(NT_LOG_HEADER_BYTES + before);
		ok = stream_block(b, to_file_at, &at) == 0 && ok;
		ok = nt_atomic_file_close(fd) == 0 && ok; /* each rank's block on the disk */
	}
	int mine = ok ? 0 : -EIO, worst = 0;
	allreduce_min(&mine, &worst, c);
	if (rt->rank == 0) {
		/* Every block is on the disk: the name, which link() never takes from a file. */
		if (worst == 0)
			worst = nt_atomic_file_link(tmp, name);
		else
			nt_atomic_file_discard(-1, tmp);
		if (worst == 0)
			sync_dir(name);
	}
	bcast_int(&worst, c);
	return worst;
}

/* The fallback: every rank writes its block to NAME.partR, then rank 0 writes NAME holding
 * only the header (the reader then reads the parts). Collective. */
static int write_per_rank(const struct nt_runtime *rt, const char *name, unsigned char *header,
			  struct rank_block *b)
{
	MPI_Comm c = rt->comm;
	char part[4096 + 32];
	snprintf(part, sizeof part, "%s.part%d", name, rt->rank);
	int mine = write_new_file(part, fill_block, b), worst = 0;
	allreduce_min(&mine, &worst, c);
	if (worst == 0 && rt->rank == 0)
		worst = write_new_file(name, fill_header, header);
	if (worst == 0 && rt->rank == 0)
		sync_dir(name); /* the parts' names too: they are beside it */
	bcast_int(&worst, c);
	if (worst != 0 && mine == 0)
		unlink(part); /* leave nothing half done */
	return worst;
}

int nt_logwrite(const struct nt_runtime *rt, char *path, size_t size)
{
	MPI_Comm c = rt->comm;
	/* The block is measured now (its length sets the others' offsets) and streamed once the
	 * file is open: however many records, the write takes one chunk of memory. */
	struct rank_block block;
	int rc = prepare_block(rt, &block);

	/* Everything the ranks exchange before the write, started together and waited for in a
	 * loop that gives the CPU away (toolwait.h): with more ranks than CPUs, MPICH's blocking
	 * calls spun for whole scheduler slices (~190 ms at 4 ranks on 2 CPUs, 10 ms now). */
	int all_rc;
	unsigned long long mylen = rc == 0 ? block.measured.bytes : 0, before = 0;
	unsigned flags_local = block.rank.flags & NT_LOG_FLAG_PARTIAL;
	unsigned flags = 0;
	MPI_Request q[3];
	PMPI_Iallreduce(&rc, &all_rc, 1, MPI_INT, MPI_MIN, c, &q[0]);
	PMPI_Iexscan(&mylen, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, c, &q[1]);
	PMPI_Iallreduce(&flags_local, &flags, 1, MPI_UNSIGNED, MPI_BOR, c, &q[2]);
	nt_toolwait_all(3, q, MPI_STATUSES_IGNORE, NT_TOOLWAIT_SPIN_NS);
	if (all_rc) {
		free_block(&block);
		return all_rc;
	}
	/* The name reserved at MPI_Init (nt_logwrite_reserve), the same on every rank. */
	char name[NT_LOG_NAME_MAX + 16];
	snprintf(name, sizeof name, "%s.ntlog", rt->log_name);
	/* Offsets: the header, then the blocks in rank order. */
	if (rt->rank == 0)
		before = 0; /* MPI_Exscan leaves rank 0's result undefined */

	unsigned char header[NT_LOG_HEADER_BYTES];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	nt_log_header(header, (uint32_t)rt->size, flags, (uint32_t)rt->env.level,
		      (uint32_t)rt->env.wait, rt->env.poll_sample, nt_clock_hz(),
		      (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);

	int worst = -EIO;
	if (!rt->env.log_per_rank)
		worst = write_shared(rt, name, header, &block, before);
	if (worst != 0) /* a rank could not open the shared file (or asked not to): one part
			 * file per rank */
		worst = write_per_rank(rt, name, header, &block);
	free_block(&block);
	if (worst == 0)
		snprintf(path, size, "%s", name);
	return worst;
}
