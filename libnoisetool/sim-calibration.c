/* LogGP calibrations: repetitions combined with a robust rule (preempted ones and outliers
 * rejected), the "noisetool-loggp/1" file that keeps one, and which values are in use. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <noisetool-private/sim-calibration.h>

#include "errmsg.h"
#include "json-read.h"
#include "json-write.h"

static const char *const param_names[4] = { "L_ns", "o_ns", "g_ns", "G_ns_per_byte" };

static double *param_ptr(struct nt_sim_loggp *l, int i)
{
	return i == 0 ? &l->L_ns : i == 1 ? &l->o_ns : i == 2 ? &l->g_ns : &l->G_ns_per_byte;
}

static struct nt_loggp_spread *spread_ptr(struct nt_loggp_calib *c, int i)
{
	return i == 0 ? &c->L : i == 1 ? &c->o : i == 2 ? &c->g : &c->G;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v), n >= 1. */
static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int nt_loggp_combine(const struct nt_sim_loggp *reps, const bool *preempted, size_t n,
		     struct nt_loggp_calib *out, char *err, size_t errsz)
{
	if (!reps || !out || n == 0 || n > NT_LOGGP_MAX_REPS)
		return nt_err_invalid(err, errsz, "%zu repetitions: give 1 to %d", n,
				      NT_LOGGP_MAX_REPS);
	out->repetitions = (unsigned)n;
	out->preempted = 0;
	out->preempt_ignored = false;
	size_t need = n < NT_LOGGP_MIN_KEPT ? n : NT_LOGGP_MIN_KEPT;
	for (int p = 0; p < 4; p++) {
		double v[NT_LOGGP_MAX_REPS], dev[NT_LOGGP_MAX_REPS], kept[NT_LOGGP_MAX_REPS];
		size_t nv = 0;
		for (size_t i = 0; i < n; i++) {
			double x = *param_ptr((struct nt_sim_loggp *)&reps[i], p);
			if (!isfinite(x) || x < 0)
				return nt_err_invalid(err, errsz, "repetition %zu: %s is %g", i + 1,
						      param_names[p], x);
			if (!preempted || !preempted[i])
				v[nv++] = x;
		}
		if (p == 0)
			out->preempted = (unsigned)(n - nv);
		if (nv < need) { /* too few clean ones: the outlier rule alone decides */
			out->preempt_ignored = true;
			nv = 0;
			for (size_t i = 0; i < n; i++)
				v[nv++] = *param_ptr((struct nt_sim_loggp *)&reps[i], p);
		}
		double tmp[NT_LOGGP_MAX_REPS];
		memcpy(tmp, v, nv * sizeof *v);
		double m = median_of(tmp, nv);
		for (size_t i = 0; i < nv; i++)
			dev[i] = fabs(v[i] - m);
		double mad = median_of(dev, nv);
		double floor_abs = p == 3 ? NT_LOGGP_G_FLOOR : NT_LOGGP_NS_FLOOR;
		double tol = fmax(fmax(3 * 1.4826 * mad, 0.1 * m), floor_abs);
		size_t nk = 0;
		char vals[256] = "";
		size_t vl = 0;
		for (size_t i = 0; i < nv; i++) {
			if (fabs(v[i] - m) <= tol)
				kept[nk++] = v[i];
			if (vl < sizeof vals)
				vl += (size_t)snprintf(vals + vl, sizeof vals - vl, "%s%.4g", i ? " " : "",
						       v[i]);
		}
		if (nk < need)
			return nt_err_invalid(err, errsz, "%s: only %zu of %zu repetitions agree within "
					      "%.3g of the median %.4g (%s): too few to trust (at "
					      "least %zu)", param_names[p], nk, nv, tol, m, vals,
					      need);
		/* Kept values that still span more than half their median (and twice the floor) do
		 * not agree: three repetitions of G at 0.123, 1.5 and 2.93 ns/B. Twice: L is the
		 * half round trip less 2o, each moving in ~10 ns steps, so its values step by up
		 * to 20 ns on a quiet machine (0, 5.96, 5.96, 10.5, 15.5 ns in one CI run). */
		qsort(kept, nk, sizeof *kept, cmp_double);
		double span = kept[nk - 1] - kept[0], km = nk % 2 ? kept[nk / 2]
			: (kept[nk / 2 - 1] + kept[nk / 2]) / 2;
		if (span > fmax(0.5 * km, 2 * floor_abs))
			return nt_err_invalid(err, errsz, "%s: the repetitions disagree (%s): their "
					      "spread %.3g is more than half the median %.4g",
					      param_names[p], vals, span, km);
		struct nt_loggp_spread *s = spread_ptr(out, p);
		s->kept = (unsigned)nk;
		s->rejected = (unsigned)(n - nk);
		s->median = median_of(kept, nk); /* sorted now */
		s->min = kept[0];
		s->max = kept[nk - 1];
		for (size_t i = 0; i < nk; i++)
			dev[i] = fabs(kept[i] - s->median);
		s->mad = median_of(dev, nk);
		*param_ptr(&out->loggp, p) = s->median;
	}
	return 0;
}

int nt_loggp_write(FILE *f, const struct nt_loggp_calib *c)
{
	if (!f || !c)
		return -EIO;
	struct nt_json j;
	char line[128];
	snprintf(line, sizeof line, "%.4g,%.4g,%.4g,%.4g", c->loggp.L_ns, c->loggp.o_ns,
		 c->loggp.g_ns, c->loggp.G_ns_per_byte);
	nt_json_init(&j, f);
	nt_json_object_begin(&j, NULL);
	nt_json_string(&j, "schema", "noisetool-loggp/1");
	nt_json_string(&j, "loggp", line);
	nt_json_string(&j, "date", c->date);
	nt_json_string(&j, "host", c->host);
	nt_json_string(&j, "cpu", c->cpu);
	nt_json_string(&j, "mpi", c->mpi);
	nt_json_uint(&j, "repetitions", c->repetitions);
	nt_json_uint(&j, "preempted", c->preempted);
	for (int p = 0; p < 4; p++) {
		const struct nt_loggp_spread *s = spread_ptr((struct nt_loggp_calib *)c, p);
		nt_json_object_begin(&j, param_names[p]);
		nt_json_double(&j, "median", s->median);
		nt_json_double(&j, "min", s->min);
		nt_json_double(&j, "max", s->max);
		nt_json_double(&j, "mad", s->mad);
		nt_json_uint(&j, "kept", s->kept);
		nt_json_uint(&j, "rejected", s->rejected);
		nt_json_object_end(&j);
	}
	nt_json_object_end(&j);
	fputc('\n', f);
	return nt_json_finish(&j) || ferror(f) ? -EIO : 0;
}

/* The whole file at path (at most NT_LOGGP_FILE_MAX bytes), NUL-terminated, into *text. */
static int slurp(const char *path, char **text, size_t *len, char *err, size_t errsz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = 0;
	char *buf = NULL;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = nt_err_invalid(err, errsz, "not a regular file");
		goto out;
	}
	if (st.st_size > NT_LOGGP_FILE_MAX) {
		rc = nt_err_invalid(err, errsz, "%lld bytes: a LogGP file is at most %d",
				    (long long)st.st_size, NT_LOGGP_FILE_MAX);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			goto out;
		}
		if (r == 0 || (n += (size_t)r) > (size_t)st.st_size)
			break;
	}
	if (n > (size_t)st.st_size) {
		rc = nt_err_invalid(err, errsz, "the file grew while it was read");
		goto out;
	}
	buf[n] = 0;
	*text = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

static void copy_str(char *dst, size_t size, const struct nt_jvalue *v)
{
	snprintf(dst, size, "%s", v && v->type == NT_JSTRING ? v->string : "");
}

int nt_loggp_read(const char *path, struct nt_loggp_calib *out, char *err, size_t errsz)
{
	if (!path || !out)
		return -EINVAL;
	char *text = NULL;
	size_t len = 0;
	if (err && errsz)
		err[0] = 0;
	int rc = slurp(path, &text, &len, err, errsz);
	if (rc)
		return rc;
	struct nt_jvalue doc;
	char jerr[256];
	rc = nt_json_parse(text, len, &doc, jerr, sizeof jerr);
	free(text);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		return nt_err_invalid(err, errsz, "not a LogGP file: %s", jerr);
	*out = (struct nt_loggp_calib){ 0 };
	const struct nt_jvalue *schema = nt_jvalue_get(&doc, "schema");
	const struct nt_jvalue *lg = nt_jvalue_get(&doc, "loggp");
	const struct nt_jvalue *date = nt_jvalue_get(&doc, "date");
	char perr[256];
	if (!schema || schema->type != NT_JSTRING || strcmp(schema->string, "noisetool-loggp/1")) {
		rc = nt_err_invalid(err, errsz, "not a LogGP file: \"schema\" is not "
				    "\"noisetool-loggp/1\"");
	} else if (!lg || lg->type != NT_JSTRING ||
		   nt_sim_parse_loggp(lg->string, &out->loggp, perr, sizeof perr)) {
		rc = nt_err_invalid(err, errsz, "\"loggp\": %s", lg && lg->type == NT_JSTRING ?
				    perr : "missing or not a string \"L,o,g,G\"");
	} else if (!date || date->type != NT_JSTRING || !date->string[0]) {
		rc = nt_err_invalid(err, errsz, "\"date\" is missing");
	} else {
		copy_str(out->date, sizeof out->date, date);
		copy_str(out->host, sizeof out->host, nt_jvalue_get(&doc, "host"));
		copy_str(out->cpu, sizeof out->cpu, nt_jvalue_get(&doc, "cpu"));
		copy_str(out->mpi, sizeof out->mpi, nt_jvalue_get(&doc, "mpi"));
		const struct nt_jvalue *r = nt_jvalue_get(&doc, "repetitions");
		out->repetitions = r && r->type == NT_JNUMBER && r->number >= 0 && r->number <= 1e6
					   ? (unsigned)r->number : 0;
		for (int p = 0; p < 4; p++) {
			const struct nt_jvalue *o = nt_jvalue_get(&doc, param_names[p]);
			struct nt_loggp_spread *s = spread_ptr(out, p);
			const char *keys[] = { "median", "min", "max", "mad" };
			double *dst[] = { &s->median, &s->min, &s->max, &s->mad };
			for (int k = 0; k < 4; k++) {
				const struct nt_jvalue *x = nt_jvalue_get(o, keys[k]);
				*dst[k] = x && x->type == NT_JNUMBER ? x->number : NAN;
			}
		}
	}
	nt_jvalue_free(&doc);
	return rc;
}

int nt_loggp_default_path(char *buf, size_t size)
{
	if (!buf || size == 0)
		return -EINVAL;
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/noisetool/loggp.json", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.config/noisetool/loggp.json", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int nt_loggp_resolve(const char *file, struct nt_loggp_calib *out, enum nt_loggp_origin *origin,
		     char *path_out, size_t path_size, char *err, size_t errsz)
{
	if (!out || !origin || !path_out || path_size == 0)
		return -EINVAL;
	*out = (struct nt_loggp_calib){ .loggp = NT_SIM_LOGGP_DEFAULT };
	*origin = NT_LOGGP_BUILTIN;
	path_out[0] = 0;
	if (file) {
		snprintf(path_out, path_size, "%s", file);
	} else {
		if (nt_loggp_default_path(path_out, path_size) != 0) {
			path_out[0] = 0;
			return 0;
		}
		if (access(path_out, F_OK) != 0 && errno == ENOENT) {
			path_out[0] = 0;
			return 0;
		}
	}
	int rc = nt_loggp_read(path_out, out, err, errsz);
	if (rc == 0)
		*origin = NT_LOGGP_FILE;
	else if (rc != -EINVAL && err && errsz)
		snprintf(err, errsz, "%s", strerror(-rc));
	return rc;
}
