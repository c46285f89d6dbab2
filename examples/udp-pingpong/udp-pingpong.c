/* UDP ping-pong under competing load (Thitikamol & Keleher, Fig. 1, on this machine, extended).
 *
 *   udp-pingpong server --port P --policy busy|timed|blocking|adaptive [--backend select|epoll]
 *                       [--cpu C] [--work-us W]
 *   udp-pingpong client --port P [--count N | --seconds S] [--size B] [--cpu C]
 *   udp-pingpong matrix [--seconds S] [--server-cpu C] [--client-cpu C] [--csv FILE] ...
 *
 * The server echoes every datagram's payload unchanged to its sender, after spending W us of
 * CPU on it; its wait loop is an nt_poller with the chosen policy. The matrix forks the server,
 * the client and a competing load pinned to the server's CPU, for every load, size, request
 * shape and policy, and prints RTTs and the competitor's CPU share (with --json also as a JSON
 * document, which `noisetool plot udp-pingpong` draws). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <noisetool/outfile.h>
#include <noisetool/poller.h>

#include "../common/duty-load.h"
#define EXAMPLE_NAME "udp-pingpong"
#include "../common/example-util.h"

enum { MAX_DGRAM = 65507 };

static const char usage[] =
	"Usage: udp-pingpong server --port P --policy busy|timed|blocking|adaptive\n"
	"                           [--backend select|epoll] [--cpu C] [--work-us W]\n"
	"       udp-pingpong client --port P [--count N | --seconds S] [--size B] [--cpu C]\n"
	"                           [--warmup-s S]\n"
	"       udp-pingpong matrix [--seconds S] [--warmup-s S] [--repeat R] [--server-cpu C]\n"
	"                           [--client-cpu C]\n"
	"                           [--sizes 4,32768] [--loads none,15,50,100]\n"
	"                           [--policies busy,timed,blocking,adaptive] [--work-us W]\n"
	"                           [--backend select|epoll] [--csv FILE] [--json FILE]\n"
	"\n"
	"server  echoes each datagram on 127.0.0.1:P to its sender, after W us of CPU work\n"
	"        (default 0); drops and counts truncated (oversized) ones; on SIGINT or SIGTERM\n"
	"        prints its telemetry and exits.\n"
	"client  sends B-byte datagrams (default 4), one outstanding, N times (default 20000) or\n"
	"        for S seconds; prints mean, median, p99, p99.9 and max RTT in us.\n"
	"matrix  for each size, request shape (echo, and --work-us, default 200), competing load on\n"
	"        the server's CPU (none, or a duty cycle of 15, 50 or 100 %) and policy, runs a\n"
	"        server and a client for S seconds (default 2, after 0.5 s of warm-up), R times\n"
	"        (default 3) in rounds whose policy order rotates, and prints the table: the\n"
	"        medians over the rounds of mean, p99, p99.9 RTT and the competitor's measured CPU\n"
	"        share, and under each row adaptive's mean and p99 over the best fixed policy's\n"
	"        and its mean over busy's, as ratios taken round by round, then their median\n"
	"        (the CSV has every run). The client runs on the first CPU of the affinity mask,\n"
	"        the server on the second (the first when the mask has one), unless given.\n"
	"        --json FILE writes the table (the medians and ratios) as JSON (schema\n"
	"        noisetool-udp-pingpong/1, doc/html.md), opened before the first run.\n";

static int udp_socket(int port, bool bind_it)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		perror("udp-pingpong: socket");
		exit(1);
	}
	int big = 1 << 20;
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	setsockopt(s, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind_it ? bind(s, (struct sockaddr *)&a, sizeof a)
		    : connect(s, (struct sockaddr *)&a, sizeof a)) {
		fprintf(stderr, "udp-pingpong: %s 127.0.0.1:%d: %s\n", bind_it ? "bind" : "connect",
			port, strerror(errno));
		exit(1);
	}
	return s;
}

/* ---- server ---- */

struct server_opts {
	int port, cpu;
	long work_us;
	enum nt_poll_policy policy;
	enum nt_poll_backend backend;
	int ready_fd; /* matrix: the bound port is written here */
};

static int server(const struct server_opts *o)
{
	pin(o->cpu);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int s = udp_socket(o->port, true);
	if (o->ready_fd >= 0) {
		struct sockaddr_in a;
		socklen_t len = sizeof a;
		getsockname(s, (struct sockaddr *)&a, &len);
		int port = ntohs(a.sin_port);
		if (write(o->ready_fd, &port, sizeof port) != (ssize_t)sizeof port)
			return 1;
		close(o->ready_fd);
	}
	struct nt_poller *p;
	struct nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
	cfg.policy = o->policy;
	cfg.backend = o->backend;
	int rc = nt_poller_create(&p, &cfg);
	if (rc || (rc = nt_poller_add(p, s, NT_POLL_IN, NULL))) {
		fprintf(stderr, "udp-pingpong: poller: %s\n", strerror(-rc));
		return 1;
	}
	static char buf[MAX_DGRAM + 1];
	uint64_t requests = 0, dropped = 0;
	while (!stop) {
		struct nt_poll_event ev;
		int n = nt_poller_wait(p, &ev, 1, 100000000); /* see SIGTERM within 0.1 s */
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "udp-pingpong: wait: %s\n", strerror(-n));
			break;
		}
		for (;;) { /* everything that is there */
			struct sockaddr_in from;
			socklen_t fl = sizeof from;
			ssize_t len = recvfrom(s, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC,
					       (struct sockaddr *)&from, &fl);
			if (len < 0)
				break;
			if (len > MAX_DGRAM) { /* truncated: bigger than any UDP payload we echo */
				dropped++;
				continue;
			}
			if (o->work_us)
				work_us(o->work_us);
			sendto(s, buf, (size_t)len, 0, (struct sockaddr *)&from, fl);
			requests++;
		}
	}
	struct nt_poller_stats st;
	nt_poller_get_stats(p, &st);
	printf("server: policy %s, backend %s, work %ld us: %llu requests, %llu dropped\n",
	       nt_poll_policy_name(o->policy), nt_poll_backend_name(o->backend), o->work_us,
	       (unsigned long long)requests, (unsigned long long)dropped);
	printf("server: mode %s, %llu switches, %.3f s spinning, %.3f s sleeping, %llu polls, "
	       "%llu voluntary switches, competitor share %.3f (%llu measurements), %s, "
	       "%llu trials (last: spin %.1f us, sleep %.1f us per cycle)\n",
	       st.mode == NT_MODE_SPIN ? "spin" : "sleep", (unsigned long long)st.switches,
	       (double)st.spin_ns / 1e9, (double)st.sleep_ns / 1e9, (unsigned long long)st.polls,
	       (unsigned long long)st.voluntary_switches, st.competitor_share,
	       (unsigned long long)st.share_measurements, st.contended ? "contended" : "free",
	       (unsigned long long)st.trials, st.trial_spin_cycle_ns / 1e3,
	       st.trial_sleep_cycle_ns / 1e3);
	fflush(stdout);
	nt_poller_destroy(p);
	close(s);
	return 0;
}

/* ---- client ---- */

struct rtt_stats {
	uint64_t n, lost;
	double mean_us, median_us, p99_us, p999_us, max_us;
};

/* Ping-pong for count round trips or seconds (after warmup seconds not counted). */
static int client_run(int port, long count, double seconds, double warmup, long size, int cpu,
		      struct rtt_stats *out)
{
	pin(cpu);
	int s = udp_socket(port, false);
	struct timeval tv = { 1, 0 }; /* a lost datagram costs a second, and is counted */
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	static char buf[MAX_DGRAM + 1], in[MAX_DGRAM + 1];
	memset(buf, 'x', (size_t)size);
	size_t cap = count > 0 ? (size_t)count : 1u << 20;
	uint64_t *rtt = malloc(cap * sizeof *rtt);
	if (!rtt)
		return -ENOMEM;
	uint64_t n = 0, lost = 0, t_start = now_ns();
	uint64_t t_warm = t_start + (uint64_t)(warmup * 1e9);
	uint64_t t_end = seconds > 0 ? t_warm + (uint64_t)(seconds * 1e9) : UINT64_MAX;
	for (uint64_t i = 0;; i++) {
		uint64_t t0 = now_ns();
		if (seconds > 0 ? t0 >= t_end : n >= (uint64_t)count)
			break;
		memcpy(buf, &i, sizeof i < (size_t)size ? sizeof i : (size_t)size);
		if (send(s, buf, (size_t)size, 0) != size) {
			lost++;
			continue;
		}
		ssize_t got;
		do /* skip a late echo of an earlier lost round */
			got = recv(s, in, sizeof in, 0);
		while (got >= (ssize_t)sizeof i && memcmp(in, &i, sizeof i) != 0 && size >= 8);
		uint64_t t1 = now_ns();
		if (got != size) {
			lost++;
			continue;
		}
		if (t0 < t_warm)
			continue;
		if (n == cap) {
			uint64_t *grown = realloc(rtt, 2 * cap * sizeof *rtt);
			if (!grown)
				break;
			rtt = grown;
			cap *= 2;
		}
		rtt[n++] = t1 - t0;
	}
	close(s);
	*out = (struct rtt_stats){ .n = n, .lost = lost };
	if (n) {
		double sum = 0;
		for (uint64_t i = 0; i < n; i++)
			sum += (double)rtt[i];
		qsort(rtt, n, sizeof *rtt, cmp_u64);
		out->mean_us = sum / (double)n / 1e3;
		out->median_us = (double)rtt[n / 2] / 1e3;
		out->p99_us = (double)rtt[(uint64_t)((double)(n - 1) * 0.99)] / 1e3;
		out->p999_us = (double)rtt[(uint64_t)((double)(n - 1) * 0.999)] / 1e3;
		out->max_us = (double)rtt[n - 1] / 1e3;
	}
	free(rtt);
	return 0;
}

/* ---- matrix ---- */

/* A competing load pinned to cpu (examples/common/duty-load.h), bounded by alarm(). */
static pid_t start_load(int duty, int cpu, unsigned max_seconds)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	alarm(max_seconds);
	pin(cpu);
	duty_load_forever(duty);
}

/* CPU time of a process so far, ns (its threads' schedstat run time). */
enum { MAX_REPEAT = 15 };

/* The median of v[0..n) (v is sorted in place). */
struct cell {
	long size, work_us;
	int load;
	enum nt_poll_policy policy;
	struct rtt_stats rtt;
	double load_share; /* the competitor's CPU share during the measured run */
};

static int run_cell(struct cell *c, enum nt_poll_backend backend, int server_cpu, int client_cpu,
		    double seconds, double warmup)
{
	int ready[2], res[2];
	if (pipe(ready) || pipe(res))
		return -errno;
	unsigned bound = (unsigned)(seconds + warmup) + 30;
	fflush(stdout); /* nothing buffered may be printed again by a child */
	pid_t srv = fork();
	if (srv == 0) {
		close(ready[0]);
		alarm(bound);
		struct server_opts o = { 0, server_cpu, c->work_us, c->policy, backend, ready[1] };
		if (!freopen("/dev/null", "w", stdout)) /* the matrix prints the table only */
			_exit(1);
		_exit(server(&o));
	}
	close(ready[1]);
	int port = 0;
	if (read(ready[0], &port, sizeof port) != (ssize_t)sizeof port) {
		reap(srv, SIGKILL);
		return -EIO;
	}
	close(ready[0]);
	pid_t load = c->load ? start_load(c->load, server_cpu, bound) : 0;
	pid_t cli = fork();
	if (cli == 0) {
		close(res[0]);
		alarm(bound);
		struct rtt_stats r;
		client_run(port, 0, seconds, warmup, c->size, client_cpu, &r);
		_exit(write(res[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
	}
	close(res[1]);
	/* The competitor's share over the measured part of the run. */
	struct timespec w = { (time_t)warmup, (long)((warmup - (double)(time_t)warmup) * 1e9) };
	nanosleep(&w, NULL);
	uint64_t t0 = now_ns(), l0 = load ? proc_cpu_ns(load) : 0;
	ssize_t got = read(res[0], &c->rtt, sizeof c->rtt);
	uint64_t t1 = now_ns(), l1 = load ? proc_cpu_ns(load) : 0;
	close(res[0]);
	waitpid(cli, NULL, 0);
	reap(load, SIGKILL);
	reap(srv, SIGTERM);
	c->load_share = load && t1 > t0 ? (double)(l1 - l0) / (double)(t1 - t0) : 0;
	return got == (ssize_t)sizeof c->rtt ? 0 : -EIO;
}

static int parse_list(const char *opt, const char *v, long *out, int max, long min, long lim)
{
	int n = 0;
	char *copy = strdup(v ? v : ""), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
		out[n++] = strcmp(t, "none") == 0 ? 0 : num(opt, t, min, lim);
	free(copy);
	if (!n)
		die("%s: expected a comma-separated list", opt);
	return n;
}

/* Adaptive against the best fixed policy of the same round, as ratios taken round by round:
 * the rounds run minutes apart, and this VM's speed drifts between them by as much as 10 %
 * (a run's busy p99 ranged 54-103 us over the rounds of one cell), so medians of absolute
 * values compare different machines; a round's policies ran seconds apart. Prints the medians
 * over the rounds of adaptive's mean and p99 over the best fixed policy's, and of its mean
 * over busy's. */
struct ratios {
	int n, nb;               /* rounds compared; rounds with busy */
	double mean, p99, vs_busy; /* medians over the rounds */
};

static void print_ratios(const enum nt_poll_policy *pols, int npol, struct cell runs[][MAX_REPEAT],
			 bool ok[][MAX_REPEAT], int repeat, struct ratios *out)
{
	out->n = out->nb = 0;
	int ad = -1, busy = -1;
	for (int pi = 0; pi < npol; pi++) {
		if (pols[pi] == NT_POLICY_ADAPTIVE)
			ad = pi;
		if (pols[pi] == NT_POLICY_BUSY)
			busy = pi;
	}
	if (ad < 0 || npol < 2)
		return;
	double mean[MAX_REPEAT], p99[MAX_REPEAT], vs_busy[MAX_REPEAT];
	int n = 0, nb = 0;
	for (int r = 0; r < repeat; r++) {
		double best_mean = 0, best_p99 = 0;
		bool all = ok[ad][r];
		for (int pi = 0; pi < npol && all; pi++) {
			if (pi == ad)
				continue;
			all = ok[pi][r];
			const struct rtt_stats *x = &runs[pi][r].rtt;
			if (all && (best_mean == 0 || x->mean_us < best_mean))
				best_mean = x->mean_us;
			if (all && (best_p99 == 0 || x->p99_us < best_p99))
				best_p99 = x->p99_us;
		}
		if (!all || best_mean <= 0 || best_p99 <= 0)
			continue;
		mean[n] = runs[ad][r].rtt.mean_us / best_mean;
		p99[n++] = runs[ad][r].rtt.p99_us / best_p99;
		if (busy >= 0 && runs[busy][r].rtt.mean_us > 0)
			vs_busy[nb++] = runs[ad][r].rtt.mean_us / runs[busy][r].rtt.mean_us;
	}
	if (!n)
		return;
	out->n = n;
	out->mean = median_of(mean, n);
	out->p99 = median_of(p99, n);
	printf("%-6s adaptive / best fixed, median of %d rounds: mean x%.3f, p99 x%.3f", "", n,
	       out->mean, out->p99);
	if (nb) {
		out->nb = nb;
		out->vs_busy = median_of(vs_busy, nb);
		printf("; mean / busy x%.3f", out->vs_busy);
	}
	printf("\n");
	fflush(stdout);
}

/* The matrix's default CPUs: the client on the first CPU this process may run on, the server
 * and its load on the second, or on the same one when the mask has one (fixed CPUs 0 and 1
 * failed in a cpuset without them). -1 (unpinned) when the mask cannot be read. */
/* The JSON document's rows: the table's, as printed. */
struct json_row {
	long size, work_us, load_pct;
	const char *policy;
	double mean_us, p99_us, p999_us, share;
	unsigned long long trips;
};
struct json_ratio {
	long size, work_us, load_pct;
	struct ratios r;
};

static void json_rows(FILE *f, const struct json_row *rows, int nrows,
		      const struct json_ratio *ratios, int nratios)
{
	fputs(",\n  \"rows\": [", f);
	for (int i = 0; i < nrows; i++) {
		const struct json_row *r = &rows[i];
		fprintf(f, "%s\n    { \"size\": %ld, \"work_us\": %ld, \"load_pct\": %ld, "
			   "\"policy\": \"%s\", \"mean_us\": %.10g, \"p99_us\": %.10g, "
			   "\"p999_us\": %.10g, \"trips\": %llu, \"competitor_share\": %.10g }",
			i ? "," : "", r->size, r->work_us, r->load_pct, r->policy, r->mean_us,
			r->p99_us, r->p999_us, r->trips, r->share);
	}
	fputs("\n  ],\n  \"adaptive\": [", f);
	for (int i = 0; i < nratios; i++) {
		const struct json_ratio *r = &ratios[i];
		fprintf(f, "%s\n    { \"size\": %ld, \"work_us\": %ld, \"load_pct\": %ld, "
			   "\"rounds\": %d, \"mean_vs_best\": %.10g, \"p99_vs_best\": %.10g, "
			   "\"mean_vs_busy\": ",
			i ? "," : "", r->size, r->work_us, r->load_pct, r->r.n, r->r.mean, r->r.p99);
		if (r->r.nb)
			fprintf(f, "%.10g }", r->r.vs_busy);
		else
			fputs("null }", f);
	}
	fputs("\n  ]\n}\n", f);
}

static int matrix(int argc, char **argv)
{
	double seconds = 2, warmup = 0.5;
	int server_cpu, client_cpu, repeat = 3;
	default_cpus(&server_cpu, &client_cpu);
	long sizes[4] = { 4, 32768 }, loads[8] = { 0, 15, 50, 100 }, work = 200;
	int nsizes = 2, nloads = 4, npol = 4;
	enum nt_poll_policy pols[4] = { NT_POLICY_BUSY, NT_POLICY_TIMED, NT_POLICY_BLOCKING,
					NT_POLICY_ADAPTIVE };
	enum nt_poll_backend backend = NT_POLL_EPOLL;
	const char *csv_path = NULL, *json_path = NULL;
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--seconds"))
			seconds = real(o, v, 0.05, 3600);
		else if (!strcmp(o, "--warmup-s"))
			warmup = real(o, v, 0, 60);
		else if (!strcmp(o, "--repeat"))
			repeat = (int)num(o, v, 1, MAX_REPEAT);
		else if (!strcmp(o, "--server-cpu"))
			server_cpu = (int)num(o, v, 0, CPU_SETSIZE - 1);
		else if (!strcmp(o, "--client-cpu"))
			client_cpu = (int)num(o, v, 0, CPU_SETSIZE - 1);
		else if (!strcmp(o, "--sizes"))
			nsizes = parse_list(o, v, sizes, 4, 1, MAX_DGRAM);
		else if (!strcmp(o, "--loads"))
			nloads = parse_list(o, v, loads, 8, 1, 100);
		else if (!strcmp(o, "--work-us"))
			work = num(o, v, 1, 1000000);
		else if (!strcmp(o, "--csv") && v)
			csv_path = v;
		else if (!strcmp(o, "--json") && v)
			json_path = v;
		else if (!strcmp(o, "--backend")) {
			if (nt_poll_backend_parse(v, &backend))
				die("--backend: expected select or epoll, got '%s'", v ? v : "");
		} else if (!strcmp(o, "--policies")) {
			npol = 0;
			char *copy = strdup(v ? v : ""), *save = NULL;
			for (char *t = strtok_r(copy, ",", &save); t && npol < 4;
			     t = strtok_r(NULL, ",", &save))
				if (nt_poll_policy_parse(t, &pols[npol++]))
					die("--policies: unknown policy '%s'", t);
			free(copy);
			if (!npol)
				die("--policies: expected a list");
		} else
			die("unknown option '%s'", o);
		i++;
	}
	struct nt_outfile json;
	if (json_path && nt_outfile_open(&json, json_path, false) != 0)
		die("--json: %s", json.why);
	static struct json_row rows[4 * 2 * 8 * 4];
	static struct json_ratio ratios[4 * 2 * 8];
	int nrows = 0, nratios = 0;
	FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
	if (csv_path && !csv)
		die("cannot write '%s'", csv_path);
	if (csv)
		fprintf(csv, "size,work_us,load_pct,policy,run,mean_us,median_us,p99_us,p999_us,max_us,"
			     "round_trips,lost,competitor_share\n");
	printf("udp-pingpong matrix: server on CPU %d with the load, client on CPU %d, backend %s, "
	       "%d rounds of %.1f s per cell after %.1f s of warm-up\n(medians of the rounds; "
	       "adaptive's ratios to the others are taken round by round, then their median)\n",
	       server_cpu, client_cpu, nt_poll_backend_name(backend), repeat, seconds, warmup);
	int status = 0;
	for (int si = 0; si < nsizes; si++) {
		for (int shape = 0; shape < 2; shape++) {
			long w = shape ? work : 0;
			printf("\nsize %ld bytes, %s\n", sizes[si],
			       shape ? "server computes per request" : "echo");
			printf("%-6s %-9s %10s %10s %10s %10s %8s\n", "load", "policy", "mean us",
			       "p99 us", "p99.9 us", "trips", "comp.");
			for (int li = 0; li < nloads; li++) {
				/* Rounds of every policy, the order rotating each round, so that the
				 * machine's slow spells do not land on one policy only. */
				struct cell runs[8][MAX_REPEAT];
				bool ok[8][MAX_REPEAT] = { { false } };
				for (int r = 0; r < repeat; r++) {
					for (int k = 0; k < npol; k++) {
						int pi = (k + r) % npol;
						struct cell *c = &runs[pi][r];
						*c = (struct cell){ .size = sizes[si], .work_us = w,
								    .load = (int)loads[li],
								    .policy = pols[pi] };
						int rc = run_cell(c, backend, server_cpu, client_cpu,
								  seconds, warmup);
						if (rc) {
							fprintf(stderr, "udp-pingpong: cell failed: %s\n",
								strerror(-rc));
							status = 1;
							continue;
						}
						ok[pi][r] = true;
						if (csv)
							fprintf(csv, "%ld,%ld,%ld,%s,%d,%.2f,%.2f,%.2f,%.2f,"
								     "%.2f,%llu,%llu,%.3f\n",
								sizes[si], w, loads[li],
								nt_poll_policy_name(pols[pi]), r + 1,
								c->rtt.mean_us, c->rtt.median_us,
								c->rtt.p99_us, c->rtt.p999_us,
								c->rtt.max_us,
								(unsigned long long)c->rtt.n,
								(unsigned long long)c->rtt.lost,
								c->load_share);
					}
				}
				for (int pi = 0; pi < npol; pi++) {
					double mean[MAX_REPEAT], p99[MAX_REPEAT], p999[MAX_REPEAT],
						share[MAX_REPEAT];
					uint64_t trips = 0;
					int n = 0;
					for (int r = 0; r < repeat; r++) {
						if (!ok[pi][r])
							continue;
						mean[n] = runs[pi][r].rtt.mean_us;
						p99[n] = runs[pi][r].rtt.p99_us;
						p999[n] = runs[pi][r].rtt.p999_us;
						share[n] = runs[pi][r].load_share;
						trips += runs[pi][r].rtt.n;
						n++;
					}
					if (!n)
						continue;
					char load_name[8];
					snprintf(load_name, sizeof load_name, "%ld%%", loads[li]);
					struct json_row *jr = &rows[nrows++];
					*jr = (struct json_row){ sizes[si], w, loads[li],
								 nt_poll_policy_name(pols[pi]),
								 median_of(mean, n), median_of(p99, n),
								 median_of(p999, n), median_of(share, n),
								 (unsigned long long)trips };
					printf("%-6s %-9s %10.1f %10.1f %10.1f %10llu %8.2f\n",
					       loads[li] ? load_name : "none", jr->policy, jr->mean_us,
					       jr->p99_us, jr->p999_us, jr->trips, jr->share);
					fflush(stdout);
				}
				struct json_ratio *ra = &ratios[nratios];
				*ra = (struct json_ratio){ sizes[si], w, loads[li], { 0 } };
				print_ratios(pols, npol, runs, ok, repeat, &ra->r);
				nratios += ra->r.n > 0;
			}
		}
	}
	if (csv)
		fclose(csv);
	if (json_path) {
		fprintf(json.f, "{\n  \"schema\": \"noisetool-udp-pingpong/1\",\n"
				"  \"server_cpu\": %d,\n  \"client_cpu\": %d,\n  \"backend\": \"%s\",\n"
				"  \"seconds\": %.10g,\n  \"warmup_s\": %.10g,\n  \"repeat\": %d",
			server_cpu, client_cpu, nt_poll_backend_name(backend), seconds, warmup,
			repeat);
		json_rows(json.f, rows, nrows, ratios, nratios);
		if (ferror(json.f)) {
			fprintf(stderr, "udp-pingpong: --json: writing '%s' failed\n", json_path);
			nt_outfile_abort(&json);
			status = 1;
		} else if (nt_outfile_commit(&json) != 0) {
			fprintf(stderr, "udp-pingpong: --json: %s\n", json.why);
			status = 1;
		}
	}
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "matrix"))
		return matrix(argc - 2, argv + 2);
	struct server_opts so = { -1, -1, 0, NT_POLICY_ADAPTIVE, NT_POLL_EPOLL, -1 };
	long count = 20000, size = 4;
	double seconds = 0, warmup = 0;
	int have_policy = 0;
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--port"))
			so.port = (int)num(o, v, 1, 65535);
		else if (!strcmp(o, "--cpu"))
			so.cpu = (int)num(o, v, 0, CPU_SETSIZE - 1);
		else if (!strcmp(o, "--work-us") && !strcmp(cmd, "server"))
			so.work_us = num(o, v, 0, 1000000);
		else if (!strcmp(o, "--policy") && !strcmp(cmd, "server")) {
			if (nt_poll_policy_parse(v, &so.policy))
				die("--policy: expected busy, timed, blocking or adaptive, got '%s'",
				    v ? v : "");
			have_policy = 1;
		} else if (!strcmp(o, "--backend") && !strcmp(cmd, "server")) {
			if (nt_poll_backend_parse(v, &so.backend))
				die("--backend: expected select or epoll, got '%s'", v ? v : "");
		} else if (!strcmp(o, "--count") && !strcmp(cmd, "client"))
			count = num(o, v, 1, 100000000);
		else if (!strcmp(o, "--seconds") && !strcmp(cmd, "client"))
			seconds = real(o, v, 0.001, 3600);
		else if (!strcmp(o, "--warmup-s") && !strcmp(cmd, "client"))
			warmup = real(o, v, 0, 3600);
		else if (!strcmp(o, "--size") && !strcmp(cmd, "client"))
			size = num(o, v, 1, MAX_DGRAM);
		else
			die("unknown option '%s'", o);
		i++;
	}
	if (so.port < 0)
		die("--port is required");
	if (!strcmp(cmd, "server")) {
		if (!have_policy)
			die("--policy is required");
		return server(&so);
	}
	if (!strcmp(cmd, "client")) {
		struct rtt_stats r;
		if (client_run(so.port, count, seconds, warmup, size, so.cpu, &r))
			return 1;
		printf("client: %llu round trips of %ld bytes (%llu lost): mean %.1f us, median %.1f "
		       "us, p99 %.1f us, p99.9 %.1f us, max %.1f us\n",
		       (unsigned long long)r.n, size, (unsigned long long)r.lost, r.mean_us,
		       r.median_us, r.p99_us, r.p999_us, r.max_us);
		return r.n ? 0 : 1;
	}
	die("unknown command '%s' (server, client or matrix)", cmd);
	return 2;
}
