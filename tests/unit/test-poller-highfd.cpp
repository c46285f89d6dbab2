// The epoll backend watches an fd above select's FD_SETSIZE and delivers its events; the select
// backend refuses that same open fd. Needs an RLIMIT_NOFILE hard limit above FD_SETSIZE + 1
// (checked before any test case runs: 77 when it is lower).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <sys/resource.h>
#include <sys/select.h>
#include <unistd.h>

#include <noisetool/poller.h>

#include "poller-test.h"

namespace {
const int BIG_FD = FD_SETSIZE + 1;
}

TEST_CASE("epoll watches an fd above FD_SETSIZE; select refuses it")
{
	rlimit rl;
	REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	rlimit raised = rl;
	if (raised.rlim_cur < (rlim_t)BIG_FD + 8)
		raised.rlim_cur = BIG_FD + 8;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &raised) == 0);
	pipe_pair pp;
	REQUIRE(dup2(pp.fd[0], BIG_FD) == BIG_FD);

	poller s(NT_POLICY_BLOCKING, NT_POLL_SELECT);
	CHECK(nt_poller_add(s.p, BIG_FD, NT_POLL_IN, nullptr) == -EINVAL);
	poller e(NT_POLICY_BLOCKING, NT_POLL_EPOLL);
	int tag = 3;
	REQUIRE(nt_poller_add(e.p, BIG_FD, NT_POLL_IN, &tag) == 0);
	REQUIRE(write(pp.fd[1], "x", 1) == 1);
	nt_poll_event ev[2];
	REQUIRE(nt_poller_wait(e.p, ev, 2, -1) == 1);
	CHECK(ev[0].fd == BIG_FD);
	CHECK(ev[0].events == NT_POLL_IN);
	CHECK(ev[0].user == &tag);
	CHECK(nt_poller_remove(e.p, BIG_FD) == 0);
	close(BIG_FD);
	setrlimit(RLIMIT_NOFILE, &rl);
}

int main(int argc, char **argv)
{
	rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max < (rlim_t)BIG_FD + 8) {
		std::printf("SKIP: the RLIMIT_NOFILE hard limit (%llu) cannot hold fd %d\n",
			    (unsigned long long)rl.rlim_max, BIG_FD);
		return 77;
	}
	return Catch::Session().run(argc, argv);
}
