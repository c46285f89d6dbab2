/* A small strict JSON reader: recursive descent into a tree of nt_jvalue. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-read.h"

#define MAX_DEPTH 64

struct parser {
	const char *p, *end, *text;
	char *err;
	size_t errsz;
	int rc;
};

__attribute__((format(printf, 2, 3))) static int fail(struct parser *ps, const char *fmt, ...)
{
	if (ps->rc)
		return ps->rc;
	size_t line = 1;
	for (const char *q = ps->text; q < ps->p && q < ps->end; q++)
		line += *q == '\n';
	if (ps->err && ps->errsz) {
		int k = snprintf(ps->err, ps->errsz, "line %zu: ", line);
		va_list ap;
		va_start(ap, fmt);
		if (k >= 0 && (size_t)k < ps->errsz)
			vsnprintf(ps->err + k, ps->errsz - (size_t)k, fmt, ap);
		va_end(ap);
	}
	ps->rc = -EINVAL;
	return ps->rc;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int parse_value(struct parser *ps, struct nt_jvalue *v, int depth);

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string at ps->p (the opening quote), into a malloc'd UTF-8 buffer. */
static int parse_string(struct parser *ps, char **out)
{
	ps->p++;
	size_t cap = 16, n = 0;
	char *b = malloc(cap);
	if (!b)
		return ps->rc = -ENOMEM;
	for (;;) {
		if (ps->p >= ps->end) {
			free(b);
			return fail(ps, "unterminated string");
		}
		unsigned char c = (unsigned char)*ps->p++;
		if (n + 4 >= cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				return ps->rc = -ENOMEM;
			}
			b = nb;
		}
		if (c == '"')
			break;
		if (c < 0x20) {
			free(b);
			return fail(ps, "control character in a string");
		}
		if (c != '\\') {
			b[n++] = (char)c;
			continue;
		}
		if (ps->p >= ps->end)
			continue; /* reported as unterminated */
		char e = *ps->p++, plain = 0;
		switch (e) {
		case '"': plain = '"'; break;
		case '\\': plain = '\\'; break;
		case '/': plain = '/'; break;
		case 'b': plain = '\b'; break;
		case 'f': plain = '\f'; break;
		case 'n': plain = '\n'; break;
		case 'r': plain = '\r'; break;
		case 't': plain = '\t'; break;
		}
		if (plain) {
			b[n++] = plain;
			continue;
		}
		if (e != 'u' || ps->end - ps->p < 4) {
			free(b);
			return fail(ps, "bad escape in a string");
		}
		unsigned cp = 0;
		for (int i = 0; i < 4; i++) {
			int h = hexval(ps->p[i]);
			if (h < 0) {
				free(b);
				return fail(ps, "bad \\u escape in a string");
			}
			cp = cp * 16 + (unsigned)h;
		}
		ps->p += 4;
		if (cp < 0x80) {
			b[n++] = (char)cp;
		} else if (cp < 0x800) {
			b[n++] = (char)(0xc0 | (cp >> 6));
			b[n++] = (char)(0x80 | (cp & 0x3f));
		} else { /* surrogates are kept as they are: nothing here needs them */
			b[n++] = (char)(0xe0 | (cp >> 12));
			b[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			b[n++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	b[n] = 0;
	*out = b;
	return 0;
}

static int parse_number(struct parser *ps, struct nt_jvalue *v)
{
	const char *s = ps->p, *q = s;
	if (q < ps->end && *q == '-')
		q++;
	if (q >= ps->end || *q < '0' || *q > '9')
		return fail(ps, "expected a value");
	if (*q == '0')
		q++;
	else
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	if (q < ps->end && *q == '.') {
		q++;
		if (q >= ps->end || *q < '0' || *q > '9')
			return fail(ps, "bad number");
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < ps->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= ps->end || *q < '0' || *q > '9')
			return fail(ps, "bad number");
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	char buf[64];
	if ((size_t)(q - s) >= sizeof buf)
		return fail(ps, "number too long");
	memcpy(buf, s, (size_t)(q - s));
	buf[q - s] = 0;
	v->type = NT_JNUMBER;
	v->number = strtod(buf, NULL);
	if (!isfinite(v->number))
		return fail(ps, "number out of range");
	ps->p = q;
	return 0;
}

static int push(struct parser *ps, struct nt_jvalue *v, size_t *cap, bool with_key)
{
	if (v->n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 4;
	struct nt_jvalue *ni = realloc(v->items, nc * sizeof *ni);
	if (!ni)
		return ps->rc = -ENOMEM;
	v->items = ni;
	if (with_key) {
		char **nk = realloc(v->keys, nc * sizeof *nk);
		if (!nk)
			return ps->rc = -ENOMEM;
		v->keys = nk;
	}
	*cap = nc;
	return 0;
}

static int parse_container(struct parser *ps, struct nt_jvalue *v, int depth, bool object)
{
	char close = object ? '}' : ']';
	v->type = object ? NT_JOBJECT : NT_JARRAY;
	ps->p++;
	size_t cap = 0;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		if (push(ps, v, &cap, object))
			return ps->rc;
		char *key = NULL;
		if (object) {
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "expected a \"key\"");
			if (parse_string(ps, &key))
				return ps->rc;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				return fail(ps, "expected ':' after a key");
			}
			ps->p++;
			v->keys[v->n] = key;
		}
		memset(&v->items[v->n], 0, sizeof v->items[v->n]);
		v->n++; /* counted before parsing, so that a failure frees it */
		if (parse_value(ps, &v->items[v->n - 1], depth + 1))
			return ps->rc;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return 0;
		}
		return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int parse_literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return fail(ps, "expected a value");
	ps->p += n;
	return 0;
}

static int parse_value(struct parser *ps, struct nt_jvalue *v, int depth)
{
	if (depth > MAX_DEPTH)
		return fail(ps, "nested too deeply");
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end of the document");
	switch (*ps->p) {
	case '{':
		return parse_container(ps, v, depth, true);
	case '[':
		return parse_container(ps, v, depth, false);
	case '"':
		v->type = NT_JSTRING;
		return parse_string(ps, &v->string);
	case 't':
		v->type = NT_JBOOL;
		v->boolean = true;
		return parse_literal(ps, "true");
	case 'f':
		v->type = NT_JBOOL;
		return parse_literal(ps, "false");
	case 'n':
		v->type = NT_JNULL;
		return parse_literal(ps, "null");
	default:
		return parse_number(ps, v);
	}
}

int nt_json_parse(const char *text, size_t len, struct nt_jvalue *out, char *err, size_t errsz)
{
	if (!text || !out)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	struct parser ps = { .p = text, .end = text + len, .text = text, .err = err, .errsz = errsz };
	if (err && errsz)
		err[0] = 0;
	if (parse_value(&ps, out, 0) == 0) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			fail(&ps, "unexpected text after the document");
	}
	if (ps.rc) {
		nt_jvalue_free(out);
		memset(out, 0, sizeof *out);
	}
	return ps.rc;
}

void nt_jvalue_free(struct nt_jvalue *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		nt_jvalue_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
	v->items = NULL;
	v->keys = NULL;
	v->string = NULL;
	v->n = 0;
}

const struct nt_jvalue *nt_jvalue_get(const struct nt_jvalue *obj, const char *key)
{
	if (!obj || obj->type != NT_JOBJECT)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (strcmp(obj->keys[i], key) == 0)
			return &obj->items[i];
	return NULL;
}
