/* The simulator's option strings: rank lists and ranges, the periodic noise spec, LogGP
 * parameters, collective and algorithm names. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/sim.h>

#include "errmsg.h"
#include "units.h"


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

/* The keys of a noise spec, as bits of struct noise_keys.seen. */
enum {
	K_FREQ = 1 << 0,   /* Engelmann's frequency */
	K_LENGTH = 1 << 1, /* Engelmann's length (length= or duration=) */
	K_PERIOD = 1 << 2, /* the injector's interval, or the old form's length (with freq=) */
	K_DETOUR = 1 << 3, /* the injector's length */
	K_MODE = 1 << 4,
};

static const char noise_keys_help[] =
	"keys: period=T,detour=T[,mode=sync|unsync] (the injector's) or "
	"freq=F,length=T[,mode=...] (Engelmann's; duration= is length=)";

/* A duration in ns: an explicit unit is required when bare_ns is 0. */
static int parse_len(const char *v, size_t vlen, double bare_ns, uint64_t *out)
{
	if (vlen && bare_ns == 0 && isdigit((unsigned char)v[vlen - 1]))
		return -EINVAL;
	return nt_parse_duration_ns(v, vlen, bare_ns ? bare_ns : 1, out) || *out == 0 ? -EINVAL : 0;
}

int nt_sim_parse_noise_spec(const char *s, struct nt_sim_noise_spec *out, char *err, size_t errsz)
{
	if (!s || !out)
		return -EINVAL;
	*out = (struct nt_sim_noise_spec){ 0 };
	unsigned seen = 0;
	/* period= and the length are kept as text until the spelling is known. */
	const char *period_v = NULL, *len_key = NULL;
	size_t period_len = 0;
	const char *p = s;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (!eq)
			return nt_err_invalid(err, errsz, "'%.*s': expected key=value (%s)", (int)len, p,
					      noise_keys_help);
		size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
		const char *v = eq + 1;
		unsigned key;
#define KEY(name) (klen == sizeof name - 1 && strncmp(p, name, klen) == 0)
		if (KEY("freq"))
			key = K_FREQ;
		else if (KEY("length") || KEY("duration"))
			key = K_LENGTH;
		else if (KEY("period"))
			key = K_PERIOD;
		else if (KEY("detour"))
			key = K_DETOUR;
		else if (KEY("mode"))
			key = K_MODE;
		else if (KEY("ranks") || KEY("seed") || KEY("trace"))
			return nt_err_invalid(err, errsz, "'%.*s': an injector key that simulate does not "
					      "take (%s)", (int)len, p,
					      KEY("ranks") ? "every rank has the noise"
					      : KEY("seed") ? "give --seed"
							    : "give the trace as --signature FILE");
		else
			return nt_err_invalid(err, errsz, "'%.*s': unknown key (%s)", (int)len, p,
					      noise_keys_help);
#undef KEY
		if (seen & key)
			return nt_err_invalid(err, errsz, "'%s': %.*s= is given twice", s, (int)klen, p);
		seen |= key;
		if (key == K_FREQ) {
			if (parse_freq(v, vlen, &out->freq_hz))
				return nt_err_invalid(err, errsz, "'%.*s': expected a frequency like 10Hz, "
						      "1kHz or 1000", (int)len, p);
		} else if (key == K_DETOUR) {
			/* As NOISETOOL_INJECT reads it: a bare number is us. */
			if (parse_len(v, vlen, 1e3, &out->detour_ns))
				return nt_err_invalid(err, errsz, "'%.*s': expected a positive duration "
						      "like 25us, 2.5ms or 25 (us, as the injector "
						      "reads it)", (int)len, p);
		} else if (key == K_LENGTH) {
			len_key = p;
			if (parse_len(v, vlen, 0, &out->detour_ns))
				return nt_err_invalid(err, errsz, "'%.*s': expected a positive duration "
						      "with its unit, like 800ns, 25us or 2.5ms (a bare "
						      "number would be ns in the old period= and us "
						      "in the injector's detour=)", (int)len, p);
		} else if (key == K_PERIOD) {
			period_v = v, period_len = vlen;
		} else {
			if (vlen == 4 && strncmp(v, "sync", 4) == 0)
				out->mode = NT_SIM_MODE_SYNC;
			else if (vlen == 6 && strncmp(v, "unsync", 6) == 0)
				out->mode = NT_SIM_MODE_UNSYNC;
			else
				return nt_err_invalid(err, errsz, "'%.*s': mode is sync or unsync",
						      (int)len, p);
		}
		p += len;
		if (comma) {
			p++;
			if (!*p)
				return nt_err_invalid(err, errsz, "'%s': ends with a comma", s);
		}
	}

	/* The spelling: period= is the interval, except beside freq= (the old form: the length). */
	unsigned spell = seen & ~(unsigned)K_MODE;
	if (spell == (K_FREQ | K_PERIOD)) {
		if (nt_parse_duration_ns(period_v, period_len, 1, &out->detour_ns) ||
		    out->detour_ns == 0)
			return nt_err_invalid(err, errsz, "'period=%.*s': expected a positive duration "
					      "like 250us, 2.5us, 1ms or 800 (ns)", (int)period_len,
					      period_v);
		out->deprecated = true;
	} else if (spell == (K_PERIOD | K_DETOUR)) {
		if (parse_len(period_v, period_len, 1e3, &out->period_ns))
			return nt_err_invalid(err, errsz, "'period=%.*s': expected a positive duration "
					      "like 1ms, 250us or 1000 (us, as the injector reads it)",
					      (int)period_len, period_v);
		out->freq_hz = 1e9 / (double)out->period_ns;
	} else if (spell == (K_FREQ | K_LENGTH)) {
		/* checked below */
	} else if ((seen & K_FREQ) && (seen & K_PERIOD)) {
		return nt_err_invalid(err, errsz, "'%s': period= beside freq= is the old spelling of "
				      "the detour's length, so %s= gives the length twice; write "
				      "freq=F,length=T or period=T,detour=T", s,
				      seen & K_DETOUR ? "detour" : "length");
	} else if ((seen & K_PERIOD) && (seen & K_LENGTH)) {
		return nt_err_invalid(err, errsz, "'%s': %.*s= is Engelmann's length and period= "
				      "the injector's interval (or the old spelling of the length): "
				      "ambiguous; write period=T,detour=T or freq=F,length=T", s,
				      len_key[0] == 'l' ? 6 : 8, len_key);
	} else if ((seen & K_FREQ) && (seen & K_DETOUR)) {
		return nt_err_invalid(err, errsz, "'%s': freq= is Engelmann's and detour= the "
				      "injector's; write freq=F,length=T or period=T,detour=T", s);
	} else if ((seen & K_DETOUR) && (seen & K_LENGTH)) {
		return nt_err_invalid(err, errsz, "'%s': detour= and %.*s= both give the detour's "
				      "length; keep one", s, len_key[0] == 'l' ? 6 : 8, len_key);
	} else if (seen & (K_PERIOD | K_DETOUR)) {
		return nt_err_invalid(err, errsz, "'%s': needs period= (the interval) and detour= "
				      "(the length), or freq= and length=", s);
	} else {
		return nt_err_invalid(err, errsz, "'%s': needs freq= and length= (the detour's), or "
				      "period= (the interval) and detour=", s);
	}
	if (!out->period_ns) {
		double period_ns = round(1e9 / out->freq_hz);
		if (!(period_ns >= 1))
			return nt_err_invalid(err, errsz, "'%s': %g Hz is a period under 1 ns", s,
					      out->freq_hz);
		out->period_ns = (uint64_t)period_ns;
	}
	if (out->detour_ns >= out->period_ns) {
		char a[32], b[32];
		return nt_err_invalid(err, errsz, "'%s': a %s detour is not shorter than its period, "
				      "%s (%g Hz)", s, nt_fmt_duration(out->detour_ns, a),
				      nt_fmt_duration(out->period_ns, b), out->freq_hz);
	}
	return 0;
}

int nt_sim_parse_noise(const char *s, double *freq_hz, uint64_t *detour_ns, char *err,
		       size_t errsz)
{
	if (!s || !freq_hz || !detour_ns)
		return -EINVAL;
	struct nt_sim_noise_spec spec;
	int rc = nt_sim_parse_noise_spec(s, &spec, err, errsz);
	if (rc)
		return rc;
	*freq_hz = spec.freq_hz;
	*detour_ns = spec.detour_ns;
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
