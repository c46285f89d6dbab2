/* An event loop on the installed poller, as a program outside libnoisetool builds it (pkg-config
 * noisetool-polling): a UDP echo between two loopback sockets of this one thread.
 *
 *   echo-loop [ROUNDS [POLICY]]     (default 2000 adaptive)
 *
 * 1. fds: both sockets in one nt_poller; each wait must return exactly the one socket that has
 *    a datagram (the server's request, then the client's reply), and every reply must carry its
 *    request's sequence number and payload.
 * 2. no fds: the same echo with the spin-or-sleep decision alone (nt_poller_decide, _nap,
 *    _event) between nonblocking receives, as a runtime with its own progress loop uses it.
 * The poller's counters must then add up exactly (events, waits). Prints one line per part. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <noisetool/poller.h>

enum { PAYLOAD = 64 };

struct msg {
	uint64_t seq;
	unsigned char data[PAYLOAD];
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "echo-loop: %s: %s\n", what, strerror(err));
	return 1;
}

/* A server socket bound to an ephemeral loopback port and a client connected to it. */
static int sockets(int *server, int *client)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	*server = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	*client = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (*server < 0 || *client < 0 || bind(*server, (struct sockaddr *)&a, sizeof a) ||
	    getsockname(*server, (struct sockaddr *)&a, &len) ||
	    connect(*client, (struct sockaddr *)&a, sizeof a))
		return -errno;
	return 0;
}

static void fill(struct msg *m, uint64_t seq)
{
	m->seq = seq;
	for (int i = 0; i < PAYLOAD; i++)
		m->data[i] = (unsigned char)(seq * 31 + (uint64_t)i);
}

/* The server's side: echo one datagram to its sender. 0, or -errno. */
static int echo_one(int server)
{
	struct msg m;
	struct sockaddr_in from;
	socklen_t fl = sizeof from;
	ssize_t n = recvfrom(server, &m, sizeof m, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	if (n != (ssize_t)sizeof m)
		return n < 0 ? -errno : -EBADMSG;
	return sendto(server, &m, sizeof m, 0, (struct sockaddr *)&from, fl) == (ssize_t)sizeof m
		       ? 0
		       : -errno;
}

/* The client's side: the reply to seq, whole and unchanged. 0, -EAGAIN (none yet), -EBADMSG. */
static int reply_ok(int client, uint64_t seq)
{
	struct msg m, want;
	ssize_t n = recv(client, &m, sizeof m, MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	fill(&want, seq);
	return n == (ssize_t)sizeof m && memcmp(&m, &want, sizeof m) == 0 ? 0 : -EBADMSG;
}

static int with_fds(long rounds, enum nt_poll_policy policy)
{
	int server, client, rc = sockets(&server, &client);
	if (rc)
		return fail("sockets", -rc);
	struct nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
	cfg.policy = policy;
	struct nt_poller *p;
	if ((rc = nt_poller_create(&p, &cfg)) || (rc = nt_poller_add(p, server, NT_POLL_IN, &server)) ||
	    (rc = nt_poller_add(p, client, NT_POLL_IN, &client)))
		return fail("poller", -rc);
	for (long i = 0; i < rounds; i++) {
		struct msg m;
		fill(&m, (uint64_t)i);
		if (send(client, &m, sizeof m, 0) != (ssize_t)sizeof m)
			return fail("send", errno);
		for (int side = 0; side < 2; side++) { /* the request, then its reply */
			struct nt_poll_event ev[2];
			int n = nt_poller_wait(p, ev, 2, 5000000000); /* 5 s: a lost datagram fails */
			if (n != 1 || ev[0].user != (side ? (void *)&client : (void *)&server)) {
				fprintf(stderr, "echo-loop: round %ld: wait gave %d events, want the %s\n",
					i, n, side ? "client" : "server");
				return 1;
			}
			rc = side ? reply_ok(client, (uint64_t)i) : echo_one(server);
			if (rc)
				return fail(side ? "reply" : "echo", -rc);
		}
	}
	struct nt_poller_stats st;
	nt_poller_get_stats(p, &st);
	if (st.waits != 2 * (uint64_t)rounds || st.events != 2 * (uint64_t)rounds) {
		fprintf(stderr, "echo-loop: stats: %llu waits, %llu events; want %ld of each\n",
			(unsigned long long)st.waits, (unsigned long long)st.events, 2 * rounds);
		return 1;
	}
	printf("echo-loop: fds: %ld round trips, policy %s: %llu waits, %llu events, %llu polls, "
	       "mode %s\n",
	       rounds, nt_poll_policy_name(policy), (unsigned long long)st.waits,
	       (unsigned long long)st.events, (unsigned long long)st.polls,
	       st.mode == NT_MODE_SPIN ? "spin" : "sleep");
	nt_poller_destroy(p);
	close(server);
	close(client);
	return 0;
}

/* One wait of a progress loop: try, and between tries spin or nap as the poller decides. */
static int progress_until(struct nt_poller *p, int (*attempt)(int, uint64_t), int fd, uint64_t seq,
			  uint64_t *naps)
{
	for (long tries = 0; tries < 1000000; tries++) {
		int rc = attempt(fd, seq);
		if (rc != -EAGAIN) {
			if (rc == 0)
				nt_poller_event(p); /* one wait completed */
			return rc;
		}
		uint64_t slice_ns;
		if (nt_poller_decide(p, &slice_ns) == NT_MODE_SLEEP) {
			nt_poller_nap(p, 10000);
			++*naps;
		}
	}
	return -ETIMEDOUT;
}

static int server_attempt(int fd, uint64_t seq)
{
	(void)seq;
	return echo_one(fd);
}

static int without_fds(long rounds)
{
	int server, client, rc = sockets(&server, &client);
	if (rc)
		return fail("sockets", -rc);
	struct nt_poller *p;
	if ((rc = nt_poller_create(&p, NULL)))
		return fail("poller", -rc);
	uint64_t naps = 0;
	for (long i = 0; i < rounds; i++) {
		struct msg m;
		fill(&m, (uint64_t)i);
		if (send(client, &m, sizeof m, 0) != (ssize_t)sizeof m)
			return fail("send", errno);
		if ((rc = progress_until(p, server_attempt, server, (uint64_t)i, &naps)) ||
		    (rc = progress_until(p, reply_ok, client, (uint64_t)i, &naps)))
			return fail("progress", -rc);
	}
	struct nt_poller_stats st;
	nt_poller_get_stats(p, &st);
	if (st.events != 2 * (uint64_t)rounds || st.waits != 0) {
		fprintf(stderr, "echo-loop: no-fd stats: %llu events, %llu waits; want %ld and 0\n",
			(unsigned long long)st.events, (unsigned long long)st.waits, 2 * rounds);
		return 1;
	}
	printf("echo-loop: no fds: %ld round trips: %llu events, %llu naps, mode %s\n", rounds,
	       (unsigned long long)st.events, (unsigned long long)naps,
	       nt_poller_preference(p) == NT_MODE_SPIN ? "spin" : "sleep");
	nt_poller_destroy(p);
	close(server);
	close(client);
	return 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	enum nt_poll_policy policy = NT_POLICY_ADAPTIVE;
	if (rounds < 1 || rounds > 10000000 || (argc > 2 && nt_poll_policy_parse(argv[2], &policy))) {
		fprintf(stderr, "usage: echo-loop [ROUNDS [busy|timed|blocking|adaptive]]\n");
		return 2;
	}
	return with_fds(rounds, policy) || without_fds(rounds);
}
