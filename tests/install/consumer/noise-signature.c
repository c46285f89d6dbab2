/* A node's noise signature measured, kept and simulated by a program outside libnoisetool, built
 * as such a program builds it (pkg-config libnoisetool, the installed headers alone): the
 * detour loop on this thread, its analysis, the JSON document `noisetool detour --json` writes,
 * that file read back as the simulator's noise model, and an 8-byte allreduce on 1024 ranks
 * under it against the same without noise.
 *
 *   noise-signature [SECONDS [FILE]]     (default 0.3 s, noise-signature.json)
 *
 * Prints one line; exits 1 when a call fails or a result is impossible. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>
#include <noisetool/detour.h>
#include <noisetool/noise.h>
#include <noisetool/sim.h>
#include <noisetool/sysinfo.h>

static int fail(const char *what, int rc)
{
	fprintf(stderr, "noise-signature: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	return 1;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	const char *path = argc > 2 ? argv[2] : "noise-signature.json";
	int rc = nt_clock_init();
	if (rc != 0)
		return fail("nt_clock_init", rc);

	/* 1. Measure and analyse, as `noisetool detour` does for one CPU. */
	struct nt_detour_config cfg = { .seconds = seconds, .cpu = -1 };
	struct nt_detour_result res;
	if ((rc = nt_detour_measure(&cfg, &res)) != 0)
		return fail("nt_detour_measure", rc);
	struct nt_cpu_noise cpu = {
		.cpu = res.cpu,
		.os = res.os,
		.t_min_ns = res.t_min_ns,
		.t_min_raw_ns = nt_clock_cyc_to_ns(res.t_min_raw_cyc),
		.elapsed_ns = res.elapsed_ns,
		.iterations = res.iterations,
		.dropped = res.dropped,
		.classified = res.classified,
		.detours = res.detours,
		.ndetours = res.count,
	};
	if ((rc = nt_cpu_noise_analyze(&cpu)) != 0)
		return fail("nt_cpu_noise_analyze", rc);
	if (res.iterations == 0 || res.t_min_ns <= 0 || cpu.stats.count != res.count)
		return fail("the measurement is impossible", EINVAL);

	/* 2. Keep it as a signature file. */
	struct nt_node_noise node = {
		.method = "detour",
		.seconds = seconds,
		.threshold_ns = res.threshold_ns,
		.clock = *nt_clock_get_info(),
		.ncpus = 1,
		.cpus = &cpu,
	};
	nt_sysinfo_collect(&node.sys);
	FILE *f = fopen(path, "w");
	if (!f)
		return fail(path, errno);
	rc = nt_node_noise_write_json(f, &node);
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc != 0)
		return fail("nt_node_noise_write_json", rc);

	/* 3. Simulate with it: the file as the node model of every rank. */
	struct nt_sim_noise *noise;
	char err[256];
	if ((rc = nt_sim_noise_new(&noise)) != 0)
		return fail("nt_sim_noise_new", rc);
	if ((rc = nt_sim_noise_load(noise, path, err, sizeof err)) < 1) {
		fprintf(stderr, "noise-signature: nt_sim_noise_load %s: %s\n", path, err);
		return 1;
	}
	struct nt_sim_config sim = {
		.collective = NT_SIM_ALLREDUCE,
		.bytes = 8,
		.loggp = NT_SIM_LOGGP_DEFAULT,
		.iterations = 100,
		.compute_ns = 100000,
		.noise = noise,
		.threads = 1,
	};
	struct nt_sim_result out;
	if (nt_sim_check(&sim, 1024, err, sizeof err) != 0) {
		fprintf(stderr, "noise-signature: nt_sim_check: %s\n", err);
		return 1;
	}
	if ((rc = nt_sim_run(&sim, 1024, &out)) != 0)
		return fail("nt_sim_run", rc);
	if (out.time_ns_noise_free == 0 || out.time_ns_noisy < out.time_ns_noise_free)
		return fail("the simulation is impossible", EINVAL);

	printf("noise-signature: %zu detours in %.2f s (t_min %.1f ns, noise %.4f %%); "
	       "model share %.4f %%; allreduce on 1024 ranks: %.3fx\n",
	       res.count, (double)res.elapsed_ns / 1e9, res.t_min_ns,
	       100.0 * cpu.stats.noise_ratio, 100.0 * nt_sim_noise_ratio(noise, 0),
	       out.magnification);
	nt_sim_noise_free(noise);
	nt_detour_result_free(&res);
	return 0;
}
