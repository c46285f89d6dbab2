/* libFuzzer harness for the job log reader: every input is decoded as a .ntlog file, and what
 * decodes goes through everything `noisetool report` computes from it (the merged call sites,
 * the attribution, the text, late-instance and JSON writers), then again with its numbers
 * taken from the input without the reader's range checks. An input refused for a checksum is
 * decoded again with its checksums made right, so that mutations reach past them into the
 * fields. fuzz/README.md says how to run it. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/ntlog.h>
#include <noisetool/report.h>

#include "json-read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise of the reader: said, then a crash for libFuzzer to keep the input. */
static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz-ntlog: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* A symbolizer that names every site from its module and offset alone, as addr2line would for
 * a module without debug information: the report's location code runs, no process starts. */
static int fake_symbolize(void *ctx, const char *module, uint64_t offset, char *out, size_t size)
{
	(void)ctx;
	if (offset & 1)
		return -1; /* the report's own module+offset fallback */
	snprintf(out, size, "%.40s:%llu", module, (unsigned long long)(offset % 100000));
	return 0;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The header's and every whole block's checksum set to match their bytes (the layout of
 * doc/ntlog-format.md, read as far as it goes). */
static void fix_checksums(uint8_t *b, size_t len)
{
	if (len < NT_LOG_HEADER_BYTES)
		return;
	put32(b + 60, nt_crc32(0, b, 60));
	for (size_t pos = NT_LOG_HEADER_BYTES; len - pos >= NT_LOG_RANK_HEADER_BYTES;) {
		uint64_t plen = get32(b + pos + 8) | (uint64_t)get32(b + pos + 12) << 32;
		size_t payload = pos + NT_LOG_RANK_HEADER_BYTES;
		if (plen > len - payload)
			return;
		put32(b + pos + 16, nt_crc32(0, b + payload, (size_t)plen));
		pos = payload + (size_t)plen;
	}
}

/* Whether s[0..n) is UTF-8 (RFC 3629: no overlong forms, surrogates or code points past
 * U+10FFFF). */
static int is_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		size_t k = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2
			   : (c & 0xf8) == 0xf0 ? 3 : 9;
		if (k == 9 || n - i <= k)
			return 0;
		uint32_t cp = k == 0 ? c : c & (0x3f >> k);
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		static const uint32_t min[4] = { 0, 0x80, 0x800, 0x10000 };
		if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += k + 1;
	}
	return 1;
}

/* The JSON report of rep parses and is UTF-8, whatever bytes the log's strings hold. */
static void check_json(const struct nt_report *rep)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	if (!f)
		return;
	int rc = nt_report_write_json(f, rep);
	if (fclose(f) != 0 || !doc)
		broken("open_memstream failed", NULL);
	struct nt_jvalue v;
	char err[128];
	if (rc != 0)
		broken("the JSON writer failed", NULL);
	if (!is_utf8((const unsigned char *)doc, len))
		broken("the JSON report is not UTF-8", NULL);
	if (nt_json_parse(doc, len, &v, err, sizeof err) != 0)
		broken("the JSON report does not parse", err);
	nt_jvalue_free(&v);
	free(doc);
}

/* Every number of a decoded log replaced by 8 bytes of the input in turn, past the ranges the
 * reader enforces (only the joins, the call site indices and the strings are kept): the report
 * and the attribution are public functions that a program may hand a log it built itself,
 * and must stay defined whatever the numbers (no overflow, no out-of-range conversion). */
static void unleash(struct nt_log *log, const uint8_t *data, size_t size)
{
	size_t at = 0;
#define NEXT() (size >= 8 ? (at = (at + 8) % (size - 7), get32(data + at) | \
			     (uint64_t)get32(data + at + 4) << 32) : 0)
	for (uint32_t r = 0; r < log->nranks; r++) {
		struct nt_log_rank *k = &log->ranks[r];
		k->wall_ns = NEXT();
		k->mpi_ns = NEXT();
		k->init_global_ns = (int64_t)NEXT();
		k->drift_ppb = (int64_t)NEXT();
		k->clock_error_ns = NEXT();
		k->clock_test_error_ns = NEXT();
		k->probe_reads = NEXT();
		k->probe_cost_ns = NEXT();
		k->injected_ns = NEXT();
		k->dropped = NEXT();
		for (uint32_t i = 0; i < k->nsites; i++) {
			struct nt_log_site *s = &k->sites[i];
			s->calls = NEXT();
			s->total_ns = NEXT();
			s->max_ns = NEXT();
			s->bytes = NEXT();
		}
		for (uint64_t i = 0; i < k->nrecords; i++) {
			struct nt_log_record *x = &k->records[i];
			x->flags = (uint32_t)NEXT();
			x->start_ns = NEXT();
			x->duration_ns = NEXT();
			x->interval_ns = NEXT();
			x->p2p_ns = NEXT();
#define WINDOW_FIELD(id, name, kind, source, since, key) x->win.NT_LOG_WINDOW_NAME(kind, name) = NEXT();
			NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
			x->win.valid = (uint32_t)NEXT();
		}
	}
#undef NEXT
}

/* The report of log, all of it written: text and late instances to sink, JSON checked. */
static void report(const struct nt_log *log, FILE *sink)
{
	struct nt_report rep;
	if (nt_report_build(log, fake_symbolize, NULL, &rep) != 0)
		return;
	nt_report_write_text(sink, &rep, "fuzz.ntlog", 0);
	nt_report_write_late(sink, &rep, 1000);
	check_json(&rep);
	nt_report_free(&rep);
}

/* Decode buf; 0 when it is a log, after checking that a refusal said why. */
static int decode(const uint8_t *buf, size_t size, struct nt_log *log, char *err, size_t errsz)
{
	int rc = nt_log_decode(buf, size, log, err, errsz);
	if (rc != 0 && rc != -ENOMEM && (!err[0] || !strcmp(err, "ok")))
		broken("refused without saying why", err);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	struct nt_log log;
	char err[256];
	int rc = decode(data, size, &log, err, sizeof err);
	if (rc != 0 && strstr(err, "checksum mismatch")) {
		uint8_t *copy = malloc(size);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		fix_checksums(copy, size);
		rc = decode(copy, size, &log, err, sizeof err);
		free(copy);
	}
	if (rc != 0)
		return 0;
	report(&log, sink);
	unleash(&log, data, size);
	report(&log, sink);
	nt_log_free(&log);
	return 0;
}
