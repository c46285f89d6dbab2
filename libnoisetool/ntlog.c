/* The .ntlog job log: encoding of rank blocks and a reader that validates everything. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool/ntlog.h>

#include "util.h"

static const unsigned char file_magic[8] = { 'N', 'T', 'L', 'O', 'G', '\r', '\n', 0x1a };
static const unsigned char rank_magic[4] = { 'N', 'T', 'R', 'K' };
enum { RANK_HEADER_BYTES = NT_LOG_RANK_HEADER_BYTES, MAX_FILE_BYTES = 1u << 30 };

uint32_t nt_crc32(uint32_t crc, const void *data, size_t len)
{
	static uint32_t table[256];
	if (!table[1]) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	}
	const unsigned char *p = data;
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* Little-endian stores and loads, whatever the host. */
static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

void nt_log_header(unsigned char out[NT_LOG_HEADER_BYTES], uint32_t nranks, uint32_t flags,
		   uint32_t level, double clock_hz, uint64_t created_unix_ns)
{
	memset(out, 0, NT_LOG_HEADER_BYTES);
	memcpy(out, file_magic, 8);
	put32(out + 8, NT_LOG_VERSION);
	put32(out + 12, NT_LOG_HEADER_BYTES);
	put32(out + 16, nranks);
	put32(out + 20, flags);
	put32(out + 24, level);
	uint64_t hz_bits;
	memcpy(&hz_bits, &clock_hz, 8);
	put64(out + 32, hz_bits);
	put64(out + 40, created_unix_ns);
	put32(out + 60, nt_crc32(0, out, 60));
}

/* ---- encoding ---- */

/* A rank block on its way out: bytes gather in chunk, and each full chunk is checksummed (its
 * payload part) and handed to sink. The first pass has no sink: it only counts and checksums. */
struct wbuf {
	unsigned char *chunk;
	size_t size, used;
	nt_log_sink_fn sink; /* NULL: the first pass */
	void *ctx;
	uint64_t bytes;      /* put so far, the block's header included */
	uint64_t limit;      /* never more than this */
	size_t header_left;  /* block header bytes not yet flushed (not in the payload's CRC) */
	uint32_t crc;        /* of the payload flushed so far */
	int rc;              /* the first error: nothing more goes out */
};

static void flush(struct wbuf *w)
{
	if (w->rc == 0 && w->used) {
		size_t skip = w->header_left < w->used ? w->header_left : w->used;
		w->header_left -= skip;
		w->crc = nt_crc32(w->crc, w->chunk + skip, w->used - skip);
		if (w->sink)
			w->rc = w->sink(w->ctx, w->chunk, w->used);
	}
	w->used = 0;
}

static void put(struct wbuf *w, const void *data, size_t n)
{
	if (w->rc)
		return;
	if (n > w->limit - w->bytes) {
		w->rc = -EIO; /* more than the first pass measured */
		return;
	}
	w->bytes += n;
	for (const unsigned char *p = data; n > 0;) {
		size_t k = w->size - w->used < n ? w->size - w->used : n;
		memcpy(w->chunk + w->used, p, k);
		w->used += k;
		p += k;
		n -= k;
		if (w->used == w->size)
			flush(w);
	}
}

static void w32(struct wbuf *w, uint32_t v)
{
	unsigned char b[4];
	put32(b, v);
	put(w, b, 4);
}

static void w64(struct wbuf *w, uint64_t v)
{
	unsigned char b[8];
	put64(b, v);
	put(w, b, 8);
}

static void wstr(struct wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	w32(w, (uint32_t)n);
	put(w, s, n);
}

static void encode_site(struct wbuf *w, const struct nt_log_site *s)
{
	wstr(w, s->function);
	wstr(w, s->module);
	w64(w, s->offset);
	w64(w, s->calls);
	w64(w, s->total_ns);
	w64(w, s->min_ns);
	w64(w, s->max_ns);
	w64(w, s->bytes);
	for (int b = 0; b < NT_LOG_HIST_BINS; b++)
		w64(w, s->hist[b]);
	uint32_t depth = s->depth < NT_LOG_MAX_DEPTH ? s->depth : NT_LOG_MAX_DEPTH;
	w32(w, depth);
	for (uint32_t k = 0; k < depth; k++) {
		wstr(w, s->frames[k].module);
		w64(w, s->frames[k].offset);
	}
}

static void encode_record(struct wbuf *w, const struct nt_log_record *x)
{
	w64(w, x->comm_id);
	w64(w, x->seq);
	w32(w, x->site);
	w32(w, x->flags);
	w64(w, x->start_ns);
	w64(w, x->duration_ns);
	w64(w, x->phase_ns);
	w64(w, x->interval_ns);
	w64(w, x->p2p_ns);
	const struct nt_log_window *v = &x->win;
	w64(w, v->wall_ns);
	w64(w, v->cpu_ns);
	w64(w, v->run_delay_ns);
	w64(w, v->vol_switches);
	w64(w, v->invol_switches);
	w64(w, v->minor_faults);
	w64(w, v->major_faults);
	w64(w, v->instructions);
	w64(w, v->injected_ns);
	w32(w, v->valid);
}

/* The payload of version NT_LOG_VERSION (doc/ntlog-format.md). */
static void encode_payload(struct wbuf *w, const struct nt_log_source *src)
{
	const struct nt_log_rank *r = src->rank;
	w32(w, r->flags);
	w32(w, r->nsites);
	w64(w, r->wall_ns);
	w64(w, r->mpi_ns);
	w64(w, r->dropped);
	w64(w, (uint64_t)r->init_global_ns);
	w64(w, (uint64_t)r->drift_ppb);
	w64(w, r->clock_error_ns);
	w64(w, r->clock_test_error_ns);
	w64(w, r->injected_ns);
	w64(w, r->injected_count);
	w64(w, r->probe_reads);
	w64(w, r->probe_cost_ns);
	w64(w, r->untimed_instances);
	w64(w, r->unregistered_persistent);
	w64(w, r->unknown_comm_records);
	wstr(w, r->host);
	for (uint32_t i = 0; i < r->nsites && w->rc == 0; i++) {
		if (!src->site) {
			encode_site(w, &r->sites[i]);
			continue;
		}
		struct nt_log_site s;
		memset(&s, 0, sizeof s);
		w->rc = src->site(src->site_ctx, i, &s);
		if (w->rc == 0)
			encode_site(w, &s);
	}
	w64(w, r->dropped_records);
	w64(w, r->nrecords);
	for (uint64_t i = 0; i < r->nrecords && w->rc == 0; i++)
		encode_record(w, &r->records[i]);
	wstr(w, r->command); /* version 4: the job's identity */
	wstr(w, r->mpi_library);
	wstr(w, r->tool_version);
}

static bool source_valid(const struct nt_log_source *src)
{
	const struct nt_log_rank *r = src ? src->rank : NULL;
	return r && (src->site || !r->nsites || r->sites) && (!r->nrecords || r->records);
}

int nt_log_rank_measure(const struct nt_log_source *src, struct nt_log_block *block)
{
	if (!source_valid(src) || !block)
		return -EINVAL;
	unsigned char scratch[4096];
	struct wbuf w = { .chunk = scratch, .size = sizeof scratch, .limit = UINT64_MAX };
	encode_payload(&w, src);
	flush(&w);
	if (w.rc)
		return w.rc;
	block->bytes = RANK_HEADER_BYTES + w.bytes;
	block->payload_crc = w.crc;
	return 0;
}

int nt_log_rank_stream(const struct nt_log_source *src, const struct nt_log_block *block,
		       unsigned char *chunk, size_t chunk_bytes, nt_log_sink_fn sink, void *sink_ctx)
{
	if (!source_valid(src) || !block || block->bytes < RANK_HEADER_BYTES || !chunk ||
	    !chunk_bytes || !sink)
		return -EINVAL;
	struct wbuf w = { .chunk = chunk, .size = chunk_bytes, .sink = sink, .ctx = sink_ctx,
			  .limit = block->bytes, .header_left = RANK_HEADER_BYTES };
	unsigned char header[RANK_HEADER_BYTES];
	memcpy(header, rank_magic, 4);
	put32(header + 4, src->rank->rank);
	put64(header + 8, block->bytes - RANK_HEADER_BYTES);
	put32(header + 16, block->payload_crc);
	put32(header + 20, 0);
	put(&w, header, sizeof header);
	encode_payload(&w, src);
	flush(&w);
	if (w.rc)
		return w.rc;
	return w.bytes == block->bytes && w.crc == block->payload_crc ? 0 : -EIO;
}

/* The sink of a chunk that is the whole block: nothing left to do. */
static int keep_in_place(void *ctx, const unsigned char *bytes, size_t len)
{
	(void)ctx, (void)bytes, (void)len;
	return 0;
}

int nt_log_rank_encode(const struct nt_log_rank *r, unsigned char **out, size_t *len)
{
	if (!out || !len)
		return -EINVAL;
	struct nt_log_source src = { .rank = r };
	struct nt_log_block block;
	int rc = nt_log_rank_measure(&src, &block);
	if (rc)
		return rc;
	if (block.bytes > SIZE_MAX)
		return -ENOMEM;
	unsigned char *buf = malloc((size_t)block.bytes);
	if (!buf)
		return -ENOMEM;
	rc = nt_log_rank_stream(&src, &block, buf, (size_t)block.bytes, keep_in_place, NULL);
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*len = (size_t)block.bytes;
	return 0;
}

/* ---- decoding ---- */

struct rbuf {
	const unsigned char *p;
	size_t len, pos;
	char *pool; /* NUL-terminated copies of the strings */
	size_t pool_used, pool_size;
	bool bad;
};

static uint32_t r32(struct rbuf *r)
{
	if (r->bad || r->len - r->pos < 4) {
		r->bad = true;
		return 0;
	}
	uint32_t v = get32(r->p + r->pos);
	r->pos += 4;
	return v;
}

static uint64_t r64(struct rbuf *r)
{
	if (r->bad || r->len - r->pos < 8) {
		r->bad = true;
		return 0;
	}
	uint64_t v = get64(r->p + r->pos);
	r->pos += 8;
	return v;
}

static const char *rstr(struct rbuf *r)
{
	uint32_t n = r32(r);
	if (r->bad || r->len - r->pos < n || r->pool_size - r->pool_used < (size_t)n + 1) {
		r->bad = true;
		return "";
	}
	char *s = r->pool + r->pool_used;
	memcpy(s, r->p + r->pos, n);
	s[n] = '\0';
	if (memchr(s, '\0', n)) { /* no embedded NULs */
		r->bad = true;
		return "";
	}
	r->pool_used += (size_t)n + 1;
	r->pos += n;
	return s;
}

/* Smallest encoding of one site: two empty strings and the fixed fields. A record: 140 bytes
 * since version 2, which added the interval and its point-to-point time. */
enum { MIN_SITE_BYTES = 4 + 4 + 8 * 6 + 8 * NT_LOG_HIST_BINS + 4, RECORD_V1_BYTES = 48 + 9 * 8 + 4,
       RECORD_BYTES = RECORD_V1_BYTES + 2 * 8 };

/* The ranges a reader accepts (doc/ntlog-format.md, "Ranges"): times and their sums stay far
 * from overflowing the report's arithmetic (2^56 ns is 2.28 years), and global time runs
 * forward at most 11 times as fast as a rank's clock and backward at most 9 times. */
#define MAX_NS (1ull << 56)
#define MAX_DRIFT_PPB 10000000000ll

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
		CHECK_NS("window wall_ns", x->win.wall_ns);
		CHECK_NS("window cpu_ns", x->win.cpu_ns);
		CHECK_NS("window run_delay_ns", x->win.run_delay_ns);
		CHECK_NS("window injected_ns", x->win.injected_ns);
	}
#undef CHECK_NS
	return 0;
}

/* One rank block of a log of the given version (1 to NT_LOG_VERSION); what an older version
 * lacks reads as 0 (doc/ntlog-format.md, "Older versions"). */
static int decode_rank(struct rbuf *r, uint32_t version, struct nt_log_rank *out,
		       uint32_t expect_rank, char *err, size_t errsz)
{
	size_t start = r->pos;
	if (r->len - r->pos < RANK_HEADER_BYTES || memcmp(r->p + r->pos, rank_magic, 4) != 0) {
		nt_err_set(err, errsz, "rank block %u at byte %zu: missing or truncated header",
			expect_rank, start);
		return -EINVAL;
	}
	uint32_t rank = get32(r->p + r->pos + 4);
	uint64_t plen = get64(r->p + r->pos + 8);
	uint32_t crc = get32(r->p + r->pos + 16);
	uint32_t reserved = get32(r->p + r->pos + 20);
	r->pos += RANK_HEADER_BYTES;
	if (reserved != 0) {
		nt_err_set(err, errsz, "rank block at byte %zu: corrupt header", start);
		return -EINVAL;
	}
	if (rank != expect_rank) {
		nt_err_set(err, errsz, "rank block at byte %zu is rank %u, expected %u", start, rank,
			expect_rank);
		return -EINVAL;
	}
	if (plen > r->len - r->pos) {
		nt_err_set(err, errsz, "rank %u: block of %llu bytes runs past the end of the file "
				    "(truncated?)",
			rank, (unsigned long long)plen);
		return -EINVAL;
	}
	if (nt_crc32(0, r->p + r->pos, plen) != crc) {
		nt_err_set(err, errsz, "rank %u: checksum mismatch (corrupt block at byte %zu)", rank,
			start);
		return -EINVAL;
	}
	struct rbuf b = { r->p + r->pos, (size_t)plen, 0, r->pool, r->pool_used, r->pool_size,
			  false };
	out->rank = rank;
	out->flags = r32(&b);
	out->nsites = r32(&b);
	out->wall_ns = r64(&b);
	out->mpi_ns = r64(&b);
	out->dropped = r64(&b);
	out->init_global_ns = (int64_t)r64(&b);
	out->drift_ppb = (int64_t)r64(&b);
	out->clock_error_ns = r64(&b);
	out->clock_test_error_ns = r64(&b);
	out->injected_ns = r64(&b);
	out->injected_count = r64(&b);
	out->probe_reads = r64(&b);
	out->probe_cost_ns = r64(&b);
	if (version >= 3) {
		out->untimed_instances = r64(&b);
		out->unregistered_persistent = r64(&b);
		out->unknown_comm_records = r64(&b);
	}
	out->host = rstr(&b);
	if (!b.bad && out->nsites > (b.len - b.pos) / MIN_SITE_BYTES)
		b.bad = true;
	if (!b.bad && out->nsites) {
		out->sites = calloc(out->nsites, sizeof *out->sites);
		if (!out->sites)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < out->nsites && !b.bad; i++) {
		struct nt_log_site *s = &out->sites[i];
		s->function = rstr(&b);
		s->module = rstr(&b);
		s->offset = r64(&b);
		s->calls = r64(&b);
		s->total_ns = r64(&b);
		s->min_ns = r64(&b);
		s->max_ns = r64(&b);
		s->bytes = r64(&b);
		for (int k = 0; k < NT_LOG_HIST_BINS; k++)
			s->hist[k] = r64(&b);
		s->depth = r32(&b);
		if (s->depth > NT_LOG_MAX_DEPTH)
			b.bad = true;
		for (uint32_t k = 0; k < s->depth && !b.bad; k++) {
			s->frames[k].module = rstr(&b);
			s->frames[k].offset = r64(&b);
		}
	}
	out->dropped_records = r64(&b);
	out->nrecords = r64(&b);
	size_t record_bytes = version >= 2 ? RECORD_BYTES : RECORD_V1_BYTES;
	if (!b.bad && out->nrecords > (b.len - b.pos) / record_bytes)
		b.bad = true;
	if (!b.bad && out->nrecords) {
		out->records = calloc(out->nrecords, sizeof *out->records);
		if (!out->records)
			return -ENOMEM;
	}
	for (uint64_t i = 0; i < out->nrecords && !b.bad; i++) {
		struct nt_log_record *x = &out->records[i];
		x->comm_id = r64(&b);
		x->seq = r64(&b);
		x->site = r32(&b);
		x->flags = r32(&b);
		x->start_ns = r64(&b);
		x->duration_ns = r64(&b);
		x->phase_ns = r64(&b);
		if (version >= 2) {
			x->interval_ns = r64(&b);
			x->p2p_ns = r64(&b);
		}
		struct nt_log_window *v = &x->win;
		v->wall_ns = r64(&b);
		v->cpu_ns = r64(&b);
		v->run_delay_ns = r64(&b);
		v->vol_switches = r64(&b);
		v->invol_switches = r64(&b);
		v->minor_faults = r64(&b);
		v->major_faults = r64(&b);
		v->instructions = r64(&b);
		v->injected_ns = r64(&b);
		v->valid = r32(&b);
		if (version < 2) /* no interval: attribution must not take the 0 for one */
			x->flags &= ~NT_LOG_REC_INTERVAL;
		if (!b.bad && x->site >= out->nsites) {
			nt_err_set(err, errsz, "rank %u record %llu: call site %u is out of range (the "
				   "rank has %u)", rank, (unsigned long long)i, x->site, out->nsites);
			return -EINVAL;
		}
	}
	if (version >= 4) {
		out->command = rstr(&b);
		out->mpi_library = rstr(&b);
		out->tool_version = rstr(&b);
	} else {
		out->command = out->mpi_library = out->tool_version = "";
	}
	if (!b.bad && b.pos != b.len)
		b.bad = true;
	r->pool_used = b.pool_used;
	if (b.bad) {
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
	int rc = check_ranges(out, err, errsz);
	if (rc)
		return rc;
	r->pos += plen;
	return 0;
}

int nt_log_decode(const unsigned char *buf, size_t len, struct nt_log *log, char *err,
		  size_t errsz)
{
	if ((!buf && len) || !log)
		return -EINVAL;
	memset(log, 0, sizeof *log);
	nt_err_set(err, errsz, "ok");
	if (len == 0) {
		nt_err_set(err, errsz, "empty file");
		return -EINVAL;
	}
	if (memcmp(buf, file_magic, len < 8 ? len : 8) != 0) {
		nt_err_set(err, errsz, "not a noisetool log (bad magic)");
		return -EINVAL;
	}
	if (len < NT_LOG_HEADER_BYTES) {
		nt_err_set(err, errsz, "truncated: %zu bytes, less than the %d-byte header", len,
			   NT_LOG_HEADER_BYTES);
		return -EINVAL;
	}
	if (get32(buf + 60) != nt_crc32(0, buf, 60)) {
		nt_err_set(err, errsz, "header checksum mismatch (corrupt header)");
		return -EINVAL;
	}
	log->version = get32(buf + 8);
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
	if (get32(buf + 12) != NT_LOG_HEADER_BYTES) {
		nt_err_set(err, errsz, "unexpected header size %u", get32(buf + 12));
		return -EINVAL;
	}
	log->nranks = get32(buf + 16);
	log->flags = get32(buf + 20);
	log->level = get32(buf + 24);
	uint64_t hz_bits = get64(buf + 32);
	memcpy(&log->clock_hz, &hz_bits, 8);
	log->created_unix_ns = get64(buf + 40);
	if (log->level > 2) {
		nt_err_set(err, errsz, "header: probe level %u is out of range (0 to 2)", log->level);
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
	log->storage_ = malloc(len);
	log->ranks = calloc(log->nranks, sizeof *log->ranks);
	if (!log->storage_ || !log->ranks) {
		nt_log_free(log);
		return -ENOMEM;
	}
	struct rbuf r = { buf, len, NT_LOG_HEADER_BYTES, log->storage_, 0, len, false };
	for (uint32_t i = 0; i < log->nranks; i++) {
		int rc = decode_rank(&r, log->version, &log->ranks[i], i, err, errsz);
		if (rc) {
			nt_log_free(log);
			return rc;
		}
		log->flags |= log->ranks[i].flags;
	}
	if (r.pos != len) {
		nt_err_set(err, errsz, "%zu unexpected bytes after the last rank block", len - r.pos);
		nt_log_free(log);
		return -EINVAL;
	}
	return 0;
}

/* Append a whole file to *buf (realloc'd). 0 or -errno: -EISDIR a directory, -ENODEV not a
 * regular file (FIFO, socket, device: opened without blocking and never read), -EFBIG over
 * MAX_FILE_BYTES. */
static int append_file(const char *path, unsigned char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = fstat(fd, &st) != 0			       ? -errno
		 : S_ISDIR(st.st_mode)			       ? -EISDIR
		 : !S_ISREG(st.st_mode)			       ? -ENODEV
		 : (uint64_t)st.st_size + *len > MAX_FILE_BYTES ? -EFBIG
								: 0;
	if (rc) {
		close(fd);
		return rc;
	}
	size_t add = (size_t)st.st_size;
	unsigned char *nb = realloc(*buf, *len + add + 1);
	if (!nb) {
		close(fd);
		return -ENOMEM;
	}
	*buf = nb;
	for (size_t got = 0; got < add;) {
		ssize_t n = read(fd, *buf + *len + got, add - got);
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			return -e;
		}
		got += (size_t)n;
	}
	close(fd);
	*len += add;
	return 0;
}

static const char *read_error(int rc)
{
	return rc == -ENODEV ? "not a regular file"
	       : rc == -EFBIG ? "larger than 1 GiB"
			      : strerror(-rc);
}

int nt_log_read_file(const char *path, struct nt_log *log, char *err, size_t errsz)
{
	if (!path || !log)
		return -EINVAL;
	memset(log, 0, sizeof *log);
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc = append_file(path, &buf, &len);
	if (rc) {
		nt_err_set(err, errsz, "cannot read: %s", read_error(rc));
		free(buf);
		return rc;
	}
	/* A header alone: the per-rank fallback, whose blocks are in PATH.part0 ... */
	if (len == NT_LOG_HEADER_BYTES && memcmp(buf, file_magic, 8) == 0 &&
	    get32(buf + 60) == nt_crc32(0, buf, 60)) {
		uint32_t nranks = get32(buf + 16);
		for (uint32_t r = 0; r < nranks; r++) {
			char part[4096];
			if ((size_t)snprintf(part, sizeof part, "%s.part%u", path, r) >= sizeof part)
				rc = -ENAMETOOLONG; /* never a truncated name: another file */
			else
				rc = append_file(part, &buf, &len);
			if (rc) {
				nt_err_set(err, errsz, "the header alone (truncated, or a per-rank log "
					   "without its parts): cannot read %s: %s", part,
					   read_error(rc));
				free(buf);
				return rc;
			}
		}
	}
	rc = nt_log_decode(buf, len, log, err, errsz);
	free(buf);
	return rc;
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

/* The parts of a Python site's module: "python:FUNCTION:CALL:FILE", or "python:FUNCTION:FILE"
 * from builds before call names (its FILE starts with '/' or '<', which a CALL never does). */
static bool python_parts(const char *module, const char **function, size_t *function_len,
			 const char **call, size_t *call_len, const char **file)
{
	size_t n = strlen(NT_LOG_PYTHON_PREFIX);
	if (!module || strncmp(module, NT_LOG_PYTHON_PREFIX, n) != 0)
		return false;
	const char *fn = module + n, *colon = strchr(fn, ':');
	if (!colon)
		return false;
	const char *rest = colon + 1, *end = strchr(rest, ':');
	*function = fn;
	*function_len = (size_t)(colon - fn);
	*call = rest;
	*call_len = 0;
	*file = rest;
	if (*rest != '/' && *rest != '<' && end) {
		*call_len = (size_t)(end - rest);
		*file = end + 1;
	}
	return **file != '\0';
}

bool nt_log_python_site(const char *module, const char **function, size_t *function_len,
			const char **file)
{
	const char *fn, *call, *f;
	size_t fn_len, call_len;
	if (!python_parts(module, &fn, &fn_len, &call, &call_len, &f))
		return false;
	if (function)
		*function = fn;
	if (function_len)
		*function_len = fn_len;
	if (file)
		*file = f;
	return true;
}

bool nt_log_python_call(const char *module, const char **call, size_t *call_len)
{
	const char *fn, *c, *f;
	size_t fn_len, c_len;
	if (!python_parts(module, &fn, &fn_len, &c, &c_len, &f))
		return false;
	if (call)
		*call = c;
	if (call_len)
		*call_len = c_len;
	return true;
}
