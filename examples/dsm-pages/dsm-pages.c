/* A software DSM's page traffic in miniature (Thitikamol & Keleher's CVM setting): a home node
 * serves 4 KiB pages to a client over UDP, one request outstanding, while a CPU hog may share
 * the home's CPU. Both nodes wait in a runtime-style progress loop: nonblocking receives, and
 * between them what the policy says: busy (try again), blocking (sleep in recv until a
 * datagram comes), or adaptive (the poller's spin-or-sleep decision without fds:
 * nt_poller_decide, nt_poller_nap, nt_poller_event; doc/polling.md, "For runtimes with their
 * own progress loop").
 *
 *   dsm-pages matrix [--seconds S | --requests N] [--repeat R] [--settings none,hog]
 *                    [--policies busy,blocking,adaptive] [--hog-beside home|client]
 *                    [--home-cpu C] [--client-cpu C] [--pages P] [--write-every K]
 *                    [--work-us W] [--nap-us U] [--warmup-s S] [--quiet-share Q]
 *                    [--malformed K] [--csv FILE]
 *
 * Reads get the page's bytes from the home; writes send a new version of a page (a whole page,
 * as a twin-less DSM flushes it) and get an acknowledgement. The client checks every page it
 * reads against the last version it wrote, so a wrong byte anywhere is counted. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

#include <noisetool/poller.h>

#include "../common/duty-load.h"
#define EXAMPLE_NAME "dsm-pages"
#include "../common/example-util.h"

enum { PAGE_BYTES = 4096, MAX_PAGES = 65536, MAGIC = 0x44534d50 /* DSMP */ };
enum op { OP_READ = 1, OP_WRITE = 2, OP_REPLY = 0x80 };

struct hdr {
	uint32_t magic, op;
	uint64_t seq;
	uint32_t page, version;
};

struct msg {
	struct hdr h;
	unsigned char data[PAGE_BYTES];
};

static const char usage[] =
	"Usage: dsm-pages matrix [--seconds S | --requests N] [--repeat R] [--settings none,hog]\n"
	"                        [--policies busy,blocking,adaptive] [--hog-beside home|client]\n"
	"                        [--home-cpu C] [--client-cpu C] [--pages P] [--write-every K]\n"
	"                        [--work-us W] [--nap-us U] [--warmup-s S] [--quiet-share Q]\n"
	"                        [--malformed K] [--csv FILE]\n"
	"\n"
	"For each setting (none: the CPUs to themselves; hog: a spinning process pinned beside the\n"
	"home, or the client with --hog-beside client) and policy, runs a home serving P pages\n"
	"(default 256) of 4096 bytes and a client that reads and writes random pages, one request\n"
	"outstanding (every K-th a write, default 2), for S seconds (default 2, after --warmup-s 0.5)\n"
	"or exactly N requests (no warm-up), R times (default 3) in rounds whose policy order\n"
	"rotates. Prints per setting and policy the medians over the rounds of the mean, p50 and p99\n"
	"request latency, requests per second, the hog's CPU share and the share other tasks took\n"
	"on the two CPUs, the requests the client completed and the home served, pages that came\n"
	"back wrong and requests lost; then adaptive's mean over the best fixed policy's, taken\n"
	"round by round (median) over the rounds where other tasks took at most Q of a CPU in\n"
	"every run (default 0.05), and a verdict (within 1.1x, or OVER BUDGET).\n"
	"--malformed K: a malformed datagram before every K-th request, which the home drops and\n"
	"counts (the CSV's dropped). --csv FILE: every run.\n"
	"--work-us W: the home computes W us per request (default 0). --nap-us U: adaptive's nap\n"
	"while it sleeps (default 10, with 1 us timer slack). The client runs on the first CPU of\n"
	"the affinity mask, the home on the second (the first when there is one), unless given.\n";

/* The bytes of version v of a page: every word a hash of (page, version, word). */
static void fill(unsigned char *data, uint32_t page, uint32_t version)
{
	uint64_t w[PAGE_BYTES / 8];
	for (unsigned i = 0; i < PAGE_BYTES / 8; i++) {
		uint64_t z = ((uint64_t)page << 40) ^ ((uint64_t)version << 12) ^ i;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
		w[i] = z ^ (z >> 31);
	}
	memcpy(data, w, sizeof w);
}

/* ---- the progress loop: one wait for a datagram, by policy ---- */

struct waiter {
	enum nt_poll_policy policy;
	int fd;
	struct nt_poller *poller; /* adaptive: the decision alone, no fds */
	uint64_t nap_ns;
	enum nt_poll_mode mode;   /* adaptive: the answer in force, until until_ns */
	uint64_t until_ns;
	uint64_t naps, decisions; /* telemetry */
};

/* An answer of nt_poller_decide holds for its slice; asking again at least every ms keeps the
 * measurements current (a decision reads schedstat, 0.6 us here, or when due /proc/stat, 6 us:
 * asked per attempt, it would cost more than a busy attempt). */
#define DECIDE_EVERY_NS 1000000u

static int waiter_init(struct waiter *w, enum nt_poll_policy policy, int fd, uint64_t nap_ns)
{
	*w = (struct waiter){ .policy = policy, .fd = fd, .nap_ns = nap_ns };
	if (policy != NT_POLICY_ADAPTIVE)
		return 0;
	struct nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
	cfg.timer_slack_ns = 1000; /* a 10 us nap: 30-40 us here (VM wake-up), 85 us with 50 us */
	return nt_poller_create(&w->poller, &cfg);
}

/* Receive one datagram into buf: >= 0 its length (more than cap: truncated), -ETIMEDOUT after
 * timeout_ns, -EINTR when stop was set, or another -errno. */
static ssize_t wait_recv(struct waiter *w, void *buf, size_t cap, struct sockaddr_in *from,
			 uint64_t timeout_ns)
{
	uint64_t deadline = now_ns() + timeout_ns;
	socklen_t fl = sizeof *from;
	for (;;) {
		/* The progress call: a nonblocking receive. */
		ssize_t n = recvfrom(w->fd, buf, cap, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)from,
				     &fl);
		if (n >= 0) {
			if (w->poller)
				nt_poller_event(w->poller); /* one wait done: its cycle counts */
			return n;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if (stop)
			return -EINTR;
		uint64_t now = now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (w->policy == NT_POLICY_BUSY)
			continue;
		if (w->policy == NT_POLICY_BLOCKING) {
			/* Sleep in the kernel until a datagram is there (at most until the deadline,
			 * and 0.1 s to see stop). */
			uint64_t left = deadline - now, cap_ns = 100000000;
			int ms = (int)((left < cap_ns ? left : cap_ns) / 1000000) + 1;
			struct pollfd pfd = { w->fd, POLLIN, 0 };
			poll(&pfd, 1, ms);
			continue;
		}
		/* Adaptive: the poller's decision, asked again when the last one's slice (at most
		 * 1 ms) has run out. */
		if (now >= w->until_ns) {
			uint64_t slice;
			w->mode = nt_poller_decide(w->poller, &slice);
			w->until_ns = now + (slice < DECIDE_EVERY_NS ? slice : DECIDE_EVERY_NS);
			w->decisions++;
		}
		if (w->mode == NT_MODE_SLEEP) {
			nt_poller_nap(w->poller, w->nap_ns);
			w->naps++;
		}
	}
}

/* ---- home ---- */

struct home_stats {
	uint64_t served, reads, writes, bad;
	uint64_t naps, decisions;
	struct nt_poller_stats poller;
};

struct home_opts {
	int cpu, ready_fd, stats_fd;
	enum nt_poll_policy policy;
	long pages, work_us;
	uint64_t nap_ns;
};

static int udp_socket(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int big = 1 << 20;
	if (s >= 0) {
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
		setsockopt(s, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
	}
	return s;
}

/* Serve until SIGTERM; then write struct home_stats to stats_fd. */
static int home(const struct home_opts *o)
{
	pin(o->cpu);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	unsigned char(*pages)[PAGE_BYTES] = malloc((size_t)o->pages * PAGE_BYTES);
	uint32_t *version = calloc((size_t)o->pages, sizeof *version);
	int s = udp_socket();
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	if (!pages || !version || s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) ||
	    getsockname(s, (struct sockaddr *)&a, &len)) {
		perror("dsm-pages: home");
		return 1;
	}
	for (long p = 0; p < o->pages; p++)
		fill(pages[p], (uint32_t)p, 0);
	int port = ntohs(a.sin_port);
	if (write(o->ready_fd, &port, sizeof port) != (ssize_t)sizeof port)
		return 1;
	close(o->ready_fd);
	struct waiter w;
	int rc = waiter_init(&w, o->policy, s, o->nap_ns);
	if (rc) {
		fprintf(stderr, "dsm-pages: poller: %s\n", strerror(-rc));
		return 1;
	}
	struct home_stats st = { 0 };
	static struct msg in, out;
	while (!stop) {
		struct sockaddr_in from;
		ssize_t n = wait_recv(&w, &in, sizeof in, &from, 100000000);
		if (n < 0)
			continue; /* timeout or stop: look at stop */
		bool ok = n >= (ssize_t)sizeof in.h && in.h.magic == MAGIC && in.h.page < o->pages;
		size_t reply = sizeof out.h;
		if (ok && in.h.op == OP_READ && n == (ssize_t)sizeof in.h) {
			out.h = (struct hdr){ MAGIC, OP_READ | OP_REPLY, in.h.seq, in.h.page,
					      version[in.h.page] };
			memcpy(out.data, pages[in.h.page], PAGE_BYTES);
			reply = sizeof out;
			st.reads++;
		} else if (ok && in.h.op == OP_WRITE && n == (ssize_t)sizeof in &&
			   in.h.version == version[in.h.page] + 1) {
			memcpy(pages[in.h.page], in.data, PAGE_BYTES);
			version[in.h.page] = in.h.version;
			out.h = (struct hdr){ MAGIC, OP_WRITE | OP_REPLY, in.h.seq, in.h.page,
					      in.h.version };
			st.writes++;
		} else {
			st.bad++; /* malformed or out of order: dropped, the home keeps serving */
			continue;
		}
		if (o->work_us)
			work_us(o->work_us);
		sendto(s, &out, reply, 0, (struct sockaddr *)&from, sizeof from);
		st.served++;
	}
	st.naps = w.naps;
	st.decisions = w.decisions;
	if (w.poller) {
		nt_poller_get_stats(w.poller, &st.poller);
		nt_poller_destroy(w.poller);
	}
	close(s);
	return write(o->stats_fd, &st, sizeof st) == (ssize_t)sizeof st ? 0 : 1;
}

/* ---- client ---- */

struct client_stats {
	uint64_t n, lost, wrong;
	double mean_us, p50_us, p99_us, per_s;
	uint64_t naps, decisions;
	enum nt_poll_mode mode;
};

struct client_opts {
	int cpu, port;
	enum nt_poll_policy policy;
	long pages, write_every, requests, malformed;
	double seconds, warmup;
	uint64_t nap_ns;
};

/* Requests for o->seconds after o->warmup (or exactly o->requests), one outstanding. */
static int client(const struct client_opts *o, struct client_stats *out)
{
	pin(o->cpu);
	int s = udp_socket();
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a))
		return -errno;
	struct waiter w;
	int rc = waiter_init(&w, o->policy, s, o->nap_ns);
	uint32_t *version = calloc((size_t)o->pages, sizeof *version);
	size_t cap = o->requests > 0 ? (size_t)o->requests : 1u << 16;
	uint64_t *lat = malloc(cap * sizeof *lat);
	if (rc || !version || !lat)
		return rc ? rc : -ENOMEM;
	static struct msg req, rep;
	static unsigned char want[PAGE_BYTES];
	uint64_t rng = 0x9e3779b97f4a7c15u ^ (uint64_t)getpid();
	uint64_t n = 0, lost = 0, wrong = 0, t_start = now_ns();
	uint64_t t_warm = t_start + (uint64_t)(o->warmup * 1e9);
	uint64_t t_end = o->requests > 0 ? UINT64_MAX : t_warm + (uint64_t)(o->seconds * 1e9);
	uint64_t t_first = 0, t_last = 0;
	for (uint64_t seq = 1;; seq++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		uint32_t page = (uint32_t)(rng % (uint64_t)o->pages);
		bool is_write = o->write_every > 0 && seq % (uint64_t)o->write_every == 0;
		size_t len = sizeof req.h;
		req.h = (struct hdr){ MAGIC, OP_READ, seq, page, version[page] };
		if (is_write) {
			req.h.op = OP_WRITE;
			req.h.version = version[page] + 1;
			fill(req.data, page, req.h.version);
			len = sizeof req;
		}
		if (o->requests > 0 ? n >= (uint64_t)o->requests : now_ns() >= t_end)
			break;
		if (o->malformed > 0 && seq % (uint64_t)o->malformed == 0) {
			/* A datagram no home understands (too short, wrong magic): dropped and
			 * counted there, without a reply. */
			static const char junk[5] = "junk";
			send(s, junk, sizeof junk, 0);
		}
		uint64_t t0 = now_ns();
		if (send(s, &req, len, 0) != (ssize_t)len) {
			lost++;
			continue;
		}
		ssize_t got;
		struct sockaddr_in from;
		do /* a late reply to an earlier, lost request is skipped */
			got = wait_recv(&w, &rep, sizeof rep, &from, 1000000000);
		while (got >= (ssize_t)sizeof rep.h && rep.h.seq != seq);
		uint64_t t1 = now_ns();
		if (got < 0) {
			lost++; /* a write that got no ack may or may not have been applied */
			if (is_write)
				version[page] = UINT32_MAX; /* unknown now: not checked any more */
			continue;
		}
		bool ok = rep.h.magic == MAGIC && rep.h.op == (req.h.op | OP_REPLY) &&
			  rep.h.page == page && rep.h.version == req.h.version;
		if (ok && !is_write && version[page] != UINT32_MAX) {
			fill(want, page, version[page]);
			ok = got == (ssize_t)sizeof rep && memcmp(rep.data, want, PAGE_BYTES) == 0;
		} else if (ok) {
			ok = got == (ssize_t)(is_write ? sizeof rep.h : sizeof rep);
		}
		wrong += !ok;
		if (is_write && ok)
			version[page] = req.h.version;
		if (t0 < t_warm)
			continue;
		if (n == cap) {
			uint64_t *grown = realloc(lat, 2 * cap * sizeof *lat);
			if (!grown)
				break;
			lat = grown;
			cap *= 2;
		}
		if (!n)
			t_first = t0;
		t_last = t1;
		lat[n++] = t1 - t0;
	}
	*out = (struct client_stats){ .n = n, .lost = lost, .wrong = wrong, .naps = w.naps,
				      .decisions = w.decisions };
	if (w.poller) {
		out->mode = nt_poller_preference(w.poller);
		nt_poller_destroy(w.poller);
	}
	if (n) {
		double sum = 0;
		for (uint64_t i = 0; i < n; i++)
			sum += (double)lat[i];
		qsort(lat, n, sizeof *lat, cmp_u64);
		out->mean_us = sum / (double)n / 1e3;
		out->p50_us = (double)lat[n / 2] / 1e3;
		out->p99_us = (double)lat[(uint64_t)((double)(n - 1) * 0.99)] / 1e3;
		out->per_s = t_last > t_first ? (double)n / ((double)(t_last - t_first) / 1e9) : 0;
	}
	free(lat);
	free(version);
	close(s);
	return 0;
}

/* ---- matrix ---- */

/* CPU time of a process so far, ns (/proc/PID/schedstat's run time). */
/* Busy time (everything but idle and iowait) of one CPU so far, ns, from /proc/stat (10 ms
 * ticks); 0 when unreadable. */
static uint64_t cpu_busy_ns(int cpu)
{
	static char buf[65536];
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || cpu < 0)
		return fd < 0 ? 0 : (close(fd), 0);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char key[32];
	snprintf(key, sizeof key, "\ncpu%d ", cpu);
	const char *line = strstr(buf, key);
	unsigned long long v[8] = { 0 };
	if (!line || sscanf(line + strlen(key), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 4)
		return 0;
	uint64_t ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	return ticks * (1000000000u / (uint64_t)sysconf(_SC_CLK_TCK));
}

struct run {
	struct client_stats c;
	struct home_stats h;
	double hog_share; /* the hog's CPU time over the measured wall time */
	double others;    /* CPU time other tasks took on the two CPUs, over the wall time */
	bool ok;
};

struct setup {
	int home_cpu, client_cpu, hog_cpu; /* hog_cpu < 0: no hog */
	long pages, write_every, work_us, requests, malformed;
	double seconds, warmup;
	uint64_t nap_ns;
};

static int run_one(const struct setup *su, enum nt_poll_policy policy, struct run *r)
{
	int ready[2], stats[2], res[2];
	if (pipe(ready) || pipe(stats) || pipe(res))
		return -errno;
	unsigned bound = (unsigned)(su->seconds + su->warmup) + 60;
	fflush(stdout);
	pid_t home_pid = fork();
	if (home_pid == 0) {
		close(ready[0]);
		close(stats[0]);
		alarm(bound);
		struct home_opts o = { su->home_cpu, ready[1], stats[1], policy, su->pages,
				       su->work_us, su->nap_ns };
		_exit(home(&o));
	}
	close(ready[1]);
	close(stats[1]);
	int port = 0;
	if (read(ready[0], &port, sizeof port) != (ssize_t)sizeof port) {
		reap(home_pid, SIGKILL);
		return -EIO;
	}
	close(ready[0]);
	pid_t hog = -1;
	if (su->hog_cpu >= 0 && (hog = fork()) == 0) {
		alarm(bound);
		pin(su->hog_cpu);
		duty_load_forever(100);
	}
	pid_t cli = fork();
	if (cli == 0) {
		close(res[0]);
		alarm(bound);
		struct client_opts o = { su->client_cpu, port, policy, su->pages, su->write_every,
					 su->requests, su->malformed, su->seconds, su->warmup,
					 su->nap_ns };
		struct client_stats c;
		int rc = client(&o, &c);
		_exit(rc == 0 && write(res[1], &c, sizeof c) == (ssize_t)sizeof c ? 0 : 1);
	}
	close(res[1]);
	/* The hog's share over the measured part (after the warm-up). */
	struct timespec wu = { (time_t)su->warmup,
			       (long)((su->warmup - (double)(time_t)su->warmup) * 1e9) };
	nanosleep(&wu, NULL);
	bool two = su->home_cpu != su->client_cpu;
	uint64_t t0 = now_ns(), l0 = hog > 0 ? proc_cpu_ns(hog) : 0;
	uint64_t ours0 = l0 + proc_cpu_ns(home_pid) + proc_cpu_ns(cli);
	uint64_t busy0 = cpu_busy_ns(su->home_cpu) + (two ? cpu_busy_ns(su->client_cpu) : 0);
	ssize_t got = read(res[0], &r->c, sizeof r->c);
	/* The client has written its result: it is done, and its schedstat stays readable until
	 * it is reaped. */
	uint64_t t1 = now_ns(), l1 = hog > 0 ? proc_cpu_ns(hog) : 0;
	uint64_t ours1 = l1 + proc_cpu_ns(home_pid) + proc_cpu_ns(cli);
	uint64_t busy1 = cpu_busy_ns(su->home_cpu) + (two ? cpu_busy_ns(su->client_cpu) : 0);
	close(res[0]);
	waitpid(cli, NULL, 0);
	reap(hog, SIGKILL);
	kill(home_pid, SIGTERM);
	ssize_t hgot = read(stats[0], &r->h, sizeof r->h);
	close(stats[0]);
	waitpid(home_pid, NULL, 0);
	r->hog_share = hog > 0 && t1 > t0 ? (double)(l1 - l0) / (double)(t1 - t0) : 0;
	double others = (double)(busy1 - busy0) - (double)(ours1 - ours0);
	/* /proc/stat counts 10 ms ticks: one per CPU is doubt, not another task. */
	others -= (two ? 2 : 1) * 1e9 / (double)sysconf(_SC_CLK_TCK);
	r->others = t1 > t0 && others > 0 ? others / (double)(t1 - t0) : 0;
	r->ok = got == (ssize_t)sizeof r->c && hgot == (ssize_t)sizeof r->h;
	return r->ok ? 0 : -EIO;
}

enum { MAX_REPEAT = 15, MAX_POL = 3 };

/* The client on the first CPU of the affinity mask, the home on the second (or the first). */
static const char *mode_name(enum nt_poll_mode m)
{
	return m == NT_MODE_SPIN ? "spin" : "sleep";
}

/* A round counts in adaptive's ratio when in each of its runs other tasks took at most this
 * share of the two CPUs (a machine with other work on it changes speed between the runs). */
static double quiet_share = 0.05;

/* One setting's rows: every policy R times, the order rotating by round. Returns the number of
 * failed runs; *verdicts counts the settings judged and *over those where adaptive's median
 * ratio to the best fixed policy is over 1.1. */
static int setting(const struct setup *su, const char *name, const enum nt_poll_policy *pols,
		   int npol, int repeat, FILE *csv, int *verdicts, int *over)
{
	static struct run runs[MAX_POL][MAX_REPEAT];
	int failed = 0;
	memset(runs, 0, sizeof runs);
	for (int r = 0; r < repeat; r++)
		for (int k = 0; k < npol; k++) {
			int pi = (k + r) % npol;
			if (run_one(su, pols[pi], &runs[pi][r]) != 0) {
				fprintf(stderr, "dsm-pages: a %s run under %s failed\n",
					nt_poll_policy_name(pols[pi]), name);
				failed++;
				continue;
			}
			const struct run *x = &runs[pi][r];
			if (csv)
				fprintf(csv, "%s,%s,%d,%.2f,%.2f,%.2f,%.0f,%.3f,%.3f,%llu,%llu,%llu,%llu,"
					     "%llu,%llu,%s,%llu\n",
					name, nt_poll_policy_name(pols[pi]), r + 1, x->c.mean_us,
					x->c.p50_us, x->c.p99_us, x->c.per_s, x->hog_share, x->others,
					(unsigned long long)x->c.n, (unsigned long long)x->h.served,
					(unsigned long long)x->c.wrong, (unsigned long long)x->c.lost,
					(unsigned long long)x->h.bad, (unsigned long long)x->h.naps,
					pols[pi] == NT_POLICY_ADAPTIVE ? mode_name(x->h.poller.mode)
								       : "-",
					(unsigned long long)x->h.poller.switches);
		}
	int ad = -1;
	for (int pi = 0; pi < npol; pi++) {
		double mean[MAX_REPEAT], p50[MAX_REPEAT], p99[MAX_REPEAT], per_s[MAX_REPEAT],
			share[MAX_REPEAT], others[MAX_REPEAT];
		uint64_t n = 0, served = 0, wrong = 0, lost = 0, sleeping = 0;
		int k = 0;
		for (int r = 0; r < repeat; r++) {
			const struct run *x = &runs[pi][r];
			if (!x->ok)
				continue;
			mean[k] = x->c.mean_us;
			p50[k] = x->c.p50_us;
			p99[k] = x->c.p99_us;
			per_s[k] = x->c.per_s;
			others[k] = x->others;
			share[k++] = x->hog_share;
			n += x->c.n;
			served += x->h.served;
			wrong += x->c.wrong;
			lost += x->c.lost;
			sleeping += x->h.poller.mode == NT_MODE_SLEEP;
		}
		if (pols[pi] == NT_POLICY_ADAPTIVE)
			ad = pi;
		if (!k)
			continue;
		char home_mode[32] = "";
		if (pols[pi] == NT_POLICY_ADAPTIVE)
			snprintf(home_mode, sizeof home_mode, "  home sleeps in %llu/%d",
				 (unsigned long long)sleeping, k);
		printf("%-7s %-9s %9.1f %9.1f %9.1f %9.0f %6.2f %6.2f %9llu %9llu %5llu %5llu%s\n",
		       name, nt_poll_policy_name(pols[pi]), median_of(mean, k), median_of(p50, k),
		       median_of(p99, k), median_of(per_s, k),
		       su->hog_cpu >= 0 ? median_of(share, k) : 0, median_of(others, k),
		       (unsigned long long)n, (unsigned long long)served, (unsigned long long)wrong,
		       (unsigned long long)lost, home_mode);
	}
	/* Adaptive against the best fixed policy of the same round (the machine drifts between
	 * rounds; a round's runs are seconds apart), over the quiet rounds. */
	if (ad >= 0 && npol > 1) {
		double ratio[MAX_REPEAT];
		int k = 0, busy_rounds = 0, best_pi = -1, best_count[MAX_POL] = { 0 };
		for (int r = 0; r < repeat; r++) {
			double best = 0;
			int bpi = -1;
			bool all = runs[ad][r].ok, quiet = true;
			for (int pi = 0; pi < npol && all; pi++) {
				all = runs[pi][r].ok && runs[pi][r].c.n > 0;
				quiet = quiet && runs[pi][r].others <= quiet_share;
				if (pi != ad && all && (bpi < 0 || runs[pi][r].c.mean_us < best)) {
					best = runs[pi][r].c.mean_us;
					bpi = pi;
				}
			}
			if (!all || bpi < 0 || best <= 0)
				continue;
			if (!quiet) {
				busy_rounds++;
				continue;
			}
			best_count[bpi]++;
			ratio[k++] = runs[ad][r].c.mean_us / best;
		}
		for (int pi = 0; pi < npol; pi++)
			if (pi != ad && (best_pi < 0 || best_count[pi] > best_count[best_pi]))
				best_pi = pi;
		if (k) {
			double m = median_of(ratio, k);
			++*verdicts;
			*over += m > 1.1;
			printf("%-7s adaptive / best fixed (mostly %s): mean x%.3f, median of %d quiet "
			       "round(s)%s  %s\n",
			       "", nt_poll_policy_name(pols[best_pi]), m, k,
			       busy_rounds ? " (others' CPU share over the limit in the rest)" : "",
			       m <= 1.1 ? "within 1.1x" : "OVER BUDGET (1.1x)");
		} else {
			printf("%-7s adaptive / best fixed: no verdict, %d round(s) with other tasks on "
			       "the CPUs (over %.2f of a CPU)\n",
			       "", busy_rounds, quiet_share);
		}
	}
	fflush(stdout);
	return failed;
}

static int matrix(int argc, char **argv)
{
	struct setup su = { .pages = 256, .write_every = 2, .seconds = 2, .warmup = 0.5,
			    .nap_ns = 10000 };
	int repeat = 3, npol = 3;
	bool hog_beside_home = true, settings[2] = { true, true };
	enum nt_poll_policy pols[MAX_POL] = { NT_POLICY_BUSY, NT_POLICY_BLOCKING,
					      NT_POLICY_ADAPTIVE };
	const char *csv_path = NULL;
	bool warmup_given = false;
	default_cpus(&su.home_cpu, &su.client_cpu);
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--seconds"))
			su.seconds = real(o, v, 0.05, 3600);
		else if (!strcmp(o, "--requests"))
			su.requests = num(o, v, 1, 100000000);
		else if (!strcmp(o, "--warmup-s"))
			su.warmup = real(o, v, 0, 60), warmup_given = true;
		else if (!strcmp(o, "--repeat"))
			repeat = (int)num(o, v, 1, MAX_REPEAT);
		else if (!strcmp(o, "--home-cpu"))
			su.home_cpu = (int)num(o, v, 0, CPU_SETSIZE - 1);
		else if (!strcmp(o, "--client-cpu"))
			su.client_cpu = (int)num(o, v, 0, CPU_SETSIZE - 1);
		else if (!strcmp(o, "--pages"))
			su.pages = num(o, v, 1, MAX_PAGES);
		else if (!strcmp(o, "--write-every"))
			su.write_every = num(o, v, 0, 1000000);
		else if (!strcmp(o, "--work-us"))
			su.work_us = num(o, v, 0, 1000000);
		else if (!strcmp(o, "--nap-us"))
			su.nap_ns = (uint64_t)num(o, v, 1, 1000000) * 1000;
		else if (!strcmp(o, "--csv") && v)
			csv_path = v;
		else if (!strcmp(o, "--malformed"))
			su.malformed = num(o, v, 0, 1000000);
		else if (!strcmp(o, "--quiet-share"))
			quiet_share = real(o, v, 0, 2);
		else if (!strcmp(o, "--hog-beside")) {
			if (!v || (strcmp(v, "home") && strcmp(v, "client")))
				die("--hog-beside: expected home or client");
			hog_beside_home = !strcmp(v, "home");
		} else if (!strcmp(o, "--settings")) {
			settings[0] = settings[1] = false;
			char *copy = strdup(v ? v : ""), *save = NULL;
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (!strcmp(t, "none"))
					settings[0] = true;
				else if (!strcmp(t, "hog"))
					settings[1] = true;
				else
					die("--settings: expected none and/or hog, got '%s'", t);
			}
			free(copy);
			if (!settings[0] && !settings[1])
				die("--settings: expected none, hog or none,hog");
		} else if (!strcmp(o, "--policies")) {
			npol = 0;
			char *copy = strdup(v ? v : ""), *save = NULL;
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (npol == MAX_POL || nt_poll_policy_parse(t, &pols[npol]) ||
				    pols[npol] == NT_POLICY_TIMED)
					die("--policies: expected busy, blocking and/or adaptive, got '%s'", t);
				npol++;
			}
			free(copy);
			if (!npol)
				die("--policies: expected a list");
		} else
			die("unknown option '%s'", o);
		i++;
	}
	if (su.requests > 0 && !warmup_given)
		su.warmup = 0; /* exact counts: every request is measured */
	FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
	if (csv_path && !csv)
		die("cannot write '%s'", csv_path);
	if (csv)
		fprintf(csv, "setting,policy,round,mean_us,p50_us,p99_us,requests_per_s,hog_share,"
			     "others_share,requests,served,wrong,lost,dropped,home_naps,home_mode,"
			     "home_switches\n");
	printf("dsm-pages matrix: home on CPU %d, client on CPU %d, hog beside the %s; %ld pages of "
	       "%d bytes, 1 request in %ld a write, home work %ld us, adaptive naps %llu us\n",
	       su.home_cpu, su.client_cpu, hog_beside_home ? "home" : "client", su.pages,
	       PAGE_BYTES, su.write_every, su.work_us, (unsigned long long)(su.nap_ns / 1000));
	if (su.requests > 0)
		printf("%d round(s) of %ld requests per policy (medians of the rounds)\n", repeat,
		       su.requests);
	else
		printf("%d round(s) of %.1f s per policy after %.1f s of warm-up (medians of the "
		       "rounds)\n",
		       repeat, su.seconds, su.warmup);
	printf("(hog: the hog's CPU share; others: other tasks' on the two CPUs, a round counts in the "
	       "ratio when <= %.2f in all its runs)\n",
	       quiet_share);
	printf("%-7s %-9s %9s %9s %9s %9s %6s %6s %9s %9s %5s %5s\n", "setting", "policy", "mean us",
	       "p50 us", "p99 us", "req/s", "hog", "others", "requests", "served", "wrong", "lost");
	int failed = 0, verdicts = 0, over = 0, nsettings = settings[0] + settings[1];
	for (int s = 0; s < 2; s++) {
		if (!settings[s])
			continue;
		su.hog_cpu = s ? (hog_beside_home ? su.home_cpu : su.client_cpu) : -1;
		failed += setting(&su, s ? "hog" : "no hog", pols, npol, repeat, csv, &verdicts, &over);
	}
	if (csv)
		fclose(csv);
	if (over)
		printf("verdict: adaptive over 1.1x of the best fixed policy in %d of %d setting(s): "
		       "OVER BUDGET\n",
		       over, nsettings);
	else if (verdicts < nsettings)
		printf("verdict: none for %d of %d setting(s) (no quiet round with adaptive and a "
		       "fixed policy)%s\n",
		       nsettings - verdicts, nsettings,
		       verdicts ? "; adaptive within 1.1x in the other(s)" : "");
	else
		printf("verdict: adaptive within 1.1x of the best fixed policy in all %d setting(s)\n",
		       nsettings);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "matrix"))
		return matrix(argc - 2, argv + 2);
	die("unknown command '%s' (matrix)", argv[1]);
}
