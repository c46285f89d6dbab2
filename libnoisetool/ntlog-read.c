/* The .ntlog reader: decodes a log while it reads it, from one buffer (nt_log_decode) or from
 * its file and per-rank parts through a bounded window (nt_log_read_file), and validates every
 * length, checksum and range. Memory: the decoded log and the window, never the file. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool/ntlog.h>

#include "errmsg.h"
#include "mem-headroom.h"
#include "ntlog-bytes.h"
#include "ntlog-read.h"
#include "units.h"

enum { RANK_HEADER_BYTES = NT_LOG_RANK_HEADER_BYTES };

/* Smallest encoding of one site: two empty strings and the fixed fields. A record: 140 bytes
 * since version 2, which added the interval and its point-to-point time. */
enum { MIN_SITE_BYTES = 4 + 4 + 8 * 6 + 8 * NT_LOG_HIST_BINS + 4 };

/* A record's bytes in a log of version: 48 before its interval (version 2 on: 16 more), then
 * the window's fields that version has (noisetool/ntlog.h, NT_LOG_WINDOW_FIELDS) and its
 * sources' bits. */
static size_t record_bytes(uint32_t version)
{
	size_t n = 48 + (version >= 2 ? 16 : 0) + 4;
#define WINDOW_FIELD(id, name, kind, source, since, key) n += version >= (since) ? 8 : 0;
	NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
	return n;
}

/* The ranges a reader accepts (doc/ntlog-format.md, "Ranges"): times and their sums stay far
 * from overflowing the report's arithmetic (2^56 ns is 2.28 years), and global time runs
 * forward at most 11 times as fast as a rank's clock and backward at most 9 times. */
#define MAX_NS (1ull << 56)
#define MAX_DRIFT_PPB 10000000000ll

/* A block's contents are not a block (the message names the version it was read as). */
#define MALFORMED 1

/* The files of a log on disk: PATH, and for a per-rank log PATH.part0 ... PATH.part(P-1). */
struct files {
	const char *path;
	uint32_t n;        /* 1, or 1 + the number of parts */
	uint64_t *bytes;   /* each one's size when it was checked */
	uint32_t cur;      /* the one being read */
	int fd;            /* -1: none open */
	uint64_t cur_left; /* its bytes not read yet */
};

/* A log's bytes as the decoder sees them: p[pos..end) read and not consumed yet, p[0] at
 * offset base of the input (the concatenation of its files). Reading from files, the window
 * is buf; from memory, p is the whole input and nothing is ever read. */
struct input {
	const unsigned char *p;
	size_t pos, end;
	uint64_t base;
	uint64_t len;  /* the whole input */
	uint64_t stop; /* nothing is consumed past it: the end of the block being decoded, or len */
	bool bad;      /* a field ran past stop, or had an impossible value */
	/* The CRC of the block's payload, over its bytes up to crc_at (consumed bytes are
	 * checksummed when the window moves, and at the block's end). */
	bool in_block;
	uint32_t crc;
	uint64_t crc_at;
	unsigned char *buf;
	size_t cap;
	struct files *files;
	int io_rc;          /* a read failed: -errno (-ENODATA: a file got shorter) */
	uint32_t io_file;   /* in which file */
	/* Memory: what the decoded log and its report's share take so far, against room. */
	const struct nt_mem_headroom *room; /* NULL: no limit but malloc's */
	uint64_t used;
	bool over;          /* used went past room->bytes */
	/* Strings, NUL-terminated, one after the other; named by their offset while the pool
	 * grows, made pointers at the end. Offset 0 is the empty string. */
	char *pool;
	size_t pool_used, pool_cap;
};

static inline uint64_t at(const struct input *in)
{
	return in->base + in->pos;
}

/* Bytes that may still be consumed (in the block being decoded, or in the input). */
static inline uint64_t left(const struct input *in)
{
	return in->stop - at(in);
}

static void crc_flush(struct input *in)
{
	if (in->in_block && at(in) > in->crc_at) {
		in->crc = nt_crc32(in->crc, in->p + (in->crc_at - in->base), at(in) - in->crc_at);
		in->crc_at = at(in);
	}
}

/* Open path for reading (or to check it), checking what it is: 0 with *fd and its size, or
 * -errno: -EISDIR a directory, -ENODEV not a regular file (FIFO, socket, device: opened
 * without blocking and never read). */
static int open_input(const char *path, int *fd, uint64_t *bytes)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (*fd < 0)
		return -errno;
	struct stat st;
	int rc = fstat(*fd, &st) != 0 ? -errno
		 : S_ISDIR(st.st_mode) ? -EISDIR
		 : !S_ISREG(st.st_mode) ? -ENODEV
					 : 0;
	if (rc) {
		close(*fd);
		*fd = -1;
		return rc;
	}
	*bytes = (uint64_t)st.st_size;
	return 0;
}

/* The name of file i of f (0: the log, i: its part i - 1) in buf; -ENAMETOOLONG when it does
 * not fit (never a truncated name: another file). */
static int file_name(const struct files *f, uint32_t i, char *buf, size_t size)
{
	int n = i == 0 ? snprintf(buf, size, "%s", f->path)
		       : snprintf(buf, size, "%s.part%u", f->path, i - 1);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* More of the input into the window, so that it holds n bytes (n <= cap) from pos: the bytes
 * consumed are checksummed and dropped, the rest moved to the front, and the window filled
 * from the files. false when a read fails (io_rc says why). */
static bool refill(struct input *in, size_t n)
{
	struct files *f = in->files;
	if (!f || in->io_rc)
		return false;
	crc_flush(in);
	size_t keep = in->end - in->pos;
	memmove(in->buf, in->buf + in->pos, keep);
	in->base += in->pos;
	in->pos = 0;
	in->end = keep;
	uint64_t rest = in->len - in->base;
	size_t want = rest < in->cap ? (size_t)rest : in->cap;
	while (in->end < want) {
		if (f->fd < 0) {
			if (f->cur >= f->n) {
				in->io_rc = -ENODATA;
				return false;
			}
			if (f->bytes[f->cur] == 0) {
				f->cur++;
				continue;
			}
			char name[4096];
			uint64_t now = 0;
			int rc = file_name(f, f->cur, name, sizeof name);
			if (rc == 0)
				rc = open_input(name, &f->fd, &now);
			if (rc == 0 && now < f->bytes[f->cur]) {
				close(f->fd);
				f->fd = -1;
				rc = -ENODATA;
			}
			if (rc) {
				in->io_rc = rc;
				in->io_file = f->cur;
				return false;
			}
			posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
			f->cur_left = f->bytes[f->cur];
		}
		size_t k = want - in->end;
		if (k > f->cur_left)
			k = (size_t)f->cur_left;
		ssize_t got = read(f->fd, in->buf + in->end, k);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			in->io_rc = got < 0 ? -errno : -ENODATA;
			in->io_file = f->cur;
			return false;
		}
		in->end += (size_t)got;
		f->cur_left -= (uint64_t)got;
		if (f->cur_left == 0) {
			close(f->fd);
			f->fd = -1;
			f->cur++;
		}
	}
	return in->end >= n;
}

/* Whether the window holds n more bytes within stop (reading them if needed). */
static inline bool need(struct input *in, size_t n)
{
	return n <= left(in) && (in->end - in->pos >= n || refill(in, n));
}

/* Consume n bytes (n <= left) unread by the decoder: the rest of a block, for its CRC. */
static void skip(struct input *in, uint64_t n)
{
	while (n > 0) {
		if (in->pos == in->end && !refill(in, 1))
			return;
		size_t k = in->end - in->pos < n ? in->end - in->pos : (size_t)n;
		in->pos += k;
		n -= k;
	}
}

/* Count bytes of memory against the room; false (and over set) when they pass it. */
static bool charge(struct input *in, uint64_t bytes)
{
	in->used = bytes > UINT64_MAX - in->used ? UINT64_MAX : in->used + bytes;
	if (in->room && in->used > in->room->bytes)
		in->over = true;
	return !in->over;
}

static uint32_t r32(struct input *in)
{
	if (in->bad || !need(in, 4)) {
		in->bad = true;
		return 0;
	}
	uint32_t v = nt_get32(in->p + in->pos);
	in->pos += 4;
	return v;
}

static uint64_t r64(struct input *in)
{
	if (in->bad || !need(in, 8)) {
		in->bad = true;
		return 0;
	}
	uint64_t v = nt_get64(in->p + in->pos);
	in->pos += 8;
	return v;
}

#define AS_OFFSET(o) ((const char *)(uintptr_t)(o))

/* A fixed field of size bytes: printable ASCII ended by a NUL (the rest anything); false (and
 * the block bad) otherwise. */
static bool rname(struct input *in, char *out, size_t size)
{
	if (in->bad || !need(in, size)) {
		in->bad = true;
		return false;
	}
	memcpy(out, in->p + in->pos, size);
	in->pos += size;
	size_t k = 0;
	while (k < size && out[k] >= 0x20 && out[k] < 0x7f)
		k++;
	if (k == size || out[k] != '\0') {
		in->bad = true;
		return false;
	}
	return true;
}

/* Version 7's other tasks on the rank's CPUs, and the interrupts and softirqs there: at most NT_LOG_OTHERS_MAX of the counted ones,
 * known kinds and flags, names of printable ASCII ended by a NUL. */
static void decode_others(struct input *in, struct nt_log_rank *out)
{
	out->pid = r32(in);
	out->others_flags = r32(in);
	out->others_ns = r64(in);
	out->others_count = r32(in);
	out->nothers = r32(in);
	if (in->bad ||
	    (out->others_flags & ~(NT_LOG_OTHERS_KNOWN | NT_LOG_OTHERS_PARTIAL | NT_LOG_IRQS_KNOWN |
				   NT_LOG_OTHERS_SKIPPED)) ||
	    ((out->others_flags & NT_LOG_OTHERS_SKIPPED) &&
	     ((out->others_flags & (NT_LOG_OTHERS_KNOWN | NT_LOG_OTHERS_PARTIAL)) ||
	      out->others_ns || out->others_count)) ||
	    out->nothers > NT_LOG_OTHERS_MAX || out->nothers > out->others_count) {
		in->bad = true;
		return;
	}
	for (uint32_t i = 0; i < out->nothers; i++) {
		struct nt_log_task *t = &out->others[i];
		t->pid = r32(in);
		t->kind = r32(in);
		t->run_ns = r64(in);
		if (in->bad || t->kind >= NT_LOG_TASK_KIND_COUNT) {
			in->bad = true;
			return;
		}
		if (!rname(in, t->comm, sizeof t->comm))
			return;
	}
	out->irq_count = r64(in);
	out->softirq_count = r64(in);
	out->nirqs = r32(in);
	if (in->bad || out->nirqs > NT_LOG_IRQS_MAX) {
		in->bad = true;
		return;
	}
	for (uint32_t i = 0; i < out->nirqs; i++) {
		struct nt_log_irq *q = &out->irqs[i];
		q->kind = r32(in);
		if (in->bad || q->kind >= NT_LOG_IRQ_KIND_COUNT) {
			in->bad = true;
			return;
		}
		if (!rname(in, q->name, sizeof q->name) || !rname(in, q->desc, sizeof q->desc))
			return;
		q->count = r64(in);
	}
	out->scan_ns = r64(in);
}

/* A string into the pool, named by its offset (AS_OFFSET); offset 0 ("") when it is bad.
 * Returns -ENOMEM when the pool cannot grow, else 0. */
static int rstr(struct input *in, const char **out)
{
	*out = AS_OFFSET(0);
	uint32_t n = r32(in);
	if (in->bad || n > left(in)) {
		in->bad = true;
		return 0;
	}
	if (in->pool_cap - in->pool_used < (size_t)n + 1) {
		size_t cap = in->pool_cap;
		while (cap - in->pool_used < (size_t)n + 1)
			cap *= 2;
		if (!charge(in, cap - in->pool_cap))
			return -ENOMEM;
		char *p = realloc(in->pool, cap);
		if (!p)
			return -ENOMEM;
		in->pool = p;
		in->pool_cap = cap;
	}
	char *s = in->pool + in->pool_used;
	for (size_t got = 0; got < n;) {
		if (in->pos == in->end && !refill(in, 1)) {
			in->bad = true;
			return 0;
		}
		size_t k = in->end - in->pos < n - got ? in->end - in->pos : n - got;
		memcpy(s + got, in->p + in->pos, k);
		in->pos += k;
		got += k;
	}
	s[n] = '\0';
	if (memchr(s, '\0', n)) { /* no embedded NULs */
		in->bad = true;
		return 0;
	}
	*out = AS_OFFSET(in->pool_used);
	in->pool_used += (size_t)n + 1;
	return 0;
}

/* The message of a number out of range; where names the site or record ("" for the rank's own
 * fields). value is printed signed when is_signed. */
static int out_of_range(char *err, size_t errsz, uint32_t rank, const char *where,
			const char *field, uint64_t value, bool is_signed, uint64_t max)
{
	char v[32];
	if (is_signed)
		snprintf(v, sizeof v, "%lld", (long long)value);
	else
		snprintf(v, sizeof v, "%llu", (unsigned long long)value);
	nt_err_set(err, errsz, "rank %u%s: %s %s is out of range (magnitude at most %llu)", rank,
		   where, field, v, (unsigned long long)max);
	return -EINVAL;
}

/* Every time of a decoded rank within MAX_NS, its drift within MAX_DRIFT_PPB. */
static int check_ranges(const struct nt_log_rank *k, char *err, size_t errsz)
{
	char where[48] = "";
#define CHECK_NS(field, v)                                                                        \
	do {                                                                                      \
		if ((v) > MAX_NS)                                                                 \
			return out_of_range(err, errsz, k->rank, where, field, v, false, MAX_NS); \
	} while (0)
	CHECK_NS("wall_ns", k->wall_ns);
	CHECK_NS("mpi_ns", k->mpi_ns);
	CHECK_NS("clock_error_ns", k->clock_error_ns);
	CHECK_NS("clock_test_error_ns", k->clock_test_error_ns);
	CHECK_NS("injected_ns", k->injected_ns);
	CHECK_NS("probe_cost_ns", k->probe_cost_ns);
	if (k->init_global_ns > (int64_t)MAX_NS || k->init_global_ns < -(int64_t)MAX_NS)
		return out_of_range(err, errsz, k->rank, where, "init_global_ns",
				    (uint64_t)k->init_global_ns, true, MAX_NS);
	if (k->drift_ppb > MAX_DRIFT_PPB || k->drift_ppb < -MAX_DRIFT_PPB)
		return out_of_range(err, errsz, k->rank, where, "drift_ppb", (uint64_t)k->drift_ppb,
				    true, MAX_DRIFT_PPB);
	for (uint32_t i = 0; i < k->nsites; i++) {
		const struct nt_log_site *s = &k->sites[i];
		snprintf(where, sizeof where, " site %u", i);
		CHECK_NS("total_ns", s->total_ns);
		CHECK_NS("min_ns", s->min_ns);
		CHECK_NS("max_ns", s->max_ns);
	}
	for (uint64_t i = 0; i < k->nrecords; i++) {
		const struct nt_log_record *x = &k->records[i];
		snprintf(where, sizeof where, " record %llu", (unsigned long long)i);
		CHECK_NS("start_ns", x->start_ns);
		CHECK_NS("duration_ns", x->duration_ns);
		CHECK_NS("phase_ns", x->phase_ns);
		CHECK_NS("interval_ns", x->interval_ns);
		CHECK_NS("p2p_ns", x->p2p_ns);
#define WINDOW_NS_NS(name) CHECK_NS("window " #name "_ns", x->win.name##_ns);
#define WINDOW_NS_CYC(name) WINDOW_NS_NS(name)
#define WINDOW_NS_COUNT(name)
#define WINDOW_FIELD(id, name, kind, source, since, key) WINDOW_NS_##kind(name)
		NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
#undef WINDOW_NS_NS
#undef WINDOW_NS_CYC
#undef WINDOW_NS_COUNT
	}
#undef CHECK_NS
	return 0;
}

/* One record at q (record_bytes(version) of it). */
static void get_record(const unsigned char *q, uint32_t version, struct nt_log_record *x)
{
	x->comm_id = nt_get64(q);
	x->seq = nt_get64(q + 8);
	x->site = nt_get32(q + 16);
	x->flags = nt_get32(q + 20);
	x->start_ns = nt_get64(q + 24);
	x->duration_ns = nt_get64(q + 32);
	x->phase_ns = nt_get64(q + 40);
	q += 48;
	if (version >= 2) {
		x->interval_ns = nt_get64(q);
		x->p2p_ns = nt_get64(q + 8);
		q += 16;
	} else { /* no interval: attribution must not take the 0 for one */
		x->flags &= ~NT_LOG_REC_INTERVAL;
	}
	struct nt_log_window *v = &x->win;
#define WINDOW_FIELD(id, name, kind, source, since, key)                                        \
	if (version >= (since)) {                                                              \
		v->NT_LOG_WINDOW_NAME(kind, name) = nt_get64(q);                                \
		q += 8;                                                                        \
	}
	NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
	v->valid = nt_get32(q);
}

/* The payload of one rank block, up to in->stop. Returns 0, MALFORMED (in->bad), -EINVAL (a
 * record's call site out of range: err says so) or -ENOMEM (in->over when the room is the
 * reason). Its strings are pool offsets. */
static int decode_payload(struct input *in, uint32_t version, struct nt_log_rank *out, char *err,
			  size_t errsz)
{
	int rc = 0;
	if (!charge(in, sizeof *out))
		return -ENOMEM;
	out->flags = r32(in);
	out->nsites = r32(in);
	out->wall_ns = r64(in);
	out->mpi_ns = r64(in);
	out->dropped = r64(in);
	out->init_global_ns = (int64_t)r64(in);
	out->drift_ppb = (int64_t)r64(in);
	out->clock_error_ns = r64(in);
	out->clock_test_error_ns = r64(in);
	out->injected_ns = r64(in);
	out->injected_count = r64(in);
	out->probe_reads = r64(in);
	out->probe_cost_ns = r64(in);
	if (version >= 3) {
		out->untimed_instances = r64(in);
		out->unregistered_persistent = r64(in);
		out->unknown_comm_records = r64(in);
	}
	if ((rc = rstr(in, &out->host)))
		return rc;
	if (!in->bad && out->nsites > left(in) / MIN_SITE_BYTES)
		in->bad = true;
	if (!in->bad && out->nsites) {
		if (!charge(in, (uint64_t)out->nsites * sizeof *out->sites))
			return -ENOMEM;
		out->sites = calloc(out->nsites, sizeof *out->sites);
		if (!out->sites)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < out->nsites && !in->bad; i++) {
		struct nt_log_site *s = &out->sites[i];
		if ((rc = rstr(in, &s->function)) || (rc = rstr(in, &s->module)))
			return rc;
		s->offset = r64(in);
		s->calls = r64(in);
		s->total_ns = r64(in);
		s->min_ns = r64(in);
		s->max_ns = r64(in);
		s->bytes = r64(in);
		for (int k = 0; k < NT_LOG_HIST_BINS; k++)
			s->hist[k] = r64(in);
		s->depth = r32(in);
		if (s->depth > NT_LOG_MAX_DEPTH)
			in->bad = true;
		for (uint32_t k = 0; k < s->depth && !in->bad; k++) {
			if ((rc = rstr(in, &s->frames[k].module)))
				return rc;
			s->frames[k].offset = r64(in);
		}
	}
	out->dropped_records = r64(in);
	out->nrecords = r64(in);
	size_t rec_bytes = record_bytes(version);
	if (!in->bad && out->nrecords > left(in) / rec_bytes)
		in->bad = true;
	if (!in->bad && out->nrecords) {
		if (!charge(in, out->nrecords * (sizeof *out->records +
						 NT_LOG_REPORT_BYTES_PER_RECORD)))
			return -ENOMEM;
		out->records = calloc(out->nrecords, sizeof *out->records);
		if (!out->records)
			return -ENOMEM;
	}
	for (uint64_t i = 0; i < out->nrecords && !in->bad; i++) {
		if (!need(in, rec_bytes)) {
			in->bad = true;
			break;
		}
		struct nt_log_record *x = &out->records[i];
		get_record(in->p + in->pos, version, x);
		in->pos += rec_bytes;
		if (x->site >= out->nsites) {
			nt_err_set(err, errsz, "rank %u record %llu: call site %u is out of range (the "
				   "rank has %u)", out->rank, (unsigned long long)i, x->site,
				   out->nsites);
			return -EINVAL;
		}
	}
	if (version >= 4) {
		if ((rc = rstr(in, &out->command)) || (rc = rstr(in, &out->mpi_library)) ||
		    (rc = rstr(in, &out->tool_version)))
			return rc;
	} else {
		out->command = out->mpi_library = out->tool_version = AS_OFFSET(0);
	}
	if (version >= 6) {
		if ((rc = rstr(in, &out->cpus)))
			return rc;
		out->cpu_ns = r64(in);
		out->run_delay_ns = r64(in);
		out->cpus_busy_ns = r64(in);
		out->cpus_steal_ns = r64(in);
	} else {
		out->cpus = AS_OFFSET(0);
	}
	if (version >= 7)
		decode_others(in, out);
	if (version >= 8) {
		if ((rc = rstr(in, &out->user)) || (rc = rstr(in, &out->batch_system)) ||
		    (rc = rstr(in, &out->batch_job)) || (rc = rstr(in, &out->batch_nodes)))
			return rc;
	} else {
		out->user = out->batch_system = out->batch_job = out->batch_nodes = AS_OFFSET(0);
	}
	if (version >= 9) {
		out->others_from_ns = r64(in);
		out->others_run_delay_ns = r64(in);
	} else { /* read at MPI_Init: the span of the rank's CPU times */
		out->others_from_ns = 0;
		out->others_run_delay_ns = version >= 7 ? out->run_delay_ns : NT_LOG_UNKNOWN;
	}
	if (!in->bad && left(in) != 0)
		in->bad = true;
	return in->bad ? MALFORMED : 0;
}

/* The message of a read that failed (in->io_rc) into err; returns io_rc. */
static int io_failed(const struct input *in, char *err, size_t errsz)
{
	int rc = in->io_rc;
	const char *why = rc == -ENODEV	 ? "not a regular file"
			  : rc == -ENODATA ? "it got shorter while it was read"
					   : strerror(-rc);
	char name[4096];
	if (in->io_file == 0 || file_name(in->files, in->io_file, name, sizeof name) != 0)
		nt_err_set(err, errsz, "cannot read: %s", why);
	else
		nt_err_set(err, errsz, "cannot read %s: %s", name, why);
	return rc;
}

/* The message of memory that ran out at rank (the room, or an allocation that failed), with
 * what the whole log would need at the rate so far. */
static int out_of_memory(const struct input *in, uint32_t rank, char *err, size_t errsz)
{
	char need[32], room[32];
	double share = at(in) > 0 ? (double)in->len / (double)at(in) : 1;
	double est = (double)in->used * (share > 1 ? share : 1);
	nt_fmt_bytes(est < 0x1p64 ? (uint64_t)est : UINT64_MAX, need);
	if (in->over)
		nt_err_set(err, errsz, "cannot read: out of memory at rank %u: with its report the "
			   "log needs about %s, more than the %s this process can take (%s): %s",
			   rank, need, nt_fmt_bytes(in->room->bytes, room), in->room->by,
			   in->room->raise);
	else
		nt_err_set(err, errsz, "cannot read: out of memory at rank %u: with its report the "
			   "log needs about %s", rank, need);
	return -ENOMEM;
}

/* One rank block of a log of the given version (1 to NT_LOG_VERSION); what an older version
 * lacks reads as 0 (doc/ntlog-format.md, "Older versions"). The payload is decoded as it is
 * read and checksummed on the way; whatever is wrong inside it is told only once its checksum
 * is known right (a corrupt block is a checksum mismatch, as when it was checked first). */
static int decode_rank(struct input *in, uint32_t version, struct nt_log_rank *out,
		       uint32_t expect_rank, char *err, size_t errsz)
{
	uint64_t start = at(in);
	if (left(in) < RANK_HEADER_BYTES || !need(in, RANK_HEADER_BYTES) ||
	    memcmp(in->p + in->pos, NT_LOG_RANK_MAGIC, 4) != 0) {
		if (in->io_rc)
			return io_failed(in, err, errsz);
		nt_err_set(err, errsz, "rank block %u at byte %llu: missing or truncated header",
			   expect_rank, (unsigned long long)start);
		return -EINVAL;
	}
	const unsigned char *h = in->p + in->pos;
	uint32_t rank = nt_get32(h + 4);
	uint64_t plen = nt_get64(h + 8);
	uint32_t crc = nt_get32(h + 16);
	uint32_t reserved = nt_get32(h + 20);
	in->pos += RANK_HEADER_BYTES;
	if (reserved != 0) {
		nt_err_set(err, errsz, "rank block at byte %llu: corrupt header",
			   (unsigned long long)start);
		return -EINVAL;
	}
	if (rank != expect_rank) {
		nt_err_set(err, errsz, "rank block at byte %llu is rank %u, expected %u",
			   (unsigned long long)start, rank, expect_rank);
		return -EINVAL;
	}
	if (plen > left(in)) {
		nt_err_set(err, errsz, "rank %u: block of %llu bytes runs past the end of the file "
				       "(truncated?)",
			   rank, (unsigned long long)plen);
		return -EINVAL;
	}
	out->rank = rank;
	in->stop = at(in) + plen;
	in->in_block = true;
	in->crc = 0;
	in->crc_at = at(in);
	in->bad = false;
	int rc = decode_payload(in, version, out, err, errsz);
	skip(in, left(in));
	crc_flush(in);
	in->in_block = false;
	in->stop = in->len;
	if (in->io_rc)
		return io_failed(in, err, errsz);
	if (in->crc != crc) {
		nt_err_set(err, errsz, "rank %u: checksum mismatch (corrupt block at byte %llu)", rank,
			   (unsigned long long)start);
		return -EINVAL;
	}
	if (rc == -ENOMEM)
		return out_of_memory(in, rank, err, errsz);
	if (rc == MALFORMED) {
		if (version == NT_LOG_VERSION)
			nt_err_set(err, errsz, "rank %u: malformed block contents", rank);
		else if (version == 1) /* doc/ntlog-format.md, "Older versions" */
			nt_err_set(err, errsz, "rank %u: malformed block contents (read as version 1; a "
				   "development build before the probe windows also wrote version 1, "
				   "and its logs cannot be read)", rank);
		else
			nt_err_set(err, errsz, "rank %u: malformed block contents (read as version %u)",
				   rank, version);
		return -EINVAL;
	}
	if (rc)
		return rc;
	return check_ranges(out, err, errsz);
}

static const char *fix(const char *pool, const char *offset)
{
	return pool + (uintptr_t)offset;
}

/* Every string of the log from its offset in the pool to a pointer into it. */
static void fix_strings(struct nt_log *log, const char *pool)
{
	for (uint32_t r = 0; r < log->nranks; r++) {
		struct nt_log_rank *k = &log->ranks[r];
		k->host = fix(pool, k->host);
		k->command = fix(pool, k->command);
		k->mpi_library = fix(pool, k->mpi_library);
		k->tool_version = fix(pool, k->tool_version);
		k->cpus = fix(pool, k->cpus);
		k->user = fix(pool, k->user);
		k->batch_system = fix(pool, k->batch_system);
		k->batch_job = fix(pool, k->batch_job);
		k->batch_nodes = fix(pool, k->batch_nodes);
		for (uint32_t i = 0; i < k->nsites; i++) {
			struct nt_log_site *s = &k->sites[i];
			s->function = fix(pool, s->function);
			s->module = fix(pool, s->module);
			for (uint32_t d = 0; d < s->depth; d++)
				s->frames[d].module = fix(pool, s->frames[d].module);
		}
	}
}

/* A whole log from in: the file header, every rank block, nothing after. */
static int decode(struct input *in, struct nt_log *log, char *err, size_t errsz)
{
	uint64_t len = in->len;
	nt_err_set(err, errsz, "ok");
	if (len == 0) {
		nt_err_set(err, errsz, "empty file");
		return -EINVAL;
	}
	size_t m = len < 8 ? (size_t)len : 8;
	if (!need(in, m))
		return io_failed(in, err, errsz);
	if (memcmp(in->p + in->pos, NT_LOG_FILE_MAGIC, m) != 0) {
		nt_err_set(err, errsz, "not a noisetool log (bad magic)");
		return -EINVAL;
	}
	if (len < NT_LOG_HEADER_BYTES) {
		nt_err_set(err, errsz, "truncated: %llu bytes, less than the %d-byte header",
			   (unsigned long long)len, NT_LOG_HEADER_BYTES);
		return -EINVAL;
	}
	if (!need(in, NT_LOG_HEADER_BYTES))
		return io_failed(in, err, errsz);
	const unsigned char *h = in->p + in->pos;
	if (nt_get32(h + 60) != nt_crc32(0, h, 60)) {
		nt_err_set(err, errsz, "header checksum mismatch (corrupt header)");
		return -EINVAL;
	}
	log->version = nt_get32(h + 8);
	if (log->version > NT_LOG_VERSION) {
		nt_err_set(err, errsz, "written by a newer noisetool (log version %u); this one reads "
			   "versions 1 to %u: report it with the noisetool that wrote it, or a newer "
			   "one", log->version, NT_LOG_VERSION);
		return -ENOTSUP;
	}
	if (log->version < 1) {
		nt_err_set(err, errsz, "log version %u is unknown: no noisetool writes it (this one "
			   "reads versions 1 to %u)", log->version, NT_LOG_VERSION);
		return -ENOTSUP;
	}
	if (nt_get32(h + 12) != NT_LOG_HEADER_BYTES) {
		nt_err_set(err, errsz, "unexpected header size %u", nt_get32(h + 12));
		return -EINVAL;
	}
	log->nranks = nt_get32(h + 16);
	log->flags = nt_get32(h + 20);
	log->level = nt_get32(h + 24);
	log->wait_mode = nt_get32(h + 28);
	uint64_t hz_bits = nt_get64(h + 32);
	memcpy(&log->clock_hz, &hz_bits, 8);
	log->created_unix_ns = nt_get64(h + 40);
	log->poll_sample = log->version >= 6 ? nt_get32(h + 48) : 0;
	in->pos += NT_LOG_HEADER_BYTES;
	if (log->level > 2) {
		nt_err_set(err, errsz, "header: probe level %u is out of range (0 to 2)", log->level);
		return -EINVAL;
	}
	if (log->wait_mode >= NT_LOG_WAIT_COUNT) {
		nt_err_set(err, errsz, "header: wait mode %u is out of range (0 to %u)",
			   log->wait_mode, NT_LOG_WAIT_COUNT - 1);
		return -EINVAL;
	}
	if (log->version >= 6 && (log->poll_sample < 1 || log->poll_sample > NT_LOG_POLL_SAMPLE_MAX)) {
		nt_err_set(err, errsz, "header: test-call sampling 1 in %u is out of range (1 to %u)",
			   log->poll_sample, NT_LOG_POLL_SAMPLE_MAX);
		return -EINVAL;
	}
	if (!(log->clock_hz > 0) || !(log->clock_hz < 1e12)) {
		nt_err_set(err, errsz, "header: counter frequency %g Hz is out of range (above 0, "
			   "below 1e12)", log->clock_hz);
		return -EINVAL;
	}
	if (log->nranks == 0 || log->nranks > (len - NT_LOG_HEADER_BYTES) / RANK_HEADER_BYTES) {
		nt_err_set(err, errsz, "header claims %u ranks, which the file size cannot hold "
				       "(truncated?)",
			   log->nranks);
		return -EINVAL;
	}
	/* The ranks' array is touched (and counted) one rank at a time as they are decoded. */
	log->ranks = calloc(log->nranks, sizeof *log->ranks);
	in->pool_cap = 65536;
	in->pool = malloc(in->pool_cap);
	if (!log->ranks || !in->pool || !charge(in, in->pool_cap))
		return out_of_memory(in, 0, err, errsz);
	in->pool[0] = '\0';
	in->pool_used = 1;
	log->storage_ = in->pool; /* freed with the log from here on */
	for (uint32_t i = 0; i < log->nranks; i++) {
		int rc = decode_rank(in, log->version, &log->ranks[i], i, err, errsz);
		log->storage_ = in->pool; /* it may have moved */
		if (rc)
			return rc;
		log->flags |= log->ranks[i].flags;
	}
	if (at(in) != len) {
		nt_err_set(err, errsz, "%llu unexpected bytes after the last rank block",
			   (unsigned long long)(len - at(in)));
		return -EINVAL;
	}
	fix_strings(log, in->pool);
	return 0;
}

int nt_log_decode(const unsigned char *buf, size_t len, struct nt_log *log, char *err,
		  size_t errsz)
{
	if ((!buf && len) || !log)
		return -EINVAL;
	memset(log, 0, sizeof *log);
	struct input in = { .p = buf, .end = len, .len = len, .stop = len };
	int rc = decode(&in, log, err, errsz);
	if (rc) {
		log->storage_ = in.pool;
		nt_log_free(log);
	}
	return rc;
}

/* The message of a file that cannot be read as a log's input. */
static const char *read_error(int rc)
{
	return rc == -ENODEV ? "not a regular file" : strerror(-rc);
}

/* The files of the log at path, checked: the log, open (f->fd) and its size; for a per-rank
 * log (the header alone), its header in the window and each part's size (its parts are
 * opened when read). */
static int check_files(struct input *in, struct files *f, char *err, size_t errsz)
{
	f->bytes = malloc(sizeof *f->bytes);
	if (!f->bytes)
		return -ENOMEM;
	f->n = 1;
	int rc = open_input(f->path, &f->fd, &f->bytes[0]);
	if (rc) {
		nt_err_set(err, errsz, "cannot read: %s", read_error(rc));
		return rc;
	}
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	f->cur_left = f->bytes[0];
	in->len = f->bytes[0];
	if (in->len != NT_LOG_HEADER_BYTES)
		return 0;
	in->stop = in->len;
	if (!need(in, NT_LOG_HEADER_BYTES))
		return io_failed(in, err, errsz);
	/* A header alone: the per-rank fallback, whose blocks are in PATH.part0 ... */
	const unsigned char *h = in->p;
	if (memcmp(h, NT_LOG_FILE_MAGIC, 8) != 0 || nt_get32(h + 60) != nt_crc32(0, h, 60))
		return 0;
	uint32_t nranks = nt_get32(h + 16);
	for (uint32_t r = 0, cap = 1; r < nranks; r++) {
		if (f->n == cap) { /* grown as parts are found: the header's count is a claim */
			cap = cap < UINT32_MAX / 2 ? 2 * cap : UINT32_MAX;
			uint64_t *bytes = realloc(f->bytes, (size_t)cap * sizeof *bytes);
			if (!bytes)
				return -ENOMEM;
			f->bytes = bytes;
		}
		char part[4096];
		int fd = -1;
		uint64_t size = 0;
		rc = file_name(f, r + 1, part, sizeof part);
		if (rc == 0)
			rc = open_input(part, &fd, &size);
		if (rc) {
			nt_err_set(err, errsz, "the header alone (truncated, or a per-rank log "
				   "without its parts): cannot read %s: %s", part, read_error(rc));
			return rc;
		}
		close(fd);
		f->bytes[f->n++] = size;
		in->len += size;
	}
	return 0;
}

int nt_log_read_file_with(const char *path, size_t chunk_bytes, const struct nt_mem_headroom *room,
			  struct nt_log *log, char *err, size_t errsz)
{
	if (!path || !log || chunk_bytes < NT_LOG_READ_MIN_CHUNK_BYTES)
		return -EINVAL;
	memset(log, 0, sizeof *log);
	struct files f = { .path = path, .fd = -1 };
	struct input in = { .files = &f, .cap = chunk_bytes, .room = room };
	in.buf = malloc(chunk_bytes);
	if (!in.buf) {
		nt_err_set(err, errsz, "cannot read: out of memory for a %zu-byte buffer", chunk_bytes);
		return -ENOMEM;
	}
	in.p = in.buf;
	int rc = check_files(&in, &f, err, errsz);
	if (rc == -ENOMEM)
		nt_err_set(err, errsz, "cannot read: out of memory");
	/* The decoded log is about as large as the file (a record: 140 bytes in the file, 144 in
	 * memory), and the report needs more: a file larger than the room cannot be read. */
	if (rc == 0 && room && in.len > room->bytes) {
		char size[32], r[32];
		nt_err_set(err, errsz, "cannot read: the log is %s, more than the %s of memory this "
			   "process can take (%s), and reading it takes more than its size: %s",
			   nt_fmt_bytes(in.len, size), nt_fmt_bytes(room->bytes, r), room->by,
			   room->raise);
		rc = -ENOMEM;
	}
	if (rc == 0) {
		in.stop = in.len;
		rc = decode(&in, log, err, errsz);
	}
	if (f.fd >= 0)
		close(f.fd);
	free(f.bytes);
	free(in.buf);
	if (rc) {
		log->storage_ = in.pool;
		nt_log_free(log);
	}
	return rc;
}

int nt_log_read_file(const char *path, struct nt_log *log, char *err, size_t errsz)
{
	struct nt_mem_headroom room;
	nt_mem_headroom(&room);
	return nt_log_read_file_with(path, NT_LOG_READ_CHUNK_BYTES, &room, log, err, errsz);
}

void nt_log_free(struct nt_log *log)
{
	if (!log)
		return;
	for (uint32_t i = 0; log->ranks && i < log->nranks; i++) {
		free(log->ranks[i].sites);
		free(log->ranks[i].records);
	}
	free(log->ranks);
	free(log->storage_);
	memset(log, 0, sizeof *log);
}
