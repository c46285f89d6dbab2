/* Streaming JSON writer. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "json-write.h"
#include "utf8.h"

void nt_json_init(struct nt_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
	j->error = false;
}

void nt_json_write_escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20) {
				fprintf(f, "\\u%04x", *p);
				break;
			}
			size_t n = nt_utf8_length((const char *)p);
			if (n == 0) {
				fputs("\\ufffd", f);
				break;
			}
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		p++;
	}
	fputc('"', f);
}

/* Separator, indentation and key before a value. */
static void prefix(struct nt_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	if (j->depth > 0) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	if (key) {
		nt_json_write_escaped(j->f, key);
		fputs(": ", j->f);
	}
	j->need_comma[j->depth] = true;
}

static void open_scope(struct nt_json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->f);
	if (j->depth + 1 >= NT_JSON_MAX_DEPTH) {
		j->error = true;
		return;
	}
	j->need_comma[++j->depth] = false;
}

static void close_scope(struct nt_json *j, char c)
{
	if (j->depth == 0) {
		j->error = true;
		return;
	}
	bool had_items = j->need_comma[j->depth];
	j->depth--;
	if (had_items) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void nt_json_object_begin(struct nt_json *j, const char *key)
{
	open_scope(j, key, '{');
}

void nt_json_object_end(struct nt_json *j)
{
	close_scope(j, '}');
}

void nt_json_array_begin(struct nt_json *j, const char *key)
{
	open_scope(j, key, '[');
}

void nt_json_array_end(struct nt_json *j)
{
	close_scope(j, ']');
}

void nt_json_string(struct nt_json *j, const char *key, const char *value)
{
	prefix(j, key);
	nt_json_write_escaped(j->f, value);
}

void nt_json_uint(struct nt_json *j, const char *key, uint64_t value)
{
	prefix(j, key);
	fprintf(j->f, "%" PRIu64, value);
}

void nt_json_int(struct nt_json *j, const char *key, int64_t value)
{
	prefix(j, key);
	fprintf(j->f, "%" PRId64, value);
}

void nt_json_double(struct nt_json *j, const char *key, double value)
{
	prefix(j, key);
	if (isfinite(value))
		fprintf(j->f, "%.10g", value);
	else
		fputs("null", j->f);
}

void nt_json_bool(struct nt_json *j, const char *key, bool value)
{
	prefix(j, key);
	fputs(value ? "true" : "false", j->f);
}

int nt_json_finish(struct nt_json *j)
{
	if (j->error || j->depth != 0 || ferror(j->f))
		return -EIO;
	return 0;
}
