/* One addr2line coprocess: started with posix_spawnp on two close-on-exec pipes, asked one
 * address at a time with a deadline, killed and reaped. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "addr2line.h"

extern char **environ;

/* A close-on-exec pipe whose two ends are above stdin, stdout and stderr, so that the child's
 * dup2 onto 0 and 1 never overwrites the other end (noisetool may run with 0 or 1 closed). */
static int pipe_above_stdio(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		if (fds[i] > STDERR_FILENO)
			continue;
		int moved = fcntl(fds[i], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
		int err = errno;
		close(fds[i]);
		fds[i] = moved;
		if (moved < 0) {
			if (i == 0)
				close(fds[1]);
			else
				close(fds[0]);
			return -err;
		}
	}
	return 0;
}

static void set_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int addr2line_start(struct addr2line_proc *p, const char *program, const char *module)
{
	*p = (struct addr2line_proc){ .pid = -1, .to_fd = -1, .from_fd = -1 };
	int in[2], out[2];
	int rc = pipe_above_stdio(in);
	if (rc)
		return rc;
	rc = pipe_above_stdio(out);
	if (rc) {
		close(in[0]);
		close(in[1]);
		return rc;
	}
	posix_spawn_file_actions_t fa;
	rc = -posix_spawn_file_actions_init(&fa);
	if (rc == 0) {
		/* dup2 clears close-on-exec on the copies; every other descriptor of ours has it. */
		if (posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO) ||
		    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO) ||
		    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0))
			rc = -ENOMEM;
		char *argv[] = { (char *)program, "-f", "-C", "-e", (char *)module, NULL };
		/* glibc reports a failed exec here (ENOENT when program is not in PATH). */
		if (rc == 0)
			rc = -posix_spawnp(&p->pid, program, &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	close(in[0]);
	close(out[1]);
	if (rc) {
		close(in[1]);
		close(out[0]);
		p->pid = -1;
		return rc;
	}
	p->to_fd = in[1];
	p->from_fd = out[0];
	set_nonblocking(p->to_fd);
	set_nonblocking(p->from_fd);
	return 0;
}

/* write() that turns a closed pipe into EPIPE without SIGPIPE killing noisetool: the signal is
 * blocked for the call, and the one it raised is taken back. */
static ssize_t write_no_sigpipe(int fd, const void *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	bool was_pending = sigismember(&pending, SIGPIPE) == 1;
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	ssize_t n;
	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	int err = errno;
	if (n < 0 && err == EPIPE && !was_pending) {
		const struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return n;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Appends c to line (at most size - 1 characters are kept, the rest dropped). */
static void put(char *line, size_t size, size_t *len, char c)
{
	if (*len + 1 < size)
		line[(*len)++] = c;
}

int addr2line_ask(struct addr2line_proc *p, uint64_t addr, int timeout_ms, char *fn, size_t fnsz,
		  char *loc, size_t locsz)
{
	if (p->pid < 0)
		return -EIO;
	char hex[32];
	int n = snprintf(hex, sizeof hex, "0x%llx\n", (unsigned long long)addr);
	/* A short line into an empty pipe: all of it or nothing, never blocking (the answer to the
	 * previous address was read in full, so addr2line has read everything we wrote). */
	ssize_t w = write_no_sigpipe(p->to_fd, hex, (size_t)n);
	if (w != n)
		return w < 0 && errno == EPIPE ? -EPIPE : -EIO;

	size_t lens[2] = { 0, 0 };
	int line = 0;
	int64_t deadline = now_ms() + timeout_ms;
	while (line < 2) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = { .fd = p->from_fd, .events = POLLIN };
		int ready = poll(&pfd, 1, (int)left);
		if (ready < 0 && errno != EINTR)
			return -EIO;
		if (ready <= 0)
			continue;
		char buf[4096];
		ssize_t got = read(p->from_fd, buf, sizeof buf);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return -EIO;
		if (got == 0)
			return -EPIPE;
		for (ssize_t i = 0; i < got; i++) {
			if (line == 2)
				return -EPROTO; /* bytes after the answer: not the protocol we speak */
			if (buf[i] == '\n')
				line++;
			else if (line == 0)
				put(fn, fnsz, &lens[0], buf[i]);
			else
				put(loc, locsz, &lens[1], buf[i]);
		}
	}
	fn[lens[0]] = '\0';
	loc[lens[1]] = '\0';
	p->answers++;
	return 0;
}

int addr2line_stop(struct addr2line_proc *p, int grace_ms, int *status)
{
	if (p->to_fd >= 0)
		close(p->to_fd); /* end of its input: addr2line exits */
	if (p->from_fd >= 0)
		close(p->from_fd);
	p->to_fd = p->from_fd = -1;
	if (p->pid < 0)
		return -1;
	int st = 0, killed = 0;
	pid_t r = 0;
	/* Bounded wait for it to exit on its own: polled every millisecond. */
	for (int64_t deadline = now_ms() + grace_ms; grace_ms > 0;) {
		r = waitpid(p->pid, &st, WNOHANG);
		if (r != 0 || now_ms() >= deadline)
			break;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	if (r == 0) {
		kill(p->pid, SIGKILL);
		killed = 1;
		do
			r = waitpid(p->pid, &st, 0);
		while (r < 0 && errno == EINTR);
	}
	p->pid = -1;
	if (status)
		*status = st;
	return r > 0 ? killed : -1;
}
