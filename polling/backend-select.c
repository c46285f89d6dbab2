/* The select backend: fd sets rebuilt from the watch list on every call (pselect for ns
 * timeouts). fds must be below FD_SETSIZE. */
#include <errno.h>
#include <stdlib.h>
#include <sys/select.h>

#include "backend.h"

struct nt_backend {
	int unused;
};

static int sel_open(struct nt_backend **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : -ENOMEM;
}

static void sel_close(struct nt_backend *b)
{
	free(b);
}

static int sel_add(struct nt_backend *b, const struct nt_watch *w)
{
	(void)b;
	return w->fd < FD_SETSIZE ? 0 : -EINVAL;
}

static int sel_remove(struct nt_backend *b, int fd)
{
	(void)b;
	(void)fd;
	return 0;
}

static int sel_wait(struct nt_backend *b, struct nt_watch *const *w, int nw,
		    struct nt_poll_event *events, int max, int64_t timeout_ns)
{
	(void)b;
	fd_set rd, wr;
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	int top = -1;
	for (int i = 0; i < nw; i++) {
		if (w[i]->events & NT_POLL_IN)
			FD_SET(w[i]->fd, &rd);
		if (w[i]->events & NT_POLL_OUT)
			FD_SET(w[i]->fd, &wr);
		if (w[i]->fd > top)
			top = w[i]->fd;
	}
	struct timespec ts = { (time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000) };
	int n = pselect(top + 1, &rd, &wr, NULL, timeout_ns < 0 ? NULL : &ts, NULL);
	if (n < 0)
		return -errno;
	int k = 0;
	for (int i = 0; i < nw && k < max && n > 0; i++) {
		uint32_t ev = (FD_ISSET(w[i]->fd, &rd) ? NT_POLL_IN : 0) |
			      (FD_ISSET(w[i]->fd, &wr) ? NT_POLL_OUT : 0);
		if (ev)
			events[k++] = (struct nt_poll_event){ w[i]->fd, ev, w[i]->user };
	}
	return k;
}

const struct nt_backend_ops nt_backend_select = {
	sel_open, sel_close, sel_add, sel_remove, sel_wait,
};
