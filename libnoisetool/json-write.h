/* A small streaming JSON writer: objects, arrays, escaped strings, finite numbers. */
#ifndef LIBNOISETOOL_JSON_WRITE_H
#define LIBNOISETOOL_JSON_WRITE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define NT_JSON_MAX_DEPTH 32

struct nt_json {
	FILE *f;
	int depth;
	bool need_comma[NT_JSON_MAX_DEPTH];
	bool error; /* nesting misuse; I/O errors show in ferror(f) */
};

void nt_json_init(struct nt_json *j, FILE *f);
/* key is NULL inside arrays and at the top level. */
void nt_json_object_begin(struct nt_json *j, const char *key);
void nt_json_object_end(struct nt_json *j);
void nt_json_array_begin(struct nt_json *j, const char *key);
void nt_json_array_end(struct nt_json *j);
void nt_json_string(struct nt_json *j, const char *key, const char *value);
void nt_json_uint(struct nt_json *j, const char *key, uint64_t value);
void nt_json_int(struct nt_json *j, const char *key, int64_t value);
/* Non-finite values are written as null. */
void nt_json_double(struct nt_json *j, const char *key, double value);
void nt_json_bool(struct nt_json *j, const char *key, bool value);
/* 0 when the document is complete and nothing failed, else -EIO. */
int nt_json_finish(struct nt_json *j);

/* s (NULL: "") as a JSON string with its quotes, straight to f, for the writers that lay out
 * their own documents (report-perfetto.c) and for nt_json: '"', '\\' and control characters
 * escaped, and a byte that does not start a UTF-8 sequence (a file name or host name in another
 * encoding, a damaged log) written as U+FFFD, the replacement character, so that every reader
 * still parses the document (a trace viewer refuses a whole file for one bad byte). */
void nt_json_write_escaped(FILE *f, const char *s);

#endif /* LIBNOISETOOL_JSON_WRITE_H */
