/* The poller's backends: select (pselect, ns timeouts) and epoll (epoll_pwait2, ns timeouts). */
#ifndef POLLING_BACKEND_H
#define POLLING_BACKEND_H

#include <stdint.h>

#include <noisetool/poller.h>

struct nt_watch {
	int fd;
	uint32_t events;
	void *user;
};

struct nt_backend;

struct nt_backend_ops {
	int (*open)(struct nt_backend **out);
	void (*close)(struct nt_backend *b);
	/* w points into the poller's watch list and stays valid until remove. */
	int (*add)(struct nt_backend *b, const struct nt_watch *w);
	int (*remove)(struct nt_backend *b, int fd);
	/* timeout_ns: 0 = poll once, < 0 = no limit. Returns events written, 0, or -errno. */
	int (*wait)(struct nt_backend *b, struct nt_watch *const *watches, int nwatches,
		    struct nt_poll_event *events, int max, int64_t timeout_ns);
};

extern const struct nt_backend_ops nt_backend_select;
extern const struct nt_backend_ops nt_backend_epoll;

#endif /* POLLING_BACKEND_H */
