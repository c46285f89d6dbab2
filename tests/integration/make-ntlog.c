/* Writes a valid job log through the writer the wrapper library uses (nt_log_header,
 * nt_log_rank_encode), for the report tests to read and to damage: two call sites per rank,
 * records with windows and intervals, and a late rank for the attribution tables. With a
 * SITES file, every rank has those call sites instead (for the symbolization tests). With
 * --records N, a log of realistic shape and size instead (the page tests and bench-html.sh):
 *
 *   make-ntlog OUT NRANKS --records N [--seed S] [--dropped D]
 *
 * N records over all ranks (N / NRANKS instances of a 1 ms loop, every rank recording each),
 * eight collective call sites whose histograms are the records' call times, 16 ranks a host,
 * and three noisy ranks (one alone in a 2-rank job) that arrive late at 5 % of the instances
 * by 10 us to 2.5 ms: rank NRANKS/3 preempted (more in the job's middle third), rank
 * 2 NRANKS/3 spun by the injector, the last rank blocked in major page faults. The same
 * arguments give the same log (but for its creation time). --dropped D: rank 0 dropped D
 * records (a partial log). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <noisetool/ntlog.h>

/* The SITES file: one call site a line, "FUNCTION OFFSET MODULE" (OFFSET in C notation, MODULE
 * the rest of the line). Returns how many, or -1 (message printed). */
static long read_sites(const char *path, struct nt_log_site **out)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	struct nt_log_site *sites = NULL;
	long n = 0, cap = 0;
	char line[4096], fn[256];
	unsigned long long off;
	int pos;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%255s %lli %n", fn, &off, &pos) != 2 || !line[pos]) {
			fprintf(stderr, "make-ntlog: %s: bad line '%s'\n", path, line);
			n = -1;
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			struct nt_log_site *more = realloc(sites, (size_t)cap * sizeof *sites);
			if (!more) {
				n = -1;
				break;
			}
			sites = more;
		}
		char *function = strdup(fn), *module = strdup(line + pos);
		if (!function || !module) {
			n = -1;
			break;
		}
		struct nt_log_site *s = &sites[n];
		*s = (struct nt_log_site){ .function = function, .module = module, .offset = off,
					   .calls = 1, .total_ns = 1000 + (uint64_t)n, .min_ns = 1000,
					   .max_ns = 1000 + (uint64_t)n, .depth = 1 };
		s->hist[10] = 1;
		s->frames[0] = (struct nt_log_frame){ module, off };
		n++;
	}
	fclose(f);
	if (n == 0) {
		fprintf(stderr, "make-ntlog: %s: no call sites\n", path);
		n = -1;
	}
	if (n < 0)
		free(sites); /* the strings leak: the program exits at once */
	else
		*out = sites;
	return n;
}

/* A uniform number in [0, 1) from (seed, a, b, salt): splitmix64's finalizer. */
static double hash01(uint64_t seed, uint64_t a, uint64_t b, uint64_t salt)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15u + a * 0xbf58476d1ce4e5b9u +
		     b * 0x94d049bb133111ebu + salt * 0x2545f4914f6cdd1du;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	z ^= z >> 31;
	return (double)(z >> 11) / 0x1p53;
}

enum noise { QUIET, PREEMPTED, INJECTED, FAULTING };

struct shape {
	unsigned nranks;
	uint64_t instances, seed;
	unsigned noisy[3]; /* ranks, by enum noise - 1 (UINT32_MAX: none) */
};

#define PERIOD_NS 1000000u /* one instance a millisecond */
#define NSHAPE_SITES 8

static enum noise noise_of(const struct shape *sh, unsigned r)
{
	for (int i = 0; i < 3; i++)
		if (sh->noisy[i] == r)
			return (enum noise)(i + 1);
	return QUIET;
}

/* How late rank r arrives at instance k beyond its jitter, ns. */
static uint64_t lateness_ns(const struct shape *sh, unsigned r, uint64_t k)
{
	enum noise n = noise_of(sh, r);
	if (n == QUIET)
		return 0;
	double p = 0.05;
	if (n == PREEMPTED) /* a burst in the middle third of the job */
		p = k >= sh->instances / 3 && k < 2 * sh->instances / 3 ? 0.10 : 0.025;
	if (hash01(sh->seed, r, k, 1) >= p)
		return 0;
	return (uint64_t)(10000.0 * exp2(8.0 * hash01(sh->seed, r, k, 2)));
}

static uint64_t jitter_ns(const struct shape *sh, unsigned r, uint64_t k)
{
	return (uint64_t)(400.0 * hash01(sh->seed, r, k, 3));
}

/* Instance k's call site: a few frequent ones, a few rare ones. */
static uint32_t site_of(const struct shape *sh, uint64_t k)
{
	static const double cum[NSHAPE_SITES] = { 0.40, 0.65, 0.80, 0.88, 0.93, 0.96, 0.99, 1 };
	double u = hash01(sh->seed, 0, k, 4);
	uint32_t s = 0;
	while (s + 1 < NSHAPE_SITES && u >= cum[s])
		s++;
	return s;
}

/* The realistic log (see the top of the file). */
static int write_shaped(FILE *f, const struct shape *sh, uint64_t dropped)
{
	static const char *const fns[NSHAPE_SITES] = {
		"MPI_Allreduce", "MPI_Allreduce", "MPI_Barrier", "MPI_Bcast",
		"MPI_Reduce", "MPI_Allgather", "MPI_Alltoall", "MPI_Allreduce",
	};
	static const uint64_t work_ns[NSHAPE_SITES] = { 2000, 5000, 1500, 3000, 4000, 8000,
							 30000, 1000 };
	const double hz = 2.6e9;
	struct nt_log_record *recs = calloc(sh->instances ? sh->instances : 1, sizeof *recs);
	if (!recs)
		return 1;
	int status = 0;
	for (unsigned r = 0; r < sh->nranks && status == 0; r++) {
		struct nt_log_site sites[NSHAPE_SITES];
		memset(sites, 0, sizeof sites);
		for (uint32_t s = 0; s < NSHAPE_SITES; s++) {
			sites[s].function = fns[s];
			sites[s].module = "/usr/bin/app";
			sites[s].offset = 0x1000 + 0x100 * s;
			sites[s].depth = 1;
			sites[s].min_ns = UINT64_MAX;
			sites[s].frames[0] = (struct nt_log_frame){ "/usr/bin/app", sites[s].offset };
		}
		char host[32];
		snprintf(host, sizeof host, "node-%03u", r / 16);
		uint64_t injected = 0, injected_count = 0, mpi = 0;
		for (uint64_t k = 0; k < sh->instances; k++) {
			uint32_t s = site_of(sh, k);
			uint64_t t = (k + 1) * PERIOD_NS;
			uint64_t late = lateness_ns(sh, r, k);
			uint64_t arrive = t + jitter_ns(sh, r, k) + late;
			/* Everyone leaves together, once the last one has come. */
			uint64_t last = t + 400;
			for (int i = 0; i < 3; i++)
				if (sh->noisy[i] < sh->nranks) {
					uint64_t a = t + jitter_ns(sh, sh->noisy[i], k) +
						     lateness_ns(sh, sh->noisy[i], k);
					last = a > last ? a : last;
				}
			uint64_t dur = last - arrive + work_ns[s] +
				       (uint64_t)(work_ns[s] * hash01(sh->seed, r, k, 5));
			uint64_t phase = 500000;
			struct nt_log_window w = { .wall_ns = phase + dur, .cpu_ns = phase + dur,
						   .valid = 1 | 2 | 4 | 8 };
			switch (noise_of(sh, r)) {
			case PREEMPTED:
				w.wall_ns += late;
				w.run_delay_ns = late;
				w.invol_switches = late ? 1 : 0;
				break;
			case INJECTED:
				w.wall_ns += late;
				w.cpu_ns += late;
				w.injected_ns = late;
				injected += late;
				injected_count += late > 0;
				break;
			case FAULTING:
				w.wall_ns += late;
				w.vol_switches = late ? 1 : 0;
				w.major_faults = late / 100000;
				break;
			case QUIET:
				break;
			}
			recs[k] = (struct nt_log_record){
				.comm_id = 0, .seq = k + 1, .site = s,
				.flags = NT_LOG_REC_SAMPLE | NT_LOG_REC_WINDOW | NT_LOG_REC_INTERVAL,
				.start_ns = arrive, .duration_ns = dur, .phase_ns = phase,
				.interval_ns = phase + late, .p2p_ns = 0, .win = w,
			};
			struct nt_log_site *x = &sites[s];
			x->calls++;
			x->total_ns += dur;
			x->min_ns = dur < x->min_ns ? dur : x->min_ns;
			x->max_ns = dur > x->max_ns ? dur : x->max_ns;
			x->bytes += 8;
			int b = (int)floor(log2((double)dur * hz / 1e9));
			x->hist[b < 0 ? 0 : b >= NT_LOG_HIST_BINS ? NT_LOG_HIST_BINS - 1 : b]++;
			mpi += dur;
		}
		for (uint32_t s = 0; s < NSHAPE_SITES; s++)
			if (!sites[s].calls) /* a site never called on a short run */
				sites[s].min_ns = 0;
		struct nt_log_rank rank = {
			.rank = r, .host = host, .wall_ns = (sh->instances + 2) * PERIOD_NS,
			.mpi_ns = mpi, .clock_error_ns = 200, .init_global_ns = 0,
			.probe_reads = sh->instances, .probe_cost_ns = 250 + 25 * (r % 7),
			.injected_ns = injected, .injected_count = injected_count,
			.dropped_records = r == 0 ? dropped : 0,
			.nsites = NSHAPE_SITES, .sites = sites, .nrecords = sh->instances, .records = recs,
		};
		unsigned char *buf;
		size_t len;
		if (nt_log_rank_encode(&rank, &buf, &len) != 0) {
			status = 1;
			break;
		}
		if (fwrite(buf, 1, len, f) != len)
			status = 1;
		free(buf);
	}
	free(recs);
	return status;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[3], "--records") == 0 && atoi(argv[2]) >= 1) {
		struct shape sh = { .nranks = (unsigned)atoi(argv[2]), .seed = 1 };
		uint64_t records = strtoull(argv[4], NULL, 0), dropped = 0;
		for (int i = 5; i + 1 < argc; i += 2) {
			if (!strcmp(argv[i], "--seed"))
				sh.seed = strtoull(argv[i + 1], NULL, 0);
			else if (!strcmp(argv[i], "--dropped"))
				dropped = strtoull(argv[i + 1], NULL, 0);
			else
				argc = -1;
		}
		if (argc < 0 || argc % 2 == 0 || records < 1) {
			fprintf(stderr, "usage: make-ntlog OUT NRANKS --records N [--seed S] "
					"[--dropped D]\n");
			return 2;
		}
		sh.instances = (records + sh.nranks - 1) / sh.nranks;
		for (int i = 0; i < 3; i++)
			sh.noisy[i] = UINT32_MAX;
		if (sh.nranks == 2) {
			sh.noisy[0] = 1;
		} else if (sh.nranks > 2) {
			sh.noisy[0] = sh.nranks / 3;
			sh.noisy[1] = 2 * sh.nranks / 3;
			sh.noisy[2] = sh.nranks - 1;
		}
		FILE *f = fopen(argv[1], "wb");
		if (!f) {
			perror(argv[1]);
			return 1;
		}
		unsigned char header[NT_LOG_HEADER_BYTES];
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		nt_log_header(header, sh.nranks, dropped ? NT_LOG_FLAG_PARTIAL : 0, 1, 0, 16, 2.6e9,
			      (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
		int status = fwrite(header, 1, sizeof header, f) == sizeof header ? 0 : 1;
		if (status == 0)
			status = write_shaped(f, &sh, dropped);
		if (fclose(f) != 0)
			status = 1;
		if (status)
			fprintf(stderr, "make-ntlog: writing %s failed\n", argv[1]);
		return status;
	}
	if ((argc != 3 && argc != 4) || atoi(argv[2]) < 1) {
		fprintf(stderr, "usage: make-ntlog OUT NRANKS [SITES]\n"
				"       make-ntlog OUT NRANKS --records N [--seed S] [--dropped D]\n");
		return 2;
	}
	unsigned nranks = (unsigned)atoi(argv[2]);
	struct nt_log_site *given = NULL;
	long ngiven = argc == 4 ? read_sites(argv[3], &given) : 0;
	if (ngiven < 0)
		return 1;
	FILE *f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	unsigned char header[NT_LOG_HEADER_BYTES];
	/* Made now, as a job's log is: a module modified later is reported as changed. */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	nt_log_header(header, nranks, 0, 1, 0, 16, 2.6e9,
		      (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	int status = fwrite(header, 1, sizeof header, f) == sizeof header ? 0 : 1;
	for (unsigned r = 0; r < nranks && status == 0; r++) {
		struct nt_log_site sites[2];
		memset(sites, 0, sizeof sites);
		sites[0] = (struct nt_log_site){ .function = "MPI_Allreduce", .module = "/usr/bin/app",
						 .offset = 0x1234, .calls = 3, .total_ns = 3000 + r,
						 .min_ns = 500, .max_ns = 2000, .bytes = 24, .depth = 1 };
		sites[0].hist[10] = 3;
		sites[0].frames[0] = (struct nt_log_frame){ "/usr/bin/app", 0x1234 };
		sites[1] = (struct nt_log_site){ .function = "MPI_Barrier", .module = "/usr/bin/app",
						 .offset = 0x2000, .calls = 1, .total_ns = 900,
						 .min_ns = 900, .max_ns = 900 };
		sites[1].hist[11] = 1;
		char cpu_list[16];
		snprintf(cpu_list, sizeof cpu_list, "%u", r);
		/* Three allreduce instances; the last rank arrives 2 ms late at the second, preempted
		 * for 1.5 ms of its 2.5 ms window. */
		struct nt_log_record recs[3];
		for (unsigned k = 0; k < 3; k++) {
			bool late = k == 1 && r == nranks - 1;
			recs[k] = (struct nt_log_record){
				.comm_id = 0, .seq = k + 1, .site = 0,
				.flags = NT_LOG_REC_SAMPLE | NT_LOG_REC_WINDOW | NT_LOG_REC_INTERVAL,
				.start_ns = 1000000 * (k + 1) + (late ? 2000000 : 0),
				.duration_ns = late ? 500 : 2000, .phase_ns = 400000,
				.interval_ns = 500000, .p2p_ns = 0,
				.win = { .wall_ns = late ? 2500000 : 500000,
					 .cpu_ns = late ? 1000000 : 500000,
					 .run_delay_ns = late ? 1500000 : 0, .vol_switches = 0,
					 .invol_switches = late ? 1 : 0, .valid = 1 | 2 | 4 | 8 },
			};
		}
		struct nt_log_rank rank = {
			.rank = r, .host = "node-a", .wall_ns = 10000000, .mpi_ns = 3900 + r,
			.clock_error_ns = 200, .probe_reads = 3, .probe_cost_ns = 300,
			.nsites = 2, .sites = sites, .nrecords = 3, .records = recs,
			/* its CPUs (version 6): a CPU a rank, each to itself, 5 % of it others' */
			.cpus = cpu_list, .cpu_ns = 9000000, .run_delay_ns = 100000,
			.cpus_busy_ns = 9500000, .cpus_steal_ns = 0,
			/* who ran it, in which batch job (version 8) */
			.user = "alice", .batch_system = "slurm", .batch_job = "77.0",
			.batch_nodes = "node-[a-b]",
		};
		if (given) {
			rank.nsites = (uint32_t)ngiven;
			rank.sites = given;
		}
		unsigned char *buf;
		size_t len;
		if (nt_log_rank_encode(&rank, &buf, &len) != 0) {
			status = 1;
			break;
		}
		if (fwrite(buf, 1, len, f) != len)
			status = 1;
		free(buf);
	}
	if (fclose(f) != 0)
		status = 1;
	if (status)
		fprintf(stderr, "make-ntlog: writing %s failed\n", argv[1]);
	for (long i = 0; i < ngiven; i++) {
		free((char *)given[i].function);
		free((char *)given[i].module);
	}
	free(given);
	return status;
}
