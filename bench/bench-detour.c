/* Resolution of the selfish-detour loop: its t_min against a bare back-to-back counter loop,
 * measured in the same run, alternating A/B, on one pinned CPU. Budget: ratio <= 1.2. */
#include <stdio.h>
#include <stdlib.h>

#include <noisetool/clock.h>
#include <noisetool/detour.h>
#include <noisetool/sysinfo.h>

#include "percentile.h"

/* Mean cost of one iteration of the barest loop: counter reads and a minimum, no histogram. */
static double pure_loop_ns(uint64_t iterations, uint64_t *min_out)
{
	uint64_t min = UINT64_MAX, start = nt_clock_now_cyc(), cur = start;
	for (uint64_t i = 0; i < iterations; i++) {
		uint64_t prev = cur;
		cur = nt_clock_now_cyc();
		if (cur - prev < min)
			min = cur - prev;
	}
	*min_out = min;
	return nt_clock_cyc_to_ns(cur - start) / (double)iterations;
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 7;
	double seconds = argc > 2 ? atof(argv[2]) : 0.5;
	if (pairs < 1 || !(seconds > 0)) {
		fprintf(stderr, "usage: bench-detour [PAIRS [SECONDS]]\n");
		return 2;
	}
	int cpus[1024];
	int n = nt_allowed_cpus(cpus, 1024);
	int cpu = n > 0 ? cpus[n - 1] : 0;
	if (nt_pin_self(cpu) != 0) {
		fprintf(stderr, "bench-detour: cannot pin to CPU %d\n", cpu);
		return 1;
	}
	nt_clock_init();
	const struct nt_clock_info *ci = nt_clock_get_info();
	printf("bench-detour: CPU %d, %s %.1f MHz, %d pairs of %.2f s, alternating\n\n", cpu,
	       nt_clock_source_name(ci->source), ci->hz / 1e6, pairs, seconds);
	printf("%4s  %14s %14s %7s   %12s %12s   %13s %13s %13s\n", "pair", "detour t_min",
	       "bare t_min", "ratio", "detour raw", "bare raw", "detour ns/it", "bare ns/it",
	       "pure ns/it");

	double *ratios = calloc((size_t)pairs, sizeof *ratios);
	for (int p = 0; p < pairs; p++) {
		struct nt_detour_config cfg = { .seconds = seconds, .cpu = cpu };
		struct nt_detour_result res;
		struct nt_loop_timing bare;
		/* Alternate which loop goes first. */
		if (p % 2 == 0) {
			if (nt_detour_measure(&cfg, &res) != 0)
				return 1;
			nt_detour_bare_loop(res.iterations, &bare);
		} else {
			nt_detour_bare_loop((uint64_t)(seconds * 1e9 / 10), &bare);
			if (nt_detour_measure(&cfg, &res) != 0)
				return 1;
		}
		uint64_t pure_min;
		double pure = pure_loop_ns(res.iterations, &pure_min);
		double a = nt_clock_cyc_to_ns(res.t_min_cyc), b = nt_clock_cyc_to_ns(bare.t_min_cyc);
		ratios[p] = b > 0 ? a / b : 0;
		printf("%4d  %11.2f ns %11.2f ns %7.3f   %9.2f ns %9.2f ns   %10.2f ns %10.2f ns %10.2f ns\n",
		       p + 1, a, b, ratios[p], nt_clock_cyc_to_ns(res.t_min_raw_cyc),
		       nt_clock_cyc_to_ns(bare.raw_min_cyc),
		       (double)res.elapsed_ns / (double)res.iterations,
		       nt_clock_cyc_to_ns(1) * bare.mean_cyc, pure);
		nt_detour_result_free(&res);
	}
	nt_sort_double(ratios, (size_t)pairs);
	double med = ratios[pairs / 2];
	printf("\nmedian t_min ratio detour/bare: %.3f (budget <= 1.200): %s\n", med,
	       med <= 1.2 ? "within budget" : "OVER BUDGET");
	printf("t_min: median of every 64th gap (raw: the plain minimum, a counter artefact here);\n"
	       "ns/it: mean iteration; pure: counter reads and a minimum only, no histogram\n");
	free(ratios);
	return med <= 1.2 ? 0 : 1;
}
