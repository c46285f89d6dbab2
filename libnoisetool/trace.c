/* The TSV noise trace: "start_ns<TAB>duration_ns" per line (Netgauge selfish, LogGOPSim),
 * after a "# elapsed_ns N" line with the run's length and, for one CPU of several, a
 * "# start_offset_ns N" line with where its time axis starts in the run's (comments to the
 * readers of old). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/noise.h>

/* What a trace line may hold: starts within 2^56 ns (2.28 years, the job log's limit for any
 * time) and detours of at most an hour (the simulator's limit for a rare detour), so that a
 * start plus its duration, and the sums the simulator and the injector make of them, stay far
 * from overflowing. A measured trace is seconds long, its detours milliseconds. */
#define MAX_START_NS (1ull << 56)
#define MAX_DURATION_NS 3600000000000ull

int nt_trace_write(FILE *f, const struct nt_detour *d, size_t n)
{
	return nt_trace_write_run(f, d, n, 0);
}

int nt_trace_write_run(FILE *f, const struct nt_detour *d, size_t n, uint64_t elapsed_ns)
{
	return nt_trace_write_axis(f, d, n, &(struct nt_trace_axis){ elapsed_ns, 0 });
}

int nt_trace_write_axis(FILE *f, const struct nt_detour *d, size_t n,
			const struct nt_trace_axis *axis)
{
	if (!f || (!d && n) || !axis)
		return -EINVAL;
	if (axis->elapsed_ns)
		fprintf(f, "# elapsed_ns %" PRIu64 "\n", axis->elapsed_ns);
	if (axis->start_offset_ns)
		fprintf(f, "# start_offset_ns %" PRIu64 "\n", axis->start_offset_ns);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 "\t%" PRIu64 "\n", d[i].start_ns, d[i].duration_ns);
	return ferror(f) ? -EIO : 0;
}

/* Parse a decimal u64 at *p, advancing it. */
static int parse_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	uint64_t x = 0;
	while (*s >= '0' && *s <= '9') {
		unsigned dgt = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - dgt) / 10)
			return -ERANGE;
		x = x * 10 + dgt;
		s++;
	}
	*p = s;
	*v = x;
	return 0;
}

int nt_trace_read(FILE *f, struct nt_detour **out, size_t *n, char *err, size_t errsz)
{
	return nt_trace_read_run(f, out, n, NULL, err, errsz);
}

/* "# KEY N" into *v when the comment p is that line and N is at most 2^56 ns. */
static void parse_comment(const char *p, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, key, klen) != 0)
		return;
	p += klen;
	if (*p != ' ' && *p != '\t')
		return;
	while (*p == ' ' || *p == '\t')
		p++;
	uint64_t x;
	if (parse_u64(&p, &x) == 0 && x <= MAX_START_NS)
		*v = x;
}

int nt_trace_read_run(FILE *f, struct nt_detour **out, size_t *n, uint64_t *elapsed_ns,
		      char *err, size_t errsz)
{
	struct nt_trace_axis axis;
	int rc = nt_trace_read_axis(f, out, n, &axis, err, errsz);
	if (elapsed_ns)
		*elapsed_ns = rc == 0 ? axis.elapsed_ns : 0;
	return rc;
}

int nt_trace_read_axis(FILE *f, struct nt_detour **out, size_t *n, struct nt_trace_axis *axis,
		       char *err, size_t errsz)
{
	if (!f || !out || !n || !axis)
		return -EINVAL;
	*axis = (struct nt_trace_axis){ 0, 0 };
	*out = NULL;
	*n = 0;
	if (err && errsz)
		err[0] = '\0';
	char line[256];
	size_t cap = 0, cnt = 0, lineno = 0;
	struct nt_detour *d = NULL;
	int rc = 0;
	const char *range = NULL; /* the field out of range, if that is what is wrong */
	while (fgets(line, sizeof line, f)) {
		lineno++;
		size_t len = strlen(line);
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			rc = -EINVAL;
			break;
		}
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#') {
			parse_comment(p, "elapsed_ns", &axis->elapsed_ns);
			parse_comment(p, "start_offset_ns", &axis->start_offset_ns);
		}
		if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
			continue;
		uint64_t start, dur;
		if (parse_u64(&p, &start) != 0 || (*p != '\t' && *p != ' ')) {
			rc = -EINVAL;
			break;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (parse_u64(&p, &dur) != 0) {
			rc = -EINVAL;
			break;
		}
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p != '\n' && *p != '\0') {
			rc = -EINVAL;
			break;
		}
		if (start > MAX_START_NS || dur > MAX_DURATION_NS) {
			range = start > MAX_START_NS ? "start_ns is out of range (at most 2^56 ns)"
						     : "duration_ns is out of range (at most an hour)";
			rc = -EINVAL;
			break;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 1024;
			struct nt_detour *nd = realloc(d, cap * sizeof *d);
			if (!nd) {
				rc = -ENOMEM;
				break;
			}
			d = nd;
		}
		d[cnt++] = (struct nt_detour){ start, dur, 0 };
	}
	if (rc == 0 && ferror(f))
		rc = -EIO;
	if (rc != 0) {
		if (err && errsz && rc == -EINVAL && range)
			snprintf(err, errsz, "line %zu: %s", lineno, range);
		else if (err && errsz && rc == -EINVAL)
			snprintf(err, errsz, "line %zu: expected \"start_ns<TAB>duration_ns\"", lineno);
		free(d);
		return rc;
	}
	*out = d;
	*n = cnt;
	return 0;
}
