/* A small strict JSON reader (RFC 8259): parses a whole document into a tree, for the
 * simulator's signature files. Private to the core. */
#ifndef LIBNOISETOOL_JSON_READ_H
#define LIBNOISETOOL_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

enum nt_jtype { NT_JNULL, NT_JBOOL, NT_JNUMBER, NT_JSTRING, NT_JARRAY, NT_JOBJECT };

struct nt_jvalue {
	enum nt_jtype type;
	bool boolean;
	double number;
	char *string;             /* NT_JSTRING, NUL-terminated (a \u0000 ends it early) */
	size_t n;                 /* items of an array or object */
	struct nt_jvalue *items;
	char **keys;              /* NT_JOBJECT: keys[i] names items[i] */
};

/* Parse text[0..len) into *out (nesting at most 64, nothing but whitespace after the value).
 * Returns 0, -EINVAL with "line N: what" in err, or -ENOMEM. Free with nt_jvalue_free. */
int nt_json_parse(const char *text, size_t len, struct nt_jvalue *out, char *err, size_t errsz);

/* Free what nt_json_parse allocated in v (not v itself). */
void nt_jvalue_free(struct nt_jvalue *v);

/* The member `key` of object obj, or NULL (also when obj is not an object). */
const struct nt_jvalue *nt_jvalue_get(const struct nt_jvalue *obj, const char *key);

#endif /* LIBNOISETOOL_JSON_READ_H */
