/* The simulator's writers: the table and the JSON document (doc/simulate.md). */
#include "nt-config.h"

#include <errno.h>
#include <math.h>

#include <noisetool/sim.h>

#include "json-write.h"

static enum nt_sim_algorithm algorithm(const struct nt_sim_config *cfg)
{
	return cfg->algorithm ? cfg->algorithm : nt_sim_default_algorithm(cfg->collective);
}

int nt_sim_write_json(FILE *f, const struct nt_sim_report *rep)
{
	if (!f || !rep || !rep->cfg)
		return -EINVAL;
	const struct nt_sim_config *c = rep->cfg;
	struct nt_json j;
	nt_json_init(&j, f);
	nt_json_object_begin(&j, NULL);
	nt_json_string(&j, "schema", "noisetool-simulate/1");
	nt_json_string(&j, "version", NT_VERSION);
	nt_json_string(&j, "collective", nt_sim_collective_name(c->collective));
	nt_json_string(&j, "algorithm", nt_sim_algorithm_name(algorithm(c)));
	nt_json_uint(&j, "bytes", c->bytes);
	nt_json_uint(&j, "iterations", c->iterations);
	nt_json_uint(&j, "compute_ns", c->compute_ns);
	nt_json_object_begin(&j, "loggp");
	nt_json_double(&j, "L_ns", c->loggp.L_ns);
	nt_json_double(&j, "o_ns", c->loggp.o_ns);
	nt_json_double(&j, "g_ns", c->loggp.g_ns);
	nt_json_double(&j, "G_ns_per_byte", c->loggp.G_ns_per_byte);
	nt_json_object_end(&j);
	nt_json_object_begin(&j, "noise");
	if (rep->nsignatures) {
		nt_json_string(&j, "kind", "signature");
		nt_json_array_begin(&j, "files");
		for (size_t i = 0; i < rep->nsignatures; i++)
			nt_json_string(&j, NULL, rep->signatures[i]);
		nt_json_array_end(&j);
		/* Each node model's noise share: the signature's own (null when the file does
		 * not say) and the model's. */
		nt_json_array_begin(&j, "models");
		for (size_t m = 0; c->noise && m < nt_sim_noise_models(c->noise); m++) {
			nt_json_object_begin(&j, NULL);
			nt_json_double(&j, "measured_noise", /* NAN: null */
				       nt_sim_noise_measured_ratio(c->noise, (int)m));
			nt_json_double(&j, "simulated_noise", nt_sim_noise_ratio(c->noise, (int)m));
			nt_json_object_end(&j);
		}
		nt_json_array_end(&j);
	} else if (rep->freq_hz > 0) {
		nt_json_string(&j, "kind", "periodic");
		nt_json_double(&j, "freq_hz", rep->freq_hz);
		/* In the one noise vocabulary (doc/simulate.md): the detour's length and the
		 * interval between detours; "period_ns" is the old name of the length, kept for
		 * readers of earlier documents. */
		nt_json_uint(&j, "detour_ns", rep->detour_ns);
		nt_json_uint(&j, "interval_ns", (uint64_t)llround(1e9 / rep->freq_hz));
		nt_json_uint(&j, "period_ns", rep->detour_ns);
	} else {
		nt_json_string(&j, "kind", "none");
	}
	nt_json_object_end(&j);
	nt_json_bool(&j, "sync", rep->sync);
	nt_json_uint(&j, "seed", rep->seed);
	nt_json_array_begin(&j, "results");
	for (size_t i = 0; i < rep->nresults; i++) {
		const struct nt_sim_result *r = &rep->results[i];
		nt_json_object_begin(&j, NULL);
		nt_json_uint(&j, "ranks", r->ranks);
		nt_json_uint(&j, "time_ns_noise_free", r->time_ns_noise_free);
		nt_json_uint(&j, "time_ns_noisy", r->time_ns_noisy);
		nt_json_double(&j, "magnification", r->magnification);
		nt_json_uint(&j, "events", r->events);
		nt_json_double(&j, "events_per_s", r->events_per_s);
		nt_json_double(&j, "seconds", r->seconds);
		nt_json_uint(&j, "threads", r->threads);
		nt_json_object_end(&j);
	}
	nt_json_array_end(&j);
	nt_json_object_end(&j);
	fputc('\n', f);
	return nt_json_finish(&j) || ferror(f) ? -EIO : 0;
}

int nt_sim_write_text(FILE *f, const struct nt_sim_report *rep)
{
	if (!f || !rep || !rep->cfg)
		return -EINVAL;
	const struct nt_sim_config *c = rep->cfg;
	fprintf(f, "%s (%s), %llu B, %llu iteration%s of %.3f us compute + the collective\n",
		nt_sim_collective_name(c->collective), nt_sim_algorithm_name(algorithm(c)),
		(unsigned long long)c->bytes, (unsigned long long)c->iterations,
		c->iterations == 1 ? "" : "s", (double)c->compute_ns * 1e-3);
	fprintf(f, "LogGP L %g ns, o %g ns, g %g ns, G %g ns/B; noise: ", c->loggp.L_ns,
		c->loggp.o_ns, c->loggp.g_ns, c->loggp.G_ns_per_byte);
	if (rep->nsignatures) {
		for (size_t i = 0; i < rep->nsignatures; i++)
			fprintf(f, "%s%s", i ? "," : "", rep->signatures[i]);
	} else if (rep->freq_hz > 0) {
		fprintf(f, "%g Hz x %.3f us (%.3g %%)", rep->freq_hz, (double)rep->detour_ns * 1e-3,
			rep->freq_hz * (double)rep->detour_ns * 1e-7);
	} else {
		fprintf(f, "none");
	}
	fprintf(f, ", %s, seed %llu\n", rep->sync ? "sync" : "unsync",
		(unsigned long long)rep->seed);
	/* A signature's own noise share beside the model's: they agree within 2 % absolute
	 * (doc/simulate.md, "The noise model from a signature"). */
	size_t models = c->noise && rep->nsignatures ? nt_sim_noise_models(c->noise) : 0;
	if (models) {
		fprintf(f, "noise share of a rank's time, measured / simulated:");
		for (size_t m = 0; m < models && m < 8; m++) {
			double meas = nt_sim_noise_measured_ratio(c->noise, (int)m);
			double sim = nt_sim_noise_ratio(c->noise, (int)m);
			if (isnan(meas))
				fprintf(f, " model %zu -/%.4f%s", m, sim, m + 1 < models ? "," : "");
			else
				fprintf(f, " model %zu %.4f/%.4f%s", m, meas, sim,
					m + 1 < models ? "," : "");
		}
		fprintf(f, "%s\n", models > 8 ? " ..." : "");
	}
	fputc('\n', f);
	fprintf(f, "%10s %16s %16s %9s %14s %12s %9s %7s\n", "ranks", "noise-free us", "noisy us",
		"magnif.", "events", "events/s", "seconds", "threads");
	for (size_t i = 0; i < rep->nresults; i++) {
		const struct nt_sim_result *r = &rep->results[i];
		fprintf(f, "%10llu %16.3f %16.3f %9.4f %14llu %12.3g %9.3f %7u\n",
			(unsigned long long)r->ranks, (double)r->time_ns_noise_free * 1e-3,
			(double)r->time_ns_noisy * 1e-3, r->magnification,
			(unsigned long long)r->events, r->events_per_s, r->seconds, r->threads);
	}
	return ferror(f) ? -EIO : 0;
}
