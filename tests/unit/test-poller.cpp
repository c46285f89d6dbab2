// The poller on real fds: events through both backends and every policy, timeouts, the select
// backend's FD_SETSIZE limit, the timed policy really sleeping, no fd or memory growth over
// many cycles, and adaptive reacting to a spinner forked onto its CPU.
#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include <noisetool/clock.h>
#include <noisetool/poller.h>

namespace {

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

int open_fds()
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

long rss_kb()
{
	long pages = 0, resident = 0;
	FILE *f = std::fopen("/proc/self/statm", "r");
	if (f) {
		if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		std::fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// A CPU-bound child pinned to cpu, bounded by alarm() and reaped by the destructor.
struct spinner {
	pid_t pid = -1;
	spinner(int cpu, unsigned max_seconds)
	{
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			alarm(max_seconds);
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			if (sched_setaffinity(0, sizeof set, &set) != 0)
				_exit(1);
			for (volatile unsigned long i = 0;; i++)
				;
		}
	}
	void stop()
	{
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, nullptr, 0);
			pid = -1;
		}
	}
	~spinner() { stop(); }
};

} // namespace

TEST_CASE("events reach the caller through each backend and policy")
{
	nt_clock_init();
	for (auto backend : { NT_POLL_EPOLL, NT_POLL_SELECT }) {
		for (auto policy : { NT_POLICY_BUSY, NT_POLICY_TIMED, NT_POLICY_BLOCKING,
				     NT_POLICY_ADAPTIVE }) {
			INFO(nt_poll_backend_name(backend) << " " << nt_poll_policy_name(policy));
			pipe_pair pp;
			poller p(policy, backend);
			int tag = 7;
			REQUIRE(nt_poller_add(p.p, pp.fd[0], NT_POLL_IN, &tag) == 0);
			CHECK(nt_poller_add(p.p, pp.fd[0], NT_POLL_IN, &tag) == -EEXIST);
			nt_poll_event ev[4];
			// Nothing there: a 2 ms timeout returns 0 after about 2 ms.
			uint64_t t0 = nt_clock_monotonic_ns();
			CHECK(nt_poller_wait(p.p, ev, 4, 2000000) == 0);
			uint64_t took = nt_clock_monotonic_ns() - t0;
			CHECK(took >= 2000000);
			CHECK(took < 200000000);
			REQUIRE(write(pp.fd[1], "x", 1) == 1);
			REQUIRE(nt_poller_wait(p.p, ev, 4, -1) == 1);
			CHECK(ev[0].fd == pp.fd[0]);
			CHECK(ev[0].events == NT_POLL_IN);
			CHECK(ev[0].user == &tag);
			CHECK(nt_poller_remove(p.p, pp.fd[0]) == 0);
			CHECK(nt_poller_remove(p.p, pp.fd[0]) == -ENOENT);
			CHECK(nt_poller_wait(p.p, ev, 4, 0) == 0);
		}
	}
}

TEST_CASE("bad arguments")
{
	nt_poller *p = nullptr;
	nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
	cfg.free_share = 0.2; // above contended_share
	CHECK(nt_poller_create(&p, &cfg) == -EINVAL);
	cfg = NT_POLLER_CONFIG_DEFAULT;
	cfg.policy = NT_POLICY_TIMED;
	cfg.timed_ns = 0;
	CHECK(nt_poller_create(&p, &cfg) == -EINVAL);
	poller q(NT_POLICY_BUSY);
	CHECK(nt_poller_add(q.p, -1, NT_POLL_IN, nullptr) == -EINVAL);
	CHECK(nt_poller_add(q.p, 0, 0, nullptr) == -EINVAL);
	nt_poll_event ev;
	CHECK(nt_poller_wait(q.p, &ev, 0, 0) == -EINVAL);
	nt_poll_policy pol;
	CHECK(nt_poll_policy_parse("adaptive", &pol) == 0);
	CHECK(pol == NT_POLICY_ADAPTIVE);
	CHECK(nt_poll_policy_parse("lazy", &pol) == -EINVAL);
}

TEST_CASE("the select backend refuses an fd at or above FD_SETSIZE")
{
	rlimit rl;
	REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	if (rl.rlim_max <= FD_SETSIZE + 1) {
		WARN("RLIMIT_NOFILE hard limit too low to open fd " << FD_SETSIZE << "; not checked");
		return;
	}
	rlimit raised = rl;
	raised.rlim_cur = FD_SETSIZE + 8;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &raised) == 0);
	pipe_pair pp;
	int big = dup2(pp.fd[0], FD_SETSIZE + 1);
	REQUIRE(big == FD_SETSIZE + 1);
	poller s(NT_POLICY_BLOCKING, NT_POLL_SELECT);
	CHECK(nt_poller_add(s.p, big, NT_POLL_IN, nullptr) == -EINVAL);
	poller e(NT_POLICY_BLOCKING, NT_POLL_EPOLL);
	CHECK(nt_poller_add(e.p, big, NT_POLL_IN, nullptr) == 0);
	close(big);
	setrlimit(RLIMIT_NOFILE, &rl);
}

TEST_CASE("timed really sleeps; busy does not")
{
	pipe_pair pp;
	nt_poll_event ev;
	nt_poller_stats ts, bs;
	{
		poller t(NT_POLICY_TIMED);
		REQUIRE(nt_poller_add(t.p, pp.fd[0], NT_POLL_IN, nullptr) == 0);
		REQUIRE(nt_poller_wait(t.p, &ev, 1, 20000000) == 0);
		ts = t.stats();
	}
	{
		poller b(NT_POLICY_BUSY); // counts switches from its creation, after the timed run
		REQUIRE(nt_poller_add(b.p, pp.fd[0], NT_POLL_IN, nullptr) == 0);
		REQUIRE(nt_poller_wait(b.p, &ev, 1, 20000000) == 0);
		bs = b.stats();
	}
	INFO("timed: " << ts.polls << " polls, " << ts.voluntary_switches
		       << " voluntary switches; busy: " << bs.polls << " polls, "
		       << bs.voluntary_switches);
	CHECK(ts.voluntary_switches >= 10); // 20 ms of 1 us timeouts: each one a real sleep
	CHECK(bs.voluntary_switches <= ts.voluntary_switches / 4);
}

TEST_CASE("no fd or memory growth over many pollers")
{
	for (int i = 0; i < 100; i++) { // warm up allocator and caches
		pipe_pair pp;
		poller p(NT_POLICY_ADAPTIVE);
		nt_poller_add(p.p, pp.fd[0], NT_POLL_IN, nullptr);
	}
	int fds = open_fds();
	long rss = rss_kb();
	for (int i = 0; i < 5000; i++) {
		pipe_pair pp;
		poller p(i % 2 ? NT_POLICY_ADAPTIVE : NT_POLICY_TIMED,
			 i % 3 ? NT_POLL_EPOLL : NT_POLL_SELECT);
		REQUIRE(nt_poller_add(p.p, pp.fd[0], NT_POLL_IN, nullptr) == 0);
		REQUIRE(write(pp.fd[1], "x", 1) == 1);
		nt_poll_event ev;
		REQUIRE(nt_poller_wait(p.p, &ev, 1, -1) == 1);
	}
	CHECK(open_fds() == fds);
	CHECK(rss_kb() - rss < 512);
}

TEST_CASE("adaptive sleeps within 100 ms of a spinner on its CPU, and spins again within 1 s of its end")
{
	nt_clock_init();
	int cpu = sched_getcpu();
	cpu_set_t set, old;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	REQUIRE(sched_getaffinity(0, sizeof old, &old) == 0);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		WARN("cannot pin to a CPU here: skipped");
		std::exit(77);
	}
	pipe_pair pp;
	poller p(NT_POLICY_ADAPTIVE);
	REQUIRE(nt_poller_add(p.p, pp.fd[0], NT_POLL_IN, nullptr) == 0);
	nt_poll_event ev;
	// Free CPU: it spins.
	for (int i = 0; i < 20; i++)
		nt_poller_wait(p.p, &ev, 1, 5000000);
	REQUIRE(p.stats().mode == NT_MODE_SPIN);
	CHECK(p.stats().competitor_share < 0.05);

	spinner hog(cpu, 20);
	uint64_t t0 = nt_clock_monotonic_ns(), slept_at = 0;
	while (nt_clock_monotonic_ns() - t0 < 2000000000ull) {
		nt_poller_wait(p.p, &ev, 1, 5000000);
		if (p.stats().mode == NT_MODE_SLEEP) {
			slept_at = nt_clock_monotonic_ns();
			break;
		}
	}
	REQUIRE(slept_at);
	double to_sleep_ms = (double)(slept_at - t0) / 1e6;
	INFO("asleep " << to_sleep_ms << " ms after the spinner started; share "
		       << p.stats().competitor_share);
	CHECK(to_sleep_ms <= 100);

	// Let it settle on sleeping (trials, then dwell), then stop the spinner.
	while (nt_clock_monotonic_ns() - slept_at < 300000000ull)
		nt_poller_wait(p.p, &ev, 1, 5000000);
	hog.stop();
	uint64_t t1 = nt_clock_monotonic_ns(), spun_at = 0;
	while (nt_clock_monotonic_ns() - t1 < 3000000000ull) {
		nt_poller_wait(p.p, &ev, 1, 5000000);
		nt_poller_stats s = p.stats();
		if (s.mode == NT_MODE_SPIN && !s.contended) {
			spun_at = nt_clock_monotonic_ns();
			break;
		}
	}
	sched_setaffinity(0, sizeof old, &old);
	REQUIRE(spun_at);
	double to_spin_ms = (double)(spun_at - t1) / 1e6;
	INFO("spinning again " << to_spin_ms << " ms after the spinner stopped");
	CHECK(to_spin_ms <= 1000);
	WARN("adaptive: asleep after " << to_sleep_ms << " ms, spinning again after " << to_spin_ms
				       << " ms");
}
