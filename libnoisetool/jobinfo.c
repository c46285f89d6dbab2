/* The job's identity in bounded lines: a command line quoted for a shell, an MPI library's
 * version line (noisetool-private/jobinfo.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <noisetool-private/jobinfo.h>

#include "utf8.h"

/* A line being written in whole units (a character, an escape, a quote): when one does not fit,
 * the line is cut back to the last unit boundary that leaves room for the marker. */
struct line {
	char *out;
	size_t limit; /* bytes of text at most (size - 1) */
	size_t pos;
	size_t safe;  /* the last boundary at which the marker still fits after it */
	bool full;    /* a unit did not fit */
};

static void unit(struct line *l, const char *bytes, size_t n)
{
	if (l->full)
		return;
	if (n > l->limit - l->pos) {
		l->full = true;
		return;
	}
	memcpy(l->out + l->pos, bytes, n);
	l->pos += n;
	if (l->pos + strlen(NT_JOBINFO_TRUNCATED) <= l->limit)
		l->safe = l->pos;
}

/* The line's end: cut back and marked when something did not fit (or more was not read). */
static int finish(struct line *l, bool cut)
{
	if (l->full || cut) {
		l->pos = l->safe;
		memcpy(l->out + l->pos, NT_JOBINFO_TRUNCATED, strlen(NT_JOBINFO_TRUNCATED));
		l->pos += strlen(NT_JOBINFO_TRUNCATED);
	}
	l->out[l->pos] = '\0';
	return (int)l->pos;
}

/* The length of the UTF-8 sequence at p (n bytes left, no NUL needed), 0 when none starts
 * there; a C1 control (U+0080 to U+009F) counts as none. */
static size_t utf8_at(const char *p, size_t n)
{
	char c[5] = { 0 };
	memcpy(c, p, n < 4 ? n : 4);
	size_t len = nt_utf8_length(c);
	if (len == 2 && (unsigned char)c[0] == 0xc2 && (unsigned char)c[1] < 0xa0)
		return 0;
	return len;
}

static bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("_@%+=:,./-", c));
}

/* One argument, quoted where a shell would not read it back as it is. */
static void quote_arg(struct line *l, const char *p, size_t n)
{
	bool plain = n > 0, control = false;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)p[i];
		size_t len = c < 0x80 ? 1 : utf8_at(p + i, n - i);
		plain &= plain_byte(c);
		if (len == 0 || c < 0x20 || c == 0x7f) {
			control = true;
			len = 1;
		}
		i += len;
	}
	if (plain) {
		for (size_t i = 0; i < n; i++)
			unit(l, p + i, 1);
		return;
	}
	unit(l, control ? "$'" : "'", control ? 2 : 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)p[i];
		size_t len = c < 0x80 ? 1 : utf8_at(p + i, n - i);
		char esc[8];
		if (!control && c == '\'') {
			unit(l, "'\\''", 4);
		} else if (!control || (len > 1) || (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')) {
			unit(l, p + i, len);
		} else if (c == '\\' || c == '\'') {
			esc[0] = '\\';
			esc[1] = (char)c;
			unit(l, esc, 2);
		} else if (c == '\n' || c == '\t' || c == '\r') {
			unit(l, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r", 2);
		} else { /* another control character, or a byte that is not UTF-8 */
			snprintf(esc, sizeof esc, "\\x%02x", c);
			unit(l, esc, 4);
			len = 1;
		}
		i += len ? len : 1;
	}
	unit(l, "'", 1);
}

int nt_jobinfo_command(const char *args, size_t len, bool more, char *out, size_t size)
{
	if (!out || size < strlen(NT_JOBINFO_TRUNCATED) + 1 || (!args && len))
		return -EINVAL;
	struct line l = { .out = out, .limit = size - 1 };
	if (len && args[len - 1] == '\0')
		len--; /* the last argument's end, not an empty argument after it */
	for (size_t at = 0, k = 0; len && at <= len; k++) {
		const char *end = memchr(args + at, '\0', len - at);
		size_t n = end ? (size_t)(end - (args + at)) : len - at;
		if (k)
			unit(&l, " ", 1);
		quote_arg(&l, args + at, n);
		at += n + 1;
	}
	return finish(&l, more);
}

int nt_jobinfo_line(const char *text, char *out, size_t size)
{
	if (!text || !out || size < strlen(NT_JOBINFO_TRUNCATED) + 1)
		return -EINVAL;
	struct line l = { .out = out, .limit = size - 1 };
	bool blank = false;
	for (const char *p = text; *p && *p != '\n' && *p != '\r';) {
		unsigned char c = (unsigned char)*p;
		size_t len = c < 0x80 ? 1 : utf8_at(p, strnlen(p, 4));
		if (c <= 0x20 || c == 0x7f || (len == 0 && (unsigned char)p[0] == 0xc2 &&
						  p[1] && (unsigned char)p[1] < 0xa0)) {
			blank = true;
			p += c == 0xc2 ? 2 : 1;
			continue;
		}
		if (blank && l.pos)
			unit(&l, " ", 1);
		blank = false;
		if (len == 0) {
			unit(&l, "?", 1);
			len = 1;
		} else {
			unit(&l, p, len);
		}
		p += len;
	}
	return finish(&l, false);
}

/* value into out as one line; "" when it is NULL, empty or cannot be put. */
static void put_line(const char *value, char *out, size_t size)
{
	if (!value || nt_jobinfo_line(value, out, size) < 0)
		out[0] = '\0';
}

/* Slurm's step id: its special steps by Slurm's names (slurm.h: SLURM_BATCH_SCRIPT and the
 * ones below it), others as they are. */
static const char *slurm_step(const char *step)
{
	static const struct {
		const char *id, *name;
	} special[] = { { "4294967294", "batch" }, { "4294967293", "extern" },
			{ "4294967292", "interactive" } };
	for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
		if (strcmp(step, special[i].id) == 0)
			return special[i].name;
	return step;
}

void nt_jobinfo_batch_from_env(char *(*get)(const char *name), unsigned uid,
			       struct nt_jobinfo_batch *out)
{
	memset(out, 0, sizeof *out);
	const char *user = NULL, *v;
	char job[2 * NT_JOBINFO_BATCH_JOB_BYTES];
	if ((v = get("SLURM_JOB_ID")) && *v) {
		snprintf(out->system, sizeof out->system, "slurm");
		const char *step = get("SLURM_STEP_ID");
		if (step && *step)
			snprintf(job, sizeof job, "%.60s.%.60s", v, slurm_step(step));
		else
			snprintf(job, sizeof job, "%.60s", v);
		put_line(job, out->job, sizeof out->job);
		put_line(get("SLURM_JOB_NODELIST"), out->nodes, sizeof out->nodes);
		user = get("SLURM_JOB_USER");
	} else if ((v = get("PBS_JOBID")) && *v) {
		snprintf(out->system, sizeof out->system, "pbs");
		put_line(v, out->job, sizeof out->job);
		user = get("PBS_O_LOGNAME");
	} else if ((v = get("LSB_JOBID")) && *v) {
		snprintf(out->system, sizeof out->system, "lsf");
		const char *index = get("LSB_JOBINDEX");
		if (index && *index && strcmp(index, "0") != 0)
			snprintf(job, sizeof job, "%.60s[%.60s]", v, index);
		else
			snprintf(job, sizeof job, "%.60s", v);
		put_line(job, out->job, sizeof out->job);
	} else if ((v = get("FLUX_JOB_ID")) && *v) {
		snprintf(out->system, sizeof out->system, "flux");
		put_line(v, out->job, sizeof out->job);
	}
	if (!user || !*user)
		user = get("USER");
	if (!user || !*user)
		user = get("LOGNAME");
	if (user && *user)
		put_line(user, out->user, sizeof out->user);
	if (!out->user[0])
		snprintf(out->user, sizeof out->user, "uid %u", uid);
}
