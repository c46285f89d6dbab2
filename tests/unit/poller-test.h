// What the poller tests share: a pipe and a poller that are always closed, the thread's run
// delay.
#ifndef TESTS_UNIT_POLLER_TEST_H
#define TESTS_UNIT_POLLER_TEST_H

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <unistd.h>

#include <noisetool/poller.h>

struct pipe_pair {
	int fd[2] = { -1, -1 };
	pipe_pair() { REQUIRE(pipe(fd) == 0); }
	~pipe_pair()
	{
		close(fd[0]);
		close(fd[1]);
	}
};

struct poller {
	nt_poller *p = nullptr;
	explicit poller(nt_poll_policy policy, nt_poll_backend backend = NT_POLL_EPOLL)
	{
		nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
		cfg.policy = policy;
		cfg.backend = backend;
		REQUIRE(nt_poller_create(&p, &cfg) == 0);
	}
	~poller() { nt_poller_destroy(p); }
	nt_poller_stats stats() const
	{
		nt_poller_stats s;
		nt_poller_get_stats(p, &s);
		return s;
	}
};

// This thread's run delay (time runnable but not running) from schedstat, 0 without it.
inline uint64_t run_delay_ns()
{
	unsigned long long run = 0, delay = 0;
	FILE *f = std::fopen("/proc/thread-self/schedstat", "r");
	if (f) {
		if (std::fscanf(f, "%llu %llu", &run, &delay) != 2)
			delay = 0;
		std::fclose(f);
	}
	return delay;
}

#endif
