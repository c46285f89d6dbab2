// Shared main for integration tests: own process group, preconditions that exit 77 (skipped).
#ifndef TESTS_INTEGRATION_TEST_MAIN_H
#define TESTS_INTEGRATION_TEST_MAIN_H

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#define NT_TEST_SKIP 77

// Exit 77 with a reason: the test cannot run here, which is not a pass.
[[noreturn]] inline void nt_test_skip(const std::string &why)
{
	std::fprintf(stderr, "SKIP: %s\n", why.c_str());
	std::exit(NT_TEST_SKIP);
}

// A forked child that is always killed and reaped, whatever the test does.
struct child_guard {
	pid_t pid = -1;
	explicit child_guard(pid_t p) : pid(p) {}
	child_guard(const child_guard &) = delete;
	child_guard &operator=(const child_guard &) = delete;
	int reap()
	{
		int status = 0;
		if (pid > 0) {
			waitpid(pid, &status, 0);
			pid = -1;
		}
		return status;
	}
	~child_guard()
	{
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, nullptr, 0);
		}
	}
};

#endif
