/* The simulator's budgets (DESIGN §5): events per second on one core (>= 5 M), a 2^21-rank
 * allreduce with noise (< 10 s), bytes per simulated rank from the maximum RSS (<= 200); with a
 * signature file (issue 17), a signature-driven model on one core, and a 2^LOG2_BIG-rank
 * allreduce with it on every CPU (< 60 s, <= 64 bytes per rank). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <noisetool/sim.h>

static double max_rss_bytes(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss * 1024.0; /* Linux: KiB */
}

/* A signature-like node: two combs and rare long detours (the generic union path). */
static int signature_noise(struct nt_sim_noise *n)
{
	uint64_t rare[] = { 150000, 220848 };
	int m = nt_sim_noise_add_model(n);
	if (m < 0 || nt_sim_noise_add_comb(n, m, 250, 16705, 3630184) ||
	    nt_sim_noise_add_comb(n, m, 100, 20340, 7486010) ||
	    nt_sim_noise_add_rare(n, m, 0.2, rare, 2))
		return -1;
	return 0;
}

static void row(const char *what, const struct nt_sim_result *r)
{
	printf("%-52s %9llu %10.4f %12.3g %9.3f\n", what, (unsigned long long)r->ranks,
	       r->magnification, r->events_per_s, r->seconds);
}

int main(int argc, char **argv)
{
	int log2_ranks = argc > 1 ? atoi(argv[1]) : 21;
	const char *sig_path = argc > 2 ? argv[2] : NULL;
	int log2_big = argc > 3 ? atoi(argv[3]) : 24;
	if (log2_ranks < 10 || log2_ranks > 26 || log2_big < 10 || log2_big > 26) {
		fprintf(stderr, "usage: bench-sim [LOG2_RANKS (10..26, default 21) [SIGNATURE.json "
				"[LOG2_BIG (default 24)]]]\n");
		return 2;
	}
	uint64_t ranks = 1ull << log2_ranks;
	struct nt_sim_noise *periodic, *sig;
	if (nt_sim_noise_new(&periodic) || nt_sim_noise_new(&sig) || signature_noise(sig)) {
		fprintf(stderr, "bench-sim: cannot build the noise models\n");
		return 1;
	}
	int m = nt_sim_noise_add_model(periodic);
	if (m < 0 || nt_sim_noise_add_comb(periodic, m, 1000, 25000, 0)) {
		fprintf(stderr, "bench-sim: cannot build the noise models\n");
		return 1;
	}
	nt_sim_noise_set_sync(periodic, false, 1);
	nt_sim_noise_set_sync(sig, false, 1);
	double rss0 = max_rss_bytes();

	printf("bench-sim: one core, LogGP defaults, unsync noise, seed 1; each run simulates "
	       "the job noise-free and noisy\n\n");
	printf("%-52s %9s %10s %12s %9s\n", "run", "ranks", "magnif.", "events/s", "seconds");
	struct nt_sim_config cfg = { .collective = NT_SIM_ALLREDUCE, .bytes = 8,
				     .loggp = NT_SIM_LOGGP_DEFAULT, .iterations = 1,
				     .noise = periodic, .threads = 1 };
	struct nt_sim_result big, r;
	if (nt_sim_run(&cfg, ranks, &big)) {
		fprintf(stderr, "bench-sim: out of memory\n");
		return 1;
	}
	double rss = max_rss_bytes();
	row("allreduce, 1 kHz x 25 us", &big);
	double worst_eps = big.events_per_s;

	cfg.noise = sig;
	cfg.collective = NT_SIM_BARRIER;
	cfg.iterations = 4;
	cfg.compute_ns = 100000;
	if (nt_sim_run(&cfg, ranks / 2, &r) == 0) {
		row("barrier, 4 x (100 us + barrier), 2 combs + rare", &r);
		worst_eps = r.events_per_s < worst_eps ? r.events_per_s : worst_eps;
	}
	cfg.noise = periodic;
	cfg.collective = NT_SIM_ALLTOALL;
	cfg.iterations = 1;
	cfg.compute_ns = 0;
	if (nt_sim_run(&cfg, ranks / 2, &r) == 0) {
		row("alltoall (bruck), 1 kHz x 25 us", &r);
		worst_eps = r.events_per_s < worst_eps ? r.events_per_s : worst_eps;
	}
	cfg.collective = NT_SIM_BCAST;
	if (nt_sim_run(&cfg, ranks, &r) == 0) {
		row("bcast (binomial), 1 kHz x 25 us", &r);
		worst_eps = r.events_per_s < worst_eps ? r.events_per_s : worst_eps;
	}

	/* A signature-driven model (partly hit combs, a renewal process, per-rank state): one core
	 * at LOG2_RANKS, then every CPU at LOG2_BIG. */
	struct nt_sim_noise *file = NULL;
	struct nt_sim_result sig1 = { 0 }, sigbig = { 0 };
	double sig_per_rank = 0;
	bool ok_sig = true;
	if (sig_path) {
		char err[256] = "";
		if (nt_sim_noise_new(&file) || nt_sim_noise_load(file, sig_path, err, sizeof err) < 1) {
			fprintf(stderr, "bench-sim: %s: %s\n", sig_path, err);
			return 1;
		}
		nt_sim_noise_set_sync(file, false, 1);
		cfg = (struct nt_sim_config){ .collective = NT_SIM_ALLREDUCE, .bytes = 8,
					      .loggp = NT_SIM_LOGGP_DEFAULT, .iterations = 1,
					      .compute_ns = 1000000, .noise = file, .threads = 1 };
		char what[96];
		if (nt_sim_run(&cfg, ranks, &sig1) == 0) {
			snprintf(what, sizeof what, "allreduce, 1 ms + allreduce, signature, 1 thread");
			row(what, &sig1);
			worst_eps = sig1.events_per_s < worst_eps ? sig1.events_per_s : worst_eps;
		}
		cfg.threads = 0;
		if (nt_sim_run(&cfg, 1ull << log2_big, &sigbig)) {
			fprintf(stderr, "bench-sim: out of memory at 2^%d ranks\n", log2_big);
			return 1;
		}
		snprintf(what, sizeof what, "the same, %u threads", sigbig.threads);
		row(what, &sigbig);
		sig_per_rank = max_rss_bytes() / (double)(1ull << log2_big);
		ok_sig = sigbig.seconds < 60 && sig_per_rank <= 64;
	}

	double per_rank = rss / (double)ranks;
	bool ok_eps = worst_eps >= 5e6, ok_time = big.seconds < 10, ok_mem = per_rank <= 200;
	printf("\n%-52s %14s %14s\n", "budget", "measured", "limit");
	printf("%-52s %14.3g %14s  %s\n", "events/s on one core (slowest run above)", worst_eps,
	       ">= 5e6", ok_eps ? "ok" : "OVER BUDGET");
	char what[96];
	snprintf(what, sizeof what, "2^%d-rank allreduce with noise, seconds", log2_ranks);
	printf("%-52s %14.3f %14s  %s\n", what, big.seconds, "< 10", ok_time ? "ok" : "OVER BUDGET");
	printf("%-52s %14.1f %14s  %s\n", "bytes per simulated rank (max RSS / ranks)", per_rank,
	       "<= 200", ok_mem ? "ok" : "OVER BUDGET");
	if (sig_path) {
		snprintf(what, sizeof what, "2^%d-rank allreduce, signature model, seconds", log2_big);
		printf("%-52s %14.3f %14s  %s\n", what, sigbig.seconds, "< 60",
		       sigbig.seconds < 60 ? "ok" : "OVER BUDGET");
		printf("%-52s %14.1f %14s  %s\n", "bytes per rank with it (max RSS / ranks)",
		       sig_per_rank, "<= 64", sig_per_rank <= 64 ? "ok" : "OVER BUDGET");
	}
	printf("(max RSS %.1f MiB, of which %.1f MiB before the first run; signature: %s)\n",
	       rss / 1048576, rss0 / 1048576, sig_path ? sig_path : "none");
	nt_sim_noise_free(periodic);
	nt_sim_noise_free(sig);
	nt_sim_noise_free(file);
	return ok_eps && ok_time && ok_mem && ok_sig ? 0 : 1;
}
