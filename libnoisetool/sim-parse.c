/* The simulator's option strings: rank lists and ranges, the periodic noise spec, LogGP
 * parameters, collective and algorithm names. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/sim.h>

#include "util.h"


static const char *const coll_names[] = {
	[NT_SIM_BARRIER] = "barrier", [NT_SIM_BCAST] = "bcast",
	[NT_SIM_REDUCE] = "reduce",   [NT_SIM_ALLREDUCE] = "allreduce",
	[NT_SIM_ALLGATHER] = "allgather", [NT_SIM_ALLTOALL] = "alltoall",
};

static const char *const alg_names[] = {
	[NT_SIM_ALG_DEFAULT] = "default",
	[NT_SIM_DISSEMINATION] = "dissemination",
	[NT_SIM_BINOMIAL] = "binomial",
	[NT_SIM_RECURSIVE_DOUBLING] = "recursive-doubling",
	[NT_SIM_RING] = "ring",
	[NT_SIM_BRUCK] = "bruck",
};

const char *nt_sim_collective_name(enum nt_sim_collective c)
{
	return (unsigned)c < sizeof coll_names / sizeof *coll_names ? coll_names[c] : "?";
}

const char *nt_sim_algorithm_name(enum nt_sim_algorithm a)
{
	return (unsigned)a < sizeof alg_names / sizeof *alg_names ? alg_names[a] : "?";
}

int nt_sim_collective_parse(const char *s, enum nt_sim_collective *out)
{
	for (unsigned i = 0; s && out && i < sizeof coll_names / sizeof *coll_names; i++)
		if (strcmp(s, coll_names[i]) == 0) {
			*out = (enum nt_sim_collective)i;
			return 0;
		}
	return -EINVAL;
}

int nt_sim_algorithm_parse(const char *s, enum nt_sim_algorithm *out)
{
	for (unsigned i = 0; s && out && i < sizeof alg_names / sizeof *alg_names; i++)
		if (strcmp(s, alg_names[i]) == 0) {
			*out = (enum nt_sim_algorithm)i;
			return 0;
		}
	return -EINVAL;
}

/* "4096" or "2^12" (the whole of s[0..len)). */
static int parse_count(const char *s, size_t len, uint64_t *out)
{
	char buf[32];
	if (len == 0 || len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (!isdigit((unsigned char)buf[0]))
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end == '^') {
		if (v != 2 || !isdigit((unsigned char)end[1]))
			return -EINVAL;
		unsigned long long k = strtoull(end + 1, &end, 10);
		if (*end || k > 40)
			return -EINVAL;
		v = 1ull << k;
	} else if (*end) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int nt_sim_parse_ranks(const char *s, uint64_t *out, size_t max, char *err, size_t errsz)
{
	if (!s || !out || max == 0)
		return -EINVAL;
	if (!*s)
		return nt_err_invalid(err, errsz, "empty rank list");
	size_t n = 0;
	const char *p = s;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *dash = memchr(p, '-', len);
		uint64_t a, b;
		if (dash) {
			if (parse_count(p, (size_t)(dash - p), &a) ||
			    parse_count(dash + 1, len - (size_t)(dash - p) - 1, &b))
				return nt_err_invalid(err, errsz, "'%.*s': expected a count like 4096 or 2^12, or a "
					    "range like 2^10-2^21", (int)len, p);
			if (b < a)
				return nt_err_invalid(err, errsz, "'%.*s': the range ends before it starts",
					    (int)len, p);
		} else if (parse_count(p, len, &a)) {
			return nt_err_invalid(err, errsz, "'%.*s': expected a count like 4096 or 2^12, or a "
				    "range like 2^10-2^21", (int)len, p);
		} else {
			b = a;
		}
		if (a < 1 || b > NT_SIM_MAX_RANKS)
			return nt_err_invalid(err, errsz, "'%.*s': rank counts are 1 to 2^30", (int)len, p);
		size_t before = n;
		if (!dash) {
			if (n >= max)
				goto too_many;
			out[n++] = a;
		}
		for (uint64_t v = 1; dash && v <= b; v <<= 1) {
			if (v < a)
				continue;
			if (n >= max)
				goto too_many;
			out[n++] = v;
		}
		if (n == before)
			return nt_err_invalid(err, errsz, "'%.*s': no power of two in the range", (int)len, p);
		p += len;
		if (comma) {
			p++;
			if (!*p)
				return nt_err_invalid(err, errsz, "'%s': ends with a comma", s);
		}
	}
	qsort(out, n, sizeof *out, cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || out[i] != out[u - 1])
			out[u++] = out[i];
	return (int)u;
too_many:
	return nt_err_invalid(err, errsz, "'%s': more than %zu rank counts", s, max);
}

/* "1kHz", "10Hz", "1000" (Hz) -> Hz. */
static int parse_freq(const char *s, size_t len, double *out)
{
	char buf[64];
	if (len == 0 || len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (!isdigit((unsigned char)buf[0]) && buf[0] != '.')
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	double scale;
	if (!*end || strcmp(end, "Hz") == 0 || strcmp(end, "hz") == 0)
		scale = 1;
	else if (strcmp(end, "kHz") == 0 || strcmp(end, "khz") == 0)
		scale = 1e3;
	else if (strcmp(end, "MHz") == 0 || strcmp(end, "mhz") == 0)
		scale = 1e6;
	else
		return -EINVAL;
	if (errno || !isfinite(v) || !(v > 0))
		return -EINVAL;
	*out = v * scale;
	return 0;
}

int nt_sim_parse_noise(const char *s, double *freq_hz, uint64_t *period_ns, char *err,
		       size_t errsz)
{
	if (!s || !freq_hz || !period_ns)
		return -EINVAL;
	bool have_f = false, have_p = false;
	const char *p = s;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (!eq)
			return nt_err_invalid(err, errsz, "'%.*s': expected key=value (keys: freq, period)",
				    (int)len, p);
		size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
		if (klen == 4 && strncmp(p, "freq", 4) == 0) {
			if (parse_freq(eq + 1, vlen, freq_hz))
				return nt_err_invalid(err, errsz, "'%.*s': expected a frequency like 10Hz, 1kHz "
					    "or 1000", (int)len, p);
			have_f = true;
		} else if (klen == 6 && strncmp(p, "period", 6) == 0) {
			if (nt_parse_duration_ns(eq + 1, vlen, 1, period_ns) || *period_ns == 0)
				return nt_err_invalid(err, errsz, "'%.*s': expected a positive duration like "
					    "250us, 2.5us, 1ms or 800 (ns)", (int)len, p);
			have_p = true;
		} else {
			return nt_err_invalid(err, errsz, "'%.*s': unknown key (keys: freq, period)", (int)len,
				    p);
		}
		p += len;
		if (comma) {
			p++;
			if (!*p)
				return nt_err_invalid(err, errsz, "'%s': ends with a comma", s);
		}
	}
	if (!have_f || !have_p)
		return nt_err_invalid(err, errsz, "'%s': needs freq= and period=", s);
	if ((double)*period_ns >= 1e9 / *freq_hz)
		return nt_err_invalid(err, errsz, "'%s': the period (the detour's length) must be shorter "
			    "than 1/freq", s);
	return 0;
}

int nt_sim_parse_loggp(const char *s, struct nt_sim_loggp *out, char *err, size_t errsz)
{
	if (!s || !out)
		return -EINVAL;
	double v[4];
	const char *p = s;
	for (int i = 0; i < 4; i++) {
		char *end;
		errno = 0;
		if (!isdigit((unsigned char)*p) && *p != '.')
			goto bad;
		v[i] = strtod(p, &end);
		if (end == p || errno || !isfinite(v[i]) || v[i] < 0 || v[i] > 1e12)
			goto bad;
		p = end;
		if (i < 3 && *p++ != ',')
			goto bad;
	}
	if (*p)
		goto bad;
	*out = (struct nt_sim_loggp){ v[0], v[1], v[2], v[3] };
	return 0;
bad:
	return nt_err_invalid(err, errsz, "'%s': expected L,o,g,G in ns (G in ns per byte), e.g. "
		    "22,78,71,0.123", s);
}
