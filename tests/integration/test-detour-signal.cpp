// Detours injected by a timer signal handler on the measuring thread: the loop must count
// them (within 5 %) and measure their lengths (within 10 %).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <csignal>
#include <ctime>
#include <vector>

#include <noisetool/clock.h>
#include <noisetool/detour.h>
#include <noisetool/sysinfo.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test-main.h"

namespace {

const int MAX_INJECT = 4096;
uint64_t spin_cyc;
volatile int ninject;
uint64_t inj_start[MAX_INJECT], inj_end[MAX_INJECT];

void handler(int)
{
	uint64_t t0 = nt_clock_now_cyc(), t;
	do
		t = nt_clock_now_cyc();
	while (t - t0 < spin_cyc);
	int i = ninject;
	if (i < MAX_INJECT) {
		inj_start[i] = t0;
		inj_end[i] = t;
		ninject = i + 1;
	}
}

} // namespace

TEST_CASE("timer-signal detours are counted and measured", "[detour][signal]")
{
	int cpus[256];
	int n = nt_allowed_cpus(cpus, 256);
	if (n < 1)
		nt_test_skip("no CPU in the affinity mask");
	REQUIRE(nt_pin_self(cpus[0]) == 0);
	nt_clock_init();
	// In this VM a timer interrupt plus signal delivery takes ~16 us, and a coinciding tick
	// another ~17 us, which the loop rightly counts as part of the detour; a 500 us spin keeps
	// both within the 10 % length bound.
	const double spin_ns = 500e3;
	spin_cyc = nt_clock_ns_to_cyc(spin_ns);

	struct sigaction sa {};
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGRTMIN, &sa, nullptr) == 0);
	sigevent sev{};
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	timer_t timer;
	REQUIRE(timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0);
	itimerspec its{};
	its.it_value.tv_nsec = 5 * 1000 * 1000 + 100 * 1000; // 5.1 ms: not a multiple of the tick
	its.it_interval = its.it_value;

	nt_detour_config cfg{};
	cfg.seconds = 2.0;
	cfg.threshold_ns = 1000;
	cfg.cpu = -1;
	ninject = 0;
	REQUIRE(timer_settime(timer, 0, &its, nullptr) == 0);
	nt_detour_result res{};
	int rc = nt_detour_measure(&cfg, &res);
	itimerspec off{};
	timer_settime(timer, 0, &off, nullptr);
	timer_delete(timer);
	REQUIRE(rc == 0);
	const int injected = ninject;
	REQUIRE(injected > 300);

	// Match each injection to the detour that contains its middle (both from the loop start).
	std::vector<double> starts(res.count), ends(res.count);
	for (size_t i = 0; i < res.count; i++) {
		starts[i] = (double)res.detours[i].start_ns;
		ends[i] = starts[i] + (double)res.detours[i].duration_ns;
	}
	size_t matched = 0, within = 0, eligible = 0;
	const uint64_t end_cyc = res.start_cyc + nt_clock_ns_to_cyc((double)res.elapsed_ns);
	std::vector<double> errs;
	for (int j = 0; j < injected; j++) {
		uint64_t mid = (inj_start[j] + inj_end[j]) / 2;
		if (mid < res.start_cyc || mid > end_cyc)
			continue; // injected while the loop was not running
		eligible++;
		double m = nt_clock_cyc_to_ns(mid - res.start_cyc);
		auto it = std::upper_bound(starts.begin(), starts.end(), m);
		if (it == starts.begin())
			continue;
		size_t i = (size_t)(it - starts.begin()) - 1;
		if (ends[i] < m)
			continue;
		matched++;
		double truth = nt_clock_cyc_to_ns(inj_end[j] - inj_start[j]);
		double err = std::fabs((double)res.detours[i].duration_ns - truth) / truth;
		errs.push_back(err);
		if (err <= 0.10)
			within++;
	}
	std::sort(errs.begin(), errs.end());
	double median_err = errs.empty() ? 1.0 : errs[errs.size() / 2];
	INFO("injected " << injected << " (" << eligible << " during the loop), matched " << matched << ", within 10 %: " << within
			 << ", median length error " << median_err * 100 << " %, detours " << res.count);
	REQUIRE(eligible > 300);
	std::printf("timer-signal injection of %.0f us: %zu injected during the loop, %zu counted "
		    "(%.1f %%), median length error %.2f %%, %zu within 10 %%\n",
		    spin_ns / 1e3, eligible, matched, 100.0 * (double)matched / (double)eligible,
		    median_err * 100, within);
	CHECK(matched >= 0.95 * eligible);
	CHECK(median_err <= 0.10);
	CHECK(within >= 0.90 * matched);
	nt_detour_result_free(&res);
}
