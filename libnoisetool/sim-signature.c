/* Signature files for the simulator: a `noisetool detour|ftq --json` document (periodic combs
 * and rare long detours per CPU) or a TSV trace, turned into node models of an nt_sim_noise. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/noise.h>
#include <noisetool/signature.h>
#include <noisetool/sim.h>

#include <noisetool-private/infile.h>

#include "errmsg.h"
#include "json-read.h"



/* A number member >= min, or a failure naming where. */
static int get_num(const struct nt_jvalue *obj, const char *key, double min, const char *where,
		   double *out, char *err, size_t errsz)
{
	const struct nt_jvalue *v = nt_jvalue_get(obj, key);
	if (!v || v->type != NT_JNUMBER)
		return nt_err_invalid(err, errsz, "%s: \"%s\" is missing or not a number", where, key);
	if (!(v->number >= min) || v->number > 1e18)
		return nt_err_invalid(err, errsz, "%s: \"%s\" is out of range (%g)", where, key, v->number);
	*out = v->number;
	return 0;
}

/* A count member: a whole number >= 0 (a fraction of a detour would make a rate of 10^-16 Hz,
 * whose Poisson window no integer holds), or a failure naming where. */
static int get_count(const struct nt_jvalue *obj, const char *key, const char *where, double *out,
		     char *err, size_t errsz)
{
	int rc = get_num(obj, key, 0, where, out, err, errsz);
	if (rc == 0 && *out != floor(*out))
		return nt_err_invalid(err, errsz, "%s: \"%s\" is not a whole number (%g)", where, key,
				      *out);
	return rc;
}

/* An array of at most NT_SIG_QUANTILES ascending whole numbers >= 0 into q, its length in *nq;
 * a missing key is 0 values. */
static int get_quantiles(const struct nt_jvalue *obj, const char *key, const char *where,
			 uint64_t *q, size_t *nq, char *err, size_t errsz)
{
	const struct nt_jvalue *a = nt_jvalue_get(obj, key);
	*nq = 0;
	if (!a)
		return 0;
	if (a->type != NT_JARRAY || a->n > NT_SIG_QUANTILES)
		return nt_err_invalid(err, errsz, "%s: \"%s\" is not an array of at most %d numbers",
				      where, key, NT_SIG_QUANTILES);
	for (size_t i = 0; i < a->n; i++) {
		const struct nt_jvalue *v = &a->items[i];
		if (v->type != NT_JNUMBER || !(v->number >= 0) || v->number > 3.6e12)
			return nt_err_invalid(err, errsz, "%s: \"%s\"[%zu] is not a length of 0 ns to "
					      "an hour", where, key, i);
		q[i] = (uint64_t)llround(v->number);
		if (i && q[i] < q[i - 1])
			return nt_err_invalid(err, errsz, "%s: \"%s\"[%zu] (%g) is below the one before",
					      where, key, i, v->number);
	}
	*nq = a->n;
	return 0;
}

/* A cpus[] entry with the model's inputs (doc/detour-json.md): each periodic component as a
 * partly hit comb of measured lengths, every other detour as a renewal process of measured
 * lengths and gaps whose gaps are scaled so that the model's share of time in detours is the
 * CPU's own, total_ns / elapsed_ns. */
static int load_cpu_model(struct nt_sim_noise *n, int model, const struct nt_jvalue *cpu,
			  const char *where, double elapsed, char *err, size_t errsz)
{
	double total, f, ph, hit, ptotal, members, oc, ot;
	uint64_t q[NT_SIG_QUANTILES], g[NT_SIG_QUANTILES];
	size_t nq, ng;
	int rc = get_num(cpu, "total_ns", 0, where, &total, err, errsz);
	if (rc)
		return rc;
	double measured = total / elapsed;
	if (measured >= 1)
		return nt_err_invalid(err, errsz, "%s: detours of %g ns in a run of %g ns leave no time "
				      "for work", where, total, elapsed);
	nt_sim_noise_set_measured(n, model, measured);
	const struct nt_jvalue *per = nt_jvalue_get(cpu, "periodic");
	for (size_t i = 0; i < per->n; i++) {
		char w[128];
		const struct nt_jvalue *p = &per->items[i];
		snprintf(w, sizeof w, "%s.periodic[%zu]", where, i);
		if ((rc = get_num(p, "freq_hz", 1e-6, w, &f, err, errsz)) ||
		    (rc = get_num(p, "phase_ns", 0, w, &ph, err, errsz)) ||
		    (rc = get_num(p, "hit_fraction", 0, w, &hit, err, errsz)) ||
		    (rc = get_num(p, "total_ns", 0, w, &ptotal, err, errsz)) ||
		    (rc = get_count(p, "count", w, &members, err, errsz)) ||
		    (rc = get_quantiles(p, "duration_quantiles_ns", w, q, &nq, err, errsz)))
			return rc;
		if (hit > 1)
			return nt_err_invalid(err, errsz, "%s: \"hit_fraction\" %g is above 1", w, hit);
		if (members < 1 || hit == 0 || nq == 0 || ptotal < 1)
			continue; /* nothing measured: nothing to model */
		double period = 1e9 / f;
		uint64_t phase = (uint64_t)fmod(ph, period);
		if (phase >= (uint64_t)llround(period))
			phase = 0;
		rc = nt_sim_noise_add_periodic(n, model, f, phase, hit, q, nq, ptotal / members);
		if (rc == -EINVAL)
			return nt_err_invalid(err, errsz, "%s: %g Hz hit on %.3g of its teeth for %g ns on "
					      "average fills the time", w, f, hit, ptotal / members);
		if (rc)
			return rc;
	}
	const struct nt_jvalue *o = nt_jvalue_get(cpu, "other");
	char w[128];
	snprintf(w, sizeof w, "%s.other", where);
	if ((rc = get_count(o, "count", w, &oc, err, errsz)) ||
	    (rc = get_num(o, "total_ns", 0, w, &ot, err, errsz)) ||
	    (rc = get_quantiles(o, "duration_quantiles_ns", w, q, &nq, err, errsz)) ||
	    (rc = get_quantiles(o, "gap_quantiles_ns", w, g, &ng, err, errsz)))
		return rc;
	if (oc < 1 || nq == 0 || ot < 1)
		return 0;
	/* One detour has no gaps: exponential ones, of the time left over the count. */
	double gap_mean = ng ? 0 : fmax(elapsed - total, 1) / oc;
	rc = nt_sim_noise_add_renewal(n, model, q, nq, ot / oc, g, ng, gap_mean, measured);
	if (rc == -EINVAL)
		return nt_err_invalid(err, errsz, "%s: %g detours of %g ns on average leave no time for "
				      "work", w, oc, ot / oc);
	return rc;
}

/* One cpus[] entry: a model with its combs and its rare long detours. */
static int load_cpu(struct nt_sim_noise *n, const struct nt_jvalue *cpu, size_t idx, char *err,
		    size_t errsz)
{
	char where[96];
	snprintf(where, sizeof where, "cpus[%zu]", idx);
	if (cpu->type != NT_JOBJECT)
		return nt_err_invalid(err, errsz, "%s is not an object", where);
	double elapsed;
	int rc = get_num(cpu, "elapsed_ns", 1, where, &elapsed, err, errsz);
	if (rc)
		return rc;
	int model = nt_sim_noise_add_model(n);
	if (model < 0)
		return model;
	/* Where this CPU's time axis starts in the run's (several CPUs measured at once; older
	 * signatures: 0), so that --sync puts every model's combs on the same axis. */
	const struct nt_jvalue *off = nt_jvalue_get(cpu, "start_offset_ns");
	double origin = 0;
	if (off && (rc = get_num(cpu, "start_offset_ns", 0, where, &origin, err, errsz)))
		return rc;
	nt_sim_noise_set_origin(n, model, (uint64_t)origin);
	const struct nt_jvalue *per = nt_jvalue_get(cpu, "periodic");
	if (!per || per->type != NT_JARRAY)
		return nt_err_invalid(err, errsz, "%s: \"periodic\" is missing or not an array", where);
	const struct nt_jvalue *other = nt_jvalue_get(cpu, "other");
	if (other && other->type == NT_JOBJECT) /* a signature that carries the model's inputs */
		return load_cpu_model(n, model, cpu, where, elapsed, err, errsz);
	double periodic_ns = 0; /* what the periodic members took, count x typical */
	for (size_t i = 0; i < per->n; i++) {
		char w[128];
		snprintf(w, sizeof w, "%s.periodic[%zu]", where, i);
		double f, typ, ph, members;
		if ((rc = get_num(&per->items[i], "freq_hz", 1e-9, w, &f, err, errsz)) ||
		    (rc = get_num(&per->items[i], "typical_ns", 0, w, &typ, err, errsz)) ||
		    (rc = get_num(&per->items[i], "phase_ns", 0, w, &ph, err, errsz)))
			return rc;
		/* The analysis keeps combs whose members fill as few as 20 % of their teeth: such a
		 * comb runs at its members' rate, count / elapsed, not at every tooth (beside a hog,
		 * 22 detours of 8 ms at 125 Hz in 0.5 s became 62 teeth, 100 % noise, refused). */
		if (nt_jvalue_get(&per->items[i], "count")) {
			if ((rc = get_count(&per->items[i], "count", w, &members, err, errsz)))
				return rc;
			if (members / (elapsed * 1e-9) < f)
				f = members / (elapsed * 1e-9);
			periodic_ns += members * typ;
		}
		uint64_t dur = (uint64_t)llround(typ);
		if (dur == 0 || f <= 0)
			continue;
		double period = 1e9 / f;
		uint64_t phase = (uint64_t)fmod(ph, period);
		if (phase >= (uint64_t)llround(period))
			phase = 0;
		rc = nt_sim_noise_add_comb(n, model, f, dur, phase);
		if (rc == -EINVAL)
			return nt_err_invalid(err, errsz, "%s: a %g ns detour at %g Hz is not shorter than its "
				    "period, or the CPU's noise adds up to 100 %%", w, typ, f);
		if (rc)
			return rc;
	}
	const struct nt_jvalue *rare = nt_jvalue_get(cpu, "rare_long");
	if (!rare || rare->type != NT_JOBJECT)
		return nt_err_invalid(err, errsz, "%s: \"rare_long\" is missing or not an object", where);
	snprintf(where, sizeof where, "cpus[%zu].rare_long", idx);
	double count, threshold;
	if ((rc = get_count(rare, "count", where, &count, err, errsz)) ||
	    (rc = get_num(rare, "threshold_ns", 0, where, &threshold, err, errsz)))
		return rc;
	const struct nt_jvalue *longest = nt_jvalue_get(rare, "longest");
	if (!longest || longest->type != NT_JARRAY)
		return nt_err_invalid(err, errsz, "%s: \"longest\" is missing or not an array", where);
	if (count < 1)
		return 0;
	double total = -1;
	char cpu_where[48];
	snprintf(cpu_where, sizeof cpu_where, "cpus[%zu]", idx);
	if (nt_jvalue_get(cpu, "total_ns") &&
	    (rc = get_num(cpu, "total_ns", 0, cpu_where, &total, err, errsz)))
		return rc;
	if (total >= 0)
		nt_sim_noise_set_measured(n, model, total / elapsed);
	size_t nd = longest->n ? longest->n : 1;
	uint64_t *dur = calloc(nd, sizeof *dur);
	if (!dur)
		return -ENOMEM;
	for (size_t i = 0; i < longest->n; i++) {
		char w[128];
		double d;
		snprintf(w, sizeof w, "%s.longest[%zu]", where, i);
		if ((rc = get_num(&longest->items[i], "duration_ns", 1, w, &d, err, errsz))) {
			free(dur);
			return rc;
		}
		dur[i] = (uint64_t)llround(d);
	}
	if (longest->n == 0) { /* only the count: take the threshold as their length */
		if (threshold < 1) {
			free(dur);
			return nt_err_invalid(err, errsz, "%s: a count but neither detours nor a threshold",
				    where);
		}
		dur[0] = (uint64_t)llround(threshold);
	}
	/* Only the 16 longest are listed. Drawing every one of count from them overstates the
	 * noise (63 detours beside a hog: 126 %, refused): with the run's total_ns, the listed ones
	 * keep their rate, and the others take one length, what total_ns leaves after the periodic
	 * members and the listed ones, within [threshold_ns, the shortest listed]. */
	double listed = longest->n && count > (double)longest->n && total >= 0 ? (double)longest->n
									       : count;
	double rest_ns = 0, shortest = (double)dur[0], listed_ns = 0;
	for (size_t i = 0; i < longest->n; i++) {
		shortest = fmin(shortest, (double)dur[i]);
		listed_ns += (double)dur[i];
	}
	if (listed < count) {
		rest_ns = (total - periodic_ns - listed_ns) / (count - listed);
		rest_ns = fmin(fmax(rest_ns, fmax(threshold, 1)), shortest);
	}
	rc = nt_sim_noise_add_rare(n, model, listed / (elapsed * 1e-9), dur, nd);
	if (rc == 0 && listed < count) {
		uint64_t each = (uint64_t)llround(rest_ns);
		rc = nt_sim_noise_add_rare(n, model, (count - listed) / (elapsed * 1e-9), &each, 1);
	}
	free(dur);
	if (rc == -EINVAL)
		return nt_err_invalid(err, errsz, "%s: %g detours in %g ns leave no time for work", where,
			    count, elapsed);
	return rc;
}

static int load_json(struct nt_sim_noise *n, const char *text, size_t len, char *err,
		     size_t errsz)
{
	struct nt_jvalue doc;
	int rc = nt_json_parse(text, len, &doc, err, errsz);
	if (rc)
		return rc;
	const struct nt_jvalue *schema = nt_jvalue_get(&doc, "schema");
	const struct nt_jvalue *cpus = nt_jvalue_get(&doc, "cpus");
	if (doc.type != NT_JOBJECT || !schema || schema->type != NT_JSTRING ||
	    strcmp(schema->string, "noisetool-noise/1") != 0)
		rc = nt_err_invalid(err, errsz, "not a noise signature (\"schema\": \"noisetool-noise/1\")");
	else if (!cpus || cpus->type != NT_JARRAY || cpus->n == 0)
		rc = nt_err_invalid(err, errsz, "\"cpus\" is missing, not an array or empty");
	size_t before = nt_sim_noise_models(n);
	for (size_t i = 0; rc == 0 && i < cpus->n; i++)
		rc = load_cpu(n, &cpus->items[i], i, err, errsz);
	nt_jvalue_free(&doc);
	return rc ? rc : (int)(nt_sim_noise_models(n) - before);
}

static int load_tsv(struct nt_sim_noise *n, FILE *f, char *err, size_t errsz)
{
	struct nt_detour *d = NULL;
	size_t nd = 0;
	struct nt_trace_axis axis;
	char why[200] = "";
	int rc = nt_trace_read_axis(f, &d, &nd, &axis, why, sizeof why);
	uint64_t elapsed = axis.elapsed_ns;
	if (rc == -EINVAL)
		return nt_err_invalid(err, errsz, "%s", why[0] ? why : "not a start_ns<TAB>duration_ns trace");
	if (rc)
		return rc;
	if (nd == 0) {
		free(d);
		return nt_err_invalid(err, errsz, "no detours in the trace");
	}
	uint64_t busy = 0, last = 0;
	for (size_t i = 0; i < nd; i++) {
		busy += d[i].duration_ns;
		if (d[i].start_ns + d[i].duration_ns > last)
			last = d[i].start_ns + d[i].duration_ns;
	}
	int model = nt_sim_noise_add_model(n);
	rc = model < 0 ? model : nt_sim_noise_add_trace_loop(n, model, d, nd, elapsed);
	free(d);
	if (rc == 0)
		nt_sim_noise_set_origin(n, model, axis.start_offset_ns);
	if (rc == -EINVAL)
		return nt_err_invalid(err, errsz, "the trace's detours (%llu ns) leave no time for "
				      "work in its %llu ns", (unsigned long long)busy,
				      (unsigned long long)(elapsed > last ? elapsed : last));
	if (rc == 0)
		nt_sim_noise_set_measured(n, model, (double)busy / (double)(elapsed > last ? elapsed
											    : last));
	return rc ? rc : 1;
}

int nt_sim_noise_load(struct nt_sim_noise *n, const char *path, char *err, size_t errsz)
{
	if (!n || !path)
		return -EINVAL;
	if (err && errsz)
		err[0] = 0;
	char *buf;
	size_t len;
	/* A regular file, or a pipe read to its end (`--signature <(noisetool detour --json -)`);
	 * a FIFO that no one writes reads as empty, a device is refused unread. */
	int rc = nt_infile_read(path, true, NT_INFILE_DOC_MAX, &buf, &len);
	if (rc == -ENODEV)
		return nt_err_invalid(err, errsz, "not a regular file or pipe");
	if (rc == -EFBIG)
		return nt_err_invalid(err, errsz, "larger than %u MiB", NT_INFILE_DOC_MAX >> 20);
	if (rc) {
		if (err && errsz)
			snprintf(err, errsz, "%s", strerror(-rc));
		return rc;
	}
	size_t at = strspn(buf, " \t\n\r");
	if (at == len) {
		rc = nt_err_invalid(err, errsz, "empty file");
	} else if (buf[at] == '{') {
		rc = load_json(n, buf, len, err, errsz);
	} else {
		FILE *f = fmemopen(buf, len, "r");
		rc = f ? load_tsv(n, f, err, errsz) : -ENOMEM;
		if (f)
			fclose(f);
	}
	free(buf);
	return rc;
}
