/* Collectives under injected noise (Beckman et al. 2006, section 4): barrier, allreduce and
 * alltoall timed without noise, then with the same noise ratio injected as short frequent or
 * long rare detours, synchronized (every rank at the same global times) or not (each rank its
 * own random phase). Prints the execution-time magnification: the mean time per call with
 * noise over the mean time without. The three runs of a cell alternate in rounds (quiet, sync,
 * unsync, quiet, ...) and each gives the median of its rounds, so that the machine's own slow
 * spells do not land on one of them only. Then what the injector did: its own count and spun
 * time against the periods that passed and the time each rank spent off its CPU. With --json,
 * the same tables as a JSON document (`noisetool plot coll-noise` draws it). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "../launch.h"

#include <noisetool/clock.h>
#include <noisetool/inject.h>
#include <noisetool/outfile.h>

static const char usage[] =
	"Usage: coll-noise [--seconds S] [--ratio PCT | --intervals MS,MS,...] [--detours US,...]\n"
	"                  [--seed N] [--json FILE]\n"
	"\n"
	"Run under " EX_MPIEXEC ", one rank per core (" EX_BIND "). For each collective (barrier,\n"
	"allreduce and alltoall of 8 bytes per rank) and each detour length, inject noise of the\n"
	"given ratio (a detour every detour/ratio) on every rank, synchronized and not, and print\n"
	"the magnification of the mean time per call over the quiet run; then, for every noisy\n"
	"cell, what the injector did on all ranks in all rounds.\n"
	"\n"
	"  --seconds S     time per measurement, in 5 alternating rounds (default 1)\n"
	"  --ratio PCT     noise ratio in percent (default 2): interval = detour / ratio\n"
	"  --intervals L   instead, every detour at each of these intervals in ms (a grid of\n"
	"                  detour lengths x intervals, as Beckman et al.'s Figure 6)\n"
	"  --detours LIST  detour lengths in us (default 20,100,500)\n"
	"  --seed N        seed of the unsynchronized phases (default 42)\n"
	"  --json FILE     also write both tables as JSON (schema noisetool-coll-noise/1,\n"
	"                  doc/html.md), opened before the first measurement\n"
	"\n"
	"A cell whose interval is under 1 ms, or whose detour takes more than 90 % of it, is\n"
	"skipped with a note (the injector's bounds, doc/environment.md).\n";

enum coll { BARRIER, ALLREDUCE, ALLTOALL, NCOLL };
static const char *const coll_name[NCOLL] = { "barrier", "allreduce", "alltoall" };

static int rank, size;
static double *sendbuf, *recvbuf;

static void call(enum coll c)
{
	double x = rank, y;
	switch (c) {
	case BARRIER:
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	case ALLREDUCE:
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		break;
	default:
		MPI_Alltoall(sendbuf, 1, MPI_DOUBLE, recvbuf, 1, MPI_DOUBLE, MPI_COMM_WORLD);
		break;
	}
}

/* Rank 0's CLOCK_MONOTONIC minus ours, from the ping-pong with the smallest round trip (the
 * synchronized injection phases on rank 0's clock). */
static int64_t offset_to_rank0(void)
{
	int64_t best = 0;
	for (int r = 1; r < size; r++) {
		double best_rtt = 1e300;
		for (int i = 0; i < 32; i++) {
			if (rank == r) {
				double t0 = (double)nt_clock_monotonic_ns(), tp;
				MPI_Send(&t0, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
				MPI_Recv(&tp, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				double t1 = (double)nt_clock_monotonic_ns();
				if (t1 - t0 < best_rtt) {
					best_rtt = t1 - t0;
					best = (int64_t)(tp - (t0 + t1) / 2);
				}
			} else if (rank == 0) {
				double t0, tp;
				MPI_Recv(&t0, 1, MPI_DOUBLE, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				tp = (double)nt_clock_monotonic_ns();
				MPI_Send(&tp, 1, MPI_DOUBLE, r, 1, MPI_COMM_WORLD);
			}
		}
	}
	return best;
}

/* What the injector did in the noisy runs of one cell (one mode), summed over runs (and, on
 * rank 0 after the reduction, over ranks). Its timer fires once per period; an expiration is
 * lost only while the previous one is still pending, that is while the rank is off its CPU
 * (or the host stalls the virtual CPU, which the guest cannot see). */
struct injected {
	double runs;    /* injector runs (start to stop) */
	double periods; /* their wall time in periods: each run has at most periods + 1 detours */
	double detours; /* nt_inject_count(): detours spun */
	double spun_us; /* nt_inject_spun_cyc() + nt_inject_lost_cyc(): their wall length (what
			 * they spun and the time off the CPU inside them), at least
			 * detours x detour */
	double off_us;  /* wall time minus the thread's CPU time: the rank was off its CPU */
};
enum { NINJ = sizeof(struct injected) / sizeof(double) };

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Mean time per call in us (the largest over ranks) of n calls, under spec if not NULL (then
 * adds this rank's injector accounting to inj). */
static double measure(enum coll c, long n, const struct nt_inject_spec *spec, int64_t offset,
		      struct injected *inj)
{
	char err[256];
	uint64_t w0 = nt_clock_monotonic_ns(), cpu0 = thread_cpu_ns();
	uint64_t count0 = nt_inject_count(), spun0 = nt_inject_spun_cyc() + nt_inject_lost_cyc();
	if (spec && nt_inject_start(spec, rank, offset, err, sizeof err) != 0) {
		fprintf(stderr, "coll-noise: rank %d: %s\n", rank, err);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long i = 0; i < n; i++)
		call(c);
	double per = (MPI_Wtime() - t0) / (double)n * 1e6, worst;
	nt_inject_stop();
	if (spec) {
		double wall_ns = (double)(nt_clock_monotonic_ns() - w0);
		double cpu_ns = (double)(thread_cpu_ns() - cpu0);
		inj->runs += 1;
		inj->periods += wall_ns / (double)spec->period_ns;
		inj->detours += (double)(nt_inject_count() - count0);
		inj->spun_us += nt_clock_cyc_to_ns(nt_inject_spun_cyc() + nt_inject_lost_cyc() - spun0) / 1e3;
		inj->off_us += (wall_ns > cpu_ns ? wall_ns - cpu_ns : 0) / 1e3;
	}
	MPI_Allreduce(&per, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

/* One noisy cell: its injector accounting, synchronized and not, summed over ranks. */
struct cell_inj {
	enum coll c;
	double detour_us, period_ms;
	double quiet_us, sync_us, unsync_us; /* medians of the rounds */
	struct injected mode[2];
};
static struct cell_inj cells[NCOLL * 16 * 16];
static int ncells;

static void print_injected(void)
{
	printf("\ninjector, all ranks and rounds (at most one detour per period and run; fewer "
	       "only\nwhile a rank was off its CPU; each detour lasts at least its length)\n\n"
	       "%-6s %-10s %8s %9s %5s %9s %8s %9s %9s %10s\n",
	       "mode", "collective", "detour", "interval", "runs", "periods", "detours", "length ms",
	       "asked ms", "off-CPU ms");
	for (int i = 0; i < ncells; i++)
		for (int m = 0; m < 2; m++) {
			const struct injected *j = &cells[i].mode[m];
			printf("%-6s %-10s %5.0f us %6.2f ms %5.0f %9.1f %8.0f %9.3f %9.3f %10.3f\n",
			       m ? "unsync" : "sync", coll_name[cells[i].c], cells[i].detour_us,
			       cells[i].period_ms, j->runs, j->periods, j->detours,
			       j->spun_us / 1e3, j->detours * cells[i].detour_us / 1e3,
			       j->off_us / 1e3);
		}
}

enum { ROUNDS = 5 };

/* Both tables as JSON (rank 0). 0, or -EIO. */
static int write_json(FILE *f, double seconds, double ratio_pct, bool grid,
		      unsigned long long seed)
{
	fprintf(f, "{\n  \"schema\": \"noisetool-coll-noise/1\",\n  \"ranks\": %d,\n"
		   "  \"seconds\": %.10g,\n  \"ratio_pct\": ", size, seconds);
	if (grid)
		fputs("null", f);
	else
		fprintf(f, "%.10g", ratio_pct);
	fprintf(f, ",\n  \"seed\": %llu,\n  \"rounds\": %d,\n  \"cells\": [", seed, ROUNDS);
	for (int i = 0; i < ncells; i++) {
		const struct cell_inj *c = &cells[i];
		fprintf(f, "%s\n    { \"collective\": \"%s\", \"detour_us\": %.10g, "
			   "\"interval_ms\": %.10g,\n      \"quiet_us\": %.10g, \"sync_us\": %.10g, "
			   "\"unsync_us\": %.10g,\n      \"sync_x\": %.10g, \"unsync_x\": %.10g",
			i ? "," : "", coll_name[c->c], c->detour_us, c->period_ms, c->quiet_us,
			c->sync_us, c->unsync_us, c->sync_us / c->quiet_us,
			c->unsync_us / c->quiet_us);
		for (int m = 0; m < 2; m++) {
			const struct injected *j = &c->mode[m];
			fprintf(f, ",\n      \"%s\": { \"runs\": %.10g, \"periods\": %.10g, "
				   "\"detours\": %.10g, \"length_ms\": %.10g, \"off_cpu_ms\": %.10g }",
				m ? "injected_unsync" : "injected_sync", j->runs, j->periods,
				j->detours, j->spun_us / 1e3, j->off_us / 1e3);
		}
		fputs(" }", f);
	}
	fputs("\n  ]\n}\n", f);
	return ferror(f) ? -EIO : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Calls for the next measurement: n, or n refitted to target_us when the last one (per_us a
 * call, the largest over ranks, so the same on every rank) took over twice target_us or under
 * half of it: the machine's speed changed since the quiet probe (measurements meant to last
 * 0.1 s took 2.3 s here when other jobs started after it, 0.6 ms when they stopped). */
static long fit(long n, double per_us, double target_us)
{
	double t = per_us * (double)n;
	if (t <= 2 * target_us && t >= target_us / 2)
		return n;
	double m = target_us / (per_us > 0.05 ? per_us : 0.05);
	return m < 1 ? 1 : (long)m;
}

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof *v, cmp_double);
	return v[ROUNDS / 2];
}

static void bad(const char *what)
{
	if (rank == 0)
		fprintf(stderr, "coll-noise: %s\n%s", what, usage);
	MPI_Finalize();
	exit(2);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double seconds = 1, ratio_pct = 2;
	unsigned long long seed = 42;
	double detours_us[16] = { 20, 100, 500 }, intervals_ms[16];
	int ndetours = 3, nintervals = 0;
	const char *json_path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			if (rank == 0)
				fputs(usage, stdout);
			MPI_Finalize();
			return 0;
		} else if (!strcmp(argv[i], "--seconds") && v) {
			seconds = strtod(v, &end);
			if (*end || !(seconds > 0 && seconds <= 3600))
				bad("--seconds: expected a number in (0, 3600]");
		} else if (!strcmp(argv[i], "--ratio") && v) {
			ratio_pct = strtod(v, &end);
			if (*end || !(ratio_pct > 0 && ratio_pct < 50))
				bad("--ratio: expected a percentage in (0, 50)");
		} else if (!strcmp(argv[i], "--seed") && v) {
			seed = strtoull(v, &end, 10);
			if (*end)
				bad("--seed: expected a whole number");
		} else if (!strcmp(argv[i], "--json") && v) {
			json_path = v;
		} else if (!strcmp(argv[i], "--intervals") && v) {
			nintervals = 0;
			for (const char *p = v; *p && nintervals < 16;) {
				intervals_ms[nintervals] = strtod(p, &end);
				if (end == p || !(intervals_ms[nintervals] > 0 &&
						  intervals_ms[nintervals] <= 10000) ||
				    (*end && *end != ','))
					bad("--intervals: expected intervals in ms, like 1,10,100");
				nintervals++;
				p = *end == ',' ? end + 1 : end;
			}
		} else if (!strcmp(argv[i], "--detours") && v) {
			ndetours = 0;
			for (const char *p = v; *p && ndetours < 16;) {
				detours_us[ndetours] = strtod(p, &end);
				if (end == p || !(detours_us[ndetours] >= 1 && detours_us[ndetours] <= 1e6))
					bad("--detours: expected detour lengths in us, like 20,100,500");
				ndetours++;
				p = *end == ',' ? end + 1 : end;
				if (*end && *end != ',')
					bad("--detours: expected detour lengths in us, like 20,100,500");
			}
		} else {
			bad("unknown option or missing value");
		}
		i++;
	}
	/* The JSON output is checked and opened before any measurement (rank 0 writes it). */
	struct nt_outfile json;
	int json_ok = 1;
	if (json_path && rank == 0 && nt_outfile_open(&json, json_path, false) != 0) {
		fprintf(stderr, "coll-noise: --json: %s\n", json.why);
		json_ok = 0;
	}
	MPI_Bcast(&json_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!json_ok) {
		MPI_Finalize();
		return 1;
	}
	nt_clock_init();
	sendbuf = calloc((size_t)size, sizeof *sendbuf);
	recvbuf = calloc((size_t)size, sizeof *recvbuf);
	int64_t offset = offset_to_rank0();
	if (rank == 0) {
		if (nintervals)
			printf("coll-noise: %d ranks, every detour length at every interval, ", size);
		else
			printf("coll-noise: %d ranks, noise ratio %.1f %% (a detour every "
			       "detour/%.3f), ", size, ratio_pct, ratio_pct / 100);
		printf("%.2f s per measurement;\nmean time per call, the largest over ranks; "
		       "magnification = with noise / quiet\n\n"
		       "%-10s %8s %9s %10s %10s %10s %8s %8s\n",
		       seconds, "collective", "detour", "interval", "quiet us", "sync us",
		       "unsync us", "sync x", "unsync x");
	}
	for (int c = 0; c < NCOLL; c++) {
		/* Calls per measurement: from a short quiet run, the same on every rank. */
		double probe = measure((enum coll)c, 2000, NULL, 0, NULL);
		double target_us = seconds / ROUNDS * 1e6;
		long n = (long)(target_us / (probe > 0.05 ? probe : 0.05));
		MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
		for (int cell = 0; cell < ndetours * (nintervals ? nintervals : 1); cell++) {
			int d = nintervals ? cell / nintervals : cell;
			struct nt_inject_spec spec = { .detour_ns = (uint64_t)(detours_us[d] * 1e3),
						       .all_ranks = true, .seed = seed };
			if (nintervals)
				spec.period_ns = (uint64_t)(intervals_ms[cell % nintervals] * 1e6);
			else
				spec.period_ns = (uint64_t)((double)spec.detour_ns / (ratio_pct / 100));
			/* The injector's bounds (noisetool/inject.h): a period its own signal cost
			 * would swamp, or too little time left between detours. */
			if (spec.period_ns < NT_INJECT_MIN_PERIOD_NS ||
			    spec.detour_ns * 100 > spec.period_ns * NT_INJECT_MAX_DUTY_PCT) {
				if (rank == 0 && c == 0)
					fprintf(stderr, "coll-noise: no %.0f us detour every %.3f ms: the "
						"injector takes periods of 1 ms or more and detours of "
						"at most %u %% of them\n",
						detours_us[d], (double)spec.period_ns / 1e6,
						NT_INJECT_MAX_DUTY_PCT);
				continue;
			}
			double q[ROUNDS], s[ROUNDS], u[ROUNDS];
			struct injected inj[2] = { { 0 } };
			for (int r = 0; r < ROUNDS; r++) {
				q[r] = measure((enum coll)c, n, NULL, 0, NULL);
				n = fit(n, q[r], target_us);
				spec.mode = NT_INJECT_SYNC;
				s[r] = measure((enum coll)c, n, &spec, offset, &inj[0]);
				n = fit(n, s[r], target_us);
				spec.mode = NT_INJECT_UNSYNC;
				spec.seed = seed + (unsigned long long)r; /* new phases each round */
				u[r] = measure((enum coll)c, n, &spec, offset, &inj[1]);
				n = fit(n, u[r], target_us);
			}
			struct cell_inj *ci = &cells[ncells++];
			*ci = (struct cell_inj){ .c = (enum coll)c, .detour_us = detours_us[d],
						 .period_ms = (double)spec.period_ns / 1e6 };
			MPI_Reduce(inj, ci->mode, 2 * NINJ, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
			double quiet = median(q), sync = median(s), unsync = median(u);
			ci->quiet_us = quiet;
			ci->sync_us = sync;
			ci->unsync_us = unsync;
			if (rank == 0) {
				printf("%-10s %5.0f us %6.2f ms %10.2f %10.2f %10.2f %8.2f %8.2f\n",
				       coll_name[c], detours_us[d], (double)spec.period_ns / 1e6, quiet,
				       sync, unsync, sync / quiet, unsync / quiet);
				fflush(stdout);
			}
		}
	}
	int status = 0;
	if (rank == 0)
		print_injected();
	if (rank == 0 && json_path) {
		fflush(stdout);
		if (write_json(json.f, seconds, ratio_pct, nintervals > 0, seed) != 0) {
			fprintf(stderr, "coll-noise: --json: writing '%s' failed\n", json_path);
			nt_outfile_abort(&json);
			status = 1;
		} else if (nt_outfile_commit(&json) != 0) {
			fprintf(stderr, "coll-noise: --json: %s\n", json.why);
			status = 1;
		}
	}
	free(sendbuf);
	free(recvbuf);
	MPI_Finalize();
	return status;
}
