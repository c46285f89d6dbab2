/* The epoll backend. epoll_pwait2 takes a ns timeout (epoll_wait only ms, which turns a 1 us
 * timeout into 1 ms); where the kernel lacks it, timeouts round up to ms. */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "backend.h"

struct nt_backend {
	int ep;
	int have_pwait2;
};

static int ep_open(struct nt_backend **out)
{
	struct nt_backend *b = calloc(1, sizeof *b);
	if (!b)
		return -ENOMEM;
	b->ep = epoll_create1(EPOLL_CLOEXEC);
	if (b->ep < 0) {
		int e = errno;
		free(b);
		return -e;
	}
	b->have_pwait2 = 1;
	*out = b;
	return 0;
}

static void ep_close(struct nt_backend *b)
{
	if (b)
		close(b->ep);
	free(b);
}

static int ep_add(struct nt_backend *b, const struct nt_watch *w)
{
	struct epoll_event ev = { .events = ((w->events & NT_POLL_IN) ? EPOLLIN : 0) |
					    ((w->events & NT_POLL_OUT) ? EPOLLOUT : 0),
				  .data.ptr = (void *)w };
	return epoll_ctl(b->ep, EPOLL_CTL_ADD, w->fd, &ev) == 0 ? 0 : -errno;
}

static int ep_remove(struct nt_backend *b, int fd)
{
	return epoll_ctl(b->ep, EPOLL_CTL_DEL, fd, NULL) == 0 ? 0 : -errno;
}

enum { BATCH = 64 };

static int ep_wait(struct nt_backend *b, struct nt_watch *const *w, int nw,
		   struct nt_poll_event *events, int max, int64_t timeout_ns)
{
	(void)w;
	(void)nw;
	struct epoll_event ev[BATCH];
	int want = max < BATCH ? max : BATCH, n = -1;
	if (b->have_pwait2) {
		struct timespec ts = { (time_t)(timeout_ns / 1000000000),
				       (long)(timeout_ns % 1000000000) };
		n = epoll_pwait2(b->ep, ev, want, timeout_ns < 0 ? NULL : &ts, NULL);
		if (n < 0 && errno == ENOSYS)
			b->have_pwait2 = 0;
	}
	if (!b->have_pwait2) {
		int ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000);
		n = epoll_wait(b->ep, ev, want, ms);
	}
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		const struct nt_watch *x = ev[i].data.ptr;
		uint32_t e = ((ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ? NT_POLL_IN : 0) |
			     ((ev[i].events & EPOLLOUT) ? NT_POLL_OUT : 0);
		events[i] = (struct nt_poll_event){ x->fd, e, x->user };
	}
	return n;
}

const struct nt_backend_ops nt_backend_epoll = {
	ep_open, ep_close, ep_add, ep_remove, ep_wait,
};
