/* A wait loop for message-driven runtimes (DSM, MPI layers, UDP services) that stays fast on a
 * dedicated CPU and on a shared one: busy-polls while the CPU is its own and sleeps when
 * another task competes for it, choosing by what it measures (the competitor's share of the
 * CPU, and the cycle time each choice really gives). select or epoll underneath.
 *
 * Minimal integration into a runtime's message loop:
 *
 *     struct nt_poller *p;
 *     struct nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;   // adaptive, epoll
 *     nt_poller_create(&p, &cfg);
 *     nt_poller_add(p, sock, NT_POLL_IN, NULL);
 *     for (;;) {
 *             struct nt_poll_event ev[16];
 *             int n = nt_poller_wait(p, ev, 16, -1);             // instead of select/epoll
 *             for (int i = 0; i < n; i++)
 *                     handle(ev[i].fd);                          // recv, work, reply
 *     }
 *
 * One poller belongs to one thread (it measures that thread's CPU). */
#ifndef NOISETOOL_POLLER_H
#define NOISETOOL_POLLER_H

#include <stdint.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nt_poll_backend {
	NT_POLL_EPOLL = 0,
	NT_POLL_SELECT = 1, /* fds must be < FD_SETSIZE */
};

enum nt_poll_policy {
	NT_POLICY_BUSY = 0,     /* poll with a zero timeout until ready (or the deadline) */
	NT_POLICY_TIMED = 1,    /* poll with a short timeout (timed_ns) and explicit timer slack */
	NT_POLICY_BLOCKING = 2, /* one wait with the caller's timeout */
	NT_POLICY_ADAPTIVE = 3, /* busy while the CPU is free; else whichever measures better */
};

#define NT_POLL_IN 1u
#define NT_POLL_OUT 2u

struct nt_poll_event {
	int fd;
	uint32_t events; /* NT_POLL_IN | NT_POLL_OUT (error and hang-up report as IN) */
	void *user;
};

struct nt_poller_config {
	enum nt_poll_backend backend;
	enum nt_poll_policy policy;
	uint64_t timed_ns;          /* timed: the poll timeout (default 1 us) */
	uint64_t timer_slack_ns;    /* timed: the thread's timer slack while the poller lives
				     * (default 50 us, the kernel's: a 1 us timeout then sleeps
				     * ~60 us here; with slack <= 1 us it never sleeps at all) */
	uint64_t spin_budget_ns;    /* busy and adaptive spinning: block after spinning this long
				     * without an event (0 = never; default 0) */
	/* adaptive */
	double contended_share;     /* competitor share above which the CPU is shared (0.05) */
	double free_share;          /* and below which it is free again (0.02) */
	uint64_t measure_ns;        /* spinning time per share measurement (10 ms) */
	uint64_t reprobe_ns;        /* while sleeping, read the CPU's accounting this often (200 ms) */
	uint64_t trial_ns;          /* on a shared CPU, try the other mode for up to this (50 ms) */
	uint64_t dwell_ns;          /* and keep a choice at least this long (1 s; doubled while
				     * trials confirm it, up to 16 s) */
	uint64_t trial_min_ns;      /* a clearly worse trial of sleeping ends after 8 cycles and
				     * at least this long, and the first look at spinning on a newly shared
				     * CPU lasts this long (default 0: half a trial; MPI waits,
				     * whose cycles hold compute and whole ticks, use 20 ms) */
	double sleep_win;           /* a trial of sleeping wins when its mean cycle is under this
				     * times spinning's (0.9: 10 % better, as any switch; MPI
				     * waits, which care for throughput, use 1.05: sleeping hands
				     * the CPU over and the scheduler then favours the sleeper) */
};

#define NT_POLLER_CONFIG_DEFAULT                                                               \
	{ NT_POLL_EPOLL, NT_POLICY_ADAPTIVE, 1000, 50000, 0, 0.05, 0.02, 10000000, 200000000,     \
	  50000000, 1000000000, 0, 0.9 }

/* What adaptive is doing now. */
enum nt_poll_mode {
	NT_MODE_SPIN = 0,  /* busy-polling */
	NT_MODE_SLEEP = 1, /* blocking in the kernel */
};

struct nt_poller_stats {
	enum nt_poll_mode mode;
	uint64_t waits, events;
	uint64_t switches;          /* mode changes */
	uint64_t spin_ns, sleep_ns; /* time spent waiting in each mode */
	uint64_t polls;             /* backend calls */
	uint64_t voluntary_switches;   /* of the thread, since the poller was created */
	double competitor_share;    /* last measured share of the CPU taken by others (spinning) */
	uint64_t share_measurements;
	int contended;              /* the CPU is shared, as last measured */
	uint64_t trials;            /* trials of the other mode run on a shared CPU */
	uint64_t trials_aborted;    /* of those, cut short: clearly worse */
	double trial_spin_cycle_ns, trial_sleep_cycle_ns; /* the last compared mean cycles */
};

struct nt_poller;

/* cfg NULL = NT_POLLER_CONFIG_DEFAULT. Returns 0, -EINVAL (bad config), -ENOMEM, or -errno
 * from epoll_create1. */
NT_API int nt_poller_create(struct nt_poller **out, const struct nt_poller_config *cfg);

/* Free the poller, restoring the thread's timer slack it changed; the watched fds stay open
 * (they are the caller's). NULL is accepted. */
NT_API void nt_poller_destroy(struct nt_poller *p);

/* Watch fd for events (NT_POLL_IN, NT_POLL_OUT). Returns 0; -EINVAL (bad fd, no events, or
 * fd >= FD_SETSIZE with the select backend); -EEXIST; -ENOMEM; -errno from epoll_ctl. */
NT_API int nt_poller_add(struct nt_poller *p, int fd, uint32_t events, void *user);

/* Stop watching fd. Returns 0 or -ENOENT. */
NT_API int nt_poller_remove(struct nt_poller *p, int fd);

/* Wait until at least one watched fd is ready or timeout_ns passes (-1 = no limit, 0 = one
 * poll), by the poller's policy. Returns the number of events written (<= max), 0 on timeout,
 * -EINTR when a signal interrupted a sleep, or another -errno from the backend. */
NT_API int nt_poller_wait(struct nt_poller *p, struct nt_poll_event *events, int max,
			  int64_t timeout_ns);

/* The poller's counters since it was created and the adaptive policy's state now. */
NT_API void nt_poller_get_stats(const struct nt_poller *p, struct nt_poller_stats *stats);

/* For wait loops without fds (an MPI progress loop): the adaptive decision alone.
 * nt_poller_decide() says whether to spin or to sleep now (measuring the CPU as a wait would:
 * the run delay over the time since the last decision when that was spinning, the CPU's
 * accounting when sleeping) and, in *slice_ns, for how long the answer holds.
 * nt_poller_nap() sleeps one short quantum (sleep_ns, with the poller's timer slack);
 * nt_poller_event() marks the end of one wait (a completed call), whose cycle counts for the
 * mode decided last. */
NT_API enum nt_poll_mode nt_poller_decide(struct nt_poller *p, uint64_t *slice_ns);
NT_API void nt_poller_nap(struct nt_poller *p, uint64_t sleep_ns);
NT_API void nt_poller_event(struct nt_poller *p);
/* The mode the adaptive policy holds to, leaving a running trial of the other one aside. */
NT_API enum nt_poll_mode nt_poller_preference(const struct nt_poller *p);

/* Names for printing and parsing: "busy", "timed", "blocking", "adaptive"; "select", "epoll". */
NT_API const char *nt_poll_policy_name(enum nt_poll_policy policy);
NT_API int nt_poll_policy_parse(const char *name, enum nt_poll_policy *out);
NT_API const char *nt_poll_backend_name(enum nt_poll_backend backend);
NT_API int nt_poll_backend_parse(const char *name, enum nt_poll_backend *out);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_POLLER_H */
