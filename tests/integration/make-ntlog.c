/* Writes a valid job log through the writer the wrapper library uses (nt_log_header,
 * nt_log_rank_encode), for the report tests to read and to damage: two call sites per rank,
 * records with windows and intervals, and a late rank for the attribution tables. With a
 * SITES file, every rank has those call sites instead (for the symbolization tests). */
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

int main(int argc, char **argv)
{
	if ((argc != 3 && argc != 4) || atoi(argv[2]) < 1) {
		fprintf(stderr, "usage: make-ntlog OUT NRANKS [SITES]\n");
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
	nt_log_header(header, nranks, 0, 1, 2.6e9,
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
