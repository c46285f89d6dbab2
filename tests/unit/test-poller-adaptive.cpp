// Adaptive polling beside a spinner forked onto its CPU, with fds (nt_poller_wait) and without
// (nt_poller_decide / nap, as a runtime's own progress loop): asleep within two share
// measurements and its first look at spinning, spinning again within a few CPU-accounting
// reprobes of the spinner's end. It needs a CPU that is free at its start: measured before any test case on each
// CPU of the affinity mask (this thread's run delay while it spins there), 77 with the shares
// when none is. A competitor that comes later is judged from the CPU's own accounting.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <noisetool/clock.h>
#include <noisetool/poller.h>
#include <noisetool/sysinfo.h>

#include "adapt.h"
#include "poller-test.h"

namespace {

const uint64_t MS = 1000000;
int free_cpu = -1; // chosen by main: no competitor measured there

uint64_t thread_cpu_ns()
{
	timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// One reading of a CPU's accounting: its busy time (user nice system irq softirq steal, in
// USER_HZ ticks) and this thread's own CPU time.
struct cpu_reading {
	uint64_t wall_ns, busy_ticks, own_ns;
};

bool read_cpu(int cpu, cpu_reading *r)
{
	FILE *f = std::fopen("/proc/stat", "r");
	if (!f)
		return false;
	char line[512], key[32];
	std::snprintf(key, sizeof key, "cpu%d ", cpu);
	bool ok = false;
	while (std::fgets(line, sizeof line, f)) {
		if (std::strncmp(line, key, std::strlen(key)) != 0)
			continue;
		unsigned long long v[8] = { 0 };
		if (std::sscanf(line + std::strlen(key), "%llu %llu %llu %llu %llu %llu %llu %llu",
				&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) >= 8) {
			r->busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
			ok = true;
		}
		break;
	}
	std::fclose(f);
	r->wall_ns = nt_clock_monotonic_ns();
	r->own_ns = thread_cpu_ns();
	return ok;
}

// Others' share of the CPU between two readings, with one tick taken as doubt (as the poller
// does: /proc/stat counts in ticks).
double others_share(const cpu_reading &a, const cpu_reading &b)
{
	const double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
	double others = (double)(b.busy_ticks - a.busy_ticks) * tick_ns - (double)(b.own_ns - a.own_ns);
	double share = (others - tick_ns) / (double)(b.wall_ns - a.wall_ns);
	return share < 0 ? 0 : share;
}

// The largest share of others in any stretch of at least window_ns between two of readings (a
// CPU is free, as the poller judges it, only when no reprobe-long stretch is over free_share).
double worst_share(const std::vector<cpu_reading> &readings, uint64_t window_ns)
{
	double worst = 0;
	for (size_t i = 0; i < readings.size(); i++)
		for (size_t j = i + 1; j < readings.size(); j++)
			if (readings[j].wall_ns - readings[i].wall_ns >= window_ns) {
				double sh = others_share(readings[i], readings[j]);
				worst = sh > worst ? sh : worst;
				break;
			}
	return worst;
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
			if (nt_pin_self(cpu) != 0)
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

[[noreturn]] void skip(const std::string &why)
{
	std::printf("SKIP: %s\n", why.c_str());
	std::fflush(stdout);
	std::exit(77);
}

std::string pct(double share)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.1f %%", share * 100);
	return buf;
}

} // namespace

TEST_CASE("adaptive sleeps soon after a spinner comes onto its CPU, and spins soon after it leaves")
{
	const nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
	REQUIRE(free_cpu >= 0);
	REQUIRE(nt_pin_self(free_cpu) == 0);
	bool failed = false; // once a check failed, nothing is skipped any more
	pipe_pair pp;
	poller p(NT_POLICY_ADAPTIVE);
	REQUIRE(nt_poller_add(p.p, pp.fd[0], NT_POLL_IN, nullptr) == 0);
	nt_poll_event ev;

	// Free CPU: it spins. A competitor that came since main measured the CPU (this thread's
	// run delay over the phase says so) would rightly make it sleep: then nothing is judged.
	uint64_t d0 = run_delay_ns(), w0 = nt_clock_monotonic_ns();
	for (int i = 0; i < 20; i++)
		nt_poller_wait(p.p, &ev, 1, 5 * MS);
	double share1 = (double)(run_delay_ns() - d0) / (double)(nt_clock_monotonic_ns() - w0);
	nt_poller_stats st = p.stats();
	bool spun = st.mode == NT_MODE_SPIN && st.competitor_share < cfg.contended_share;
	if (!spun && share1 > cfg.contended_share)
		skip("a competitor came onto CPU " + std::to_string(free_cpu) +
		     " before the spinner: this thread waited " + pct(share1) + " of the free phase");
	INFO("free phase: mode " << st.mode << ", competitor share " << st.competitor_share
				 << ", this thread waited " << share1 * 100 << " %");
	CHECK(st.mode == NT_MODE_SPIN);
	CHECK(st.competitor_share < cfg.contended_share);
	failed |= !spun;

	// A spinner on its CPU: two share measurements over contended_share, then the first look
	// at spinning (trial_ns / 2, no events to compare), then sleep. One more measurement and
	// 50 ms for the spinner's start and host stalls.
	spinner hog(free_cpu, 20);
	const uint64_t sleep_bound_ns =
		(NT_ADAPT_SHARED_AFTER + 1) * cfg.measure_ns + cfg.trial_ns / 2 + 50 * MS;
	uint64_t t0 = nt_clock_monotonic_ns(), slept_at = 0;
	while (nt_clock_monotonic_ns() - t0 < 2000 * MS) {
		nt_poller_wait(p.p, &ev, 1, 5 * MS);
		if (p.stats().mode == NT_MODE_SLEEP) {
			slept_at = nt_clock_monotonic_ns();
			break;
		}
	}
	REQUIRE(slept_at);
	const double to_sleep_ms = (double)(slept_at - t0) / 1e6;
	INFO("asleep " << to_sleep_ms << " ms after the spinner started; share "
		       << p.stats().competitor_share);
	CHECK(to_sleep_ms <= (double)sleep_bound_ns / 1e6);
	failed |= !(to_sleep_ms <= (double)sleep_bound_ns / 1e6);

	// Let it settle on sleeping (trials, then dwell), then stop the spinner. Free again needs
	// free_after reprobes of the CPU's accounting under free_share in a row, after the one
	// that still saw the spinner: (free_after + 1) reprobes, twice that as the bound.
	while (nt_clock_monotonic_ns() - slept_at < 300 * MS)
		nt_poller_wait(p.p, &ev, 1, 5 * MS);
	hog.stop();
	const uint64_t spin_bound_ns = 2 * (NT_ADAPT_FREE_AFTER + 1) * cfg.reprobe_ns;
	std::vector<cpu_reading> readings;
	readings.reserve(4096);
	cpu_reading r;
	uint64_t t1 = nt_clock_monotonic_ns(), spun_at = 0;
	while (nt_clock_monotonic_ns() - t1 < 3000 * MS) {
		nt_poller_wait(p.p, &ev, 1, 5 * MS);
		if (read_cpu(free_cpu, &r) && readings.size() < readings.capacity())
			readings.push_back(r);
		nt_poller_stats s = p.stats();
		if (s.mode == NT_MODE_SPIN && !s.contended) {
			spun_at = nt_clock_monotonic_ns();
			break;
		}
	}
	const double to_spin_ms = spun_at ? (double)(spun_at - t1) / 1e6 : -1;
	if (!failed && (!spun_at || to_spin_ms > (double)spin_bound_ns / 1e6)) {
		// Was the CPU free, as the poller judges it, once the spinner was gone? Others' share
		// in every reprobe-long stretch the test itself read.
		double worst = worst_share(readings, cfg.reprobe_ns);
		if (worst >= cfg.free_share)
			skip("CPU " + std::to_string(free_cpu) +
			     " did not become free after the spinner stopped: others used up to " +
			     pct(worst) + " of it in " + std::to_string(cfg.reprobe_ns / MS) + " ms");
	}
	REQUIRE(spun_at);
	INFO("spinning again " << to_spin_ms << " ms after the spinner stopped");
	CHECK(to_spin_ms <= (double)spin_bound_ns / 1e6);
	std::printf("adaptive: asleep after %.1f ms (bound %.0f), spinning again after %.1f ms "
		    "(bound %.0f)\n",
		    to_sleep_ms, (double)sleep_bound_ns / 1e6, to_spin_ms,
		    (double)spin_bound_ns / 1e6);
}

// A runtime's progress loop without fds for wait_ns (doc/polling.md, "For runtimes with their
// own progress loop"): a progress call that finds nothing, the poller's decision asked when
// the last answer's slice (at most 1 ms) is over, a 10 us nap while it says sleep. Returns the
// last answer.
nt_poll_mode progress_loop(nt_poller *p, uint64_t wait_ns, int idle_fd)
{
	uint64_t t0 = nt_clock_monotonic_ns(), until = 0, now;
	nt_poll_mode mode = NT_MODE_SPIN;
	char c;
	while ((now = nt_clock_monotonic_ns()) - t0 < wait_ns) {
		if (read(idle_fd, &c, 1) == 1) // the progress call: nothing ever comes
			nt_poller_event(p);
		if (now >= until) {
			uint64_t slice;
			mode = nt_poller_decide(p, &slice);
			until = now + (slice < MS ? slice : MS);
		}
		if (mode == NT_MODE_SLEEP)
			nt_poller_nap(p, 10000);
	}
	return mode;
}

TEST_CASE("the no-fd decision: spin on a free CPU, sleep soon after a spinner comes onto it, "
	  "spin again soon after it leaves")
{
	nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
	cfg.timer_slack_ns = 1000;
	REQUIRE(free_cpu >= 0);
	REQUIRE(nt_pin_self(free_cpu) == 0);
	pipe_pair pp;
	REQUIRE(fcntl(pp.fd[0], F_SETFL, O_NONBLOCK) == 0);
	nt_poller *p;
	REQUIRE(nt_poller_create(&p, &cfg) == 0);
	struct destroy {
		nt_poller *p;
		~destroy() { nt_poller_destroy(p); }
	} guard{ p };
	nt_poller_stats st;

	// Free CPU: the answer is spin, measured as free (else a competitor came: nothing judged).
	uint64_t d0 = run_delay_ns(), w0 = nt_clock_monotonic_ns();
	nt_poll_mode m = progress_loop(p, 100 * MS, pp.fd[0]);
	double share1 = (double)(run_delay_ns() - d0) / (double)(nt_clock_monotonic_ns() - w0);
	nt_poller_get_stats(p, &st);
	if ((m != NT_MODE_SPIN || st.contended) && share1 > cfg.contended_share)
		skip("a competitor came onto CPU " + std::to_string(free_cpu) +
		     " before the spinner: this thread waited " + pct(share1) + " of the free phase");
	INFO("free phase: answer " << m << ", competitor share " << st.competitor_share << " ("
				   << st.share_measurements << " measurements)");
	CHECK(m == NT_MODE_SPIN);
	CHECK(st.share_measurements >= 5); // 100 ms of spinning, one per measure_ns (10 ms)
	CHECK(st.competitor_share < cfg.contended_share);
	CHECK(st.sleep_ns == 0); // no nap

	// A spinner on its CPU: two share measurements over contended_share, the first look at
	// spinning (trial_ns / 2), then sleep (no events to compare: the competitor gets the CPU).
	spinner hog(free_cpu, 20);
	const uint64_t sleep_bound_ns =
		(NT_ADAPT_SHARED_AFTER + 1) * cfg.measure_ns + cfg.trial_ns / 2 + 50 * MS;
	uint64_t t0 = nt_clock_monotonic_ns(), slept_at = 0;
	while (nt_clock_monotonic_ns() - t0 < 2000 * MS)
		if (progress_loop(p, MS, pp.fd[0]) == NT_MODE_SLEEP) {
			slept_at = nt_clock_monotonic_ns();
			break;
		}
	REQUIRE(slept_at);
	const double to_sleep_ms = (double)(slept_at - t0) / 1e6;
	INFO("asleep " << to_sleep_ms << " ms after the spinner started");
	CHECK(to_sleep_ms <= (double)sleep_bound_ns / 1e6);
	progress_loop(p, 300 * MS, pp.fd[0]);
	nt_poller_get_stats(p, &st);
	CHECK(st.contended);
	CHECK(nt_poller_preference(p) == NT_MODE_SLEEP);
	CHECK(st.sleep_ns > 100 * MS); // it napped most of the 300 ms

	// The spinner leaves: free again after free_after reprobes of the CPU's accounting under
	// free_share in a row (after the one that still saw the spinner); twice that as the bound.
	hog.stop();
	const uint64_t spin_bound_ns = 2 * (NT_ADAPT_FREE_AFTER + 1) * cfg.reprobe_ns;
	// The CPU's accounting as the test reads it, judged per reprobe-long stretch as the poller
	// judges it: an average over the whole wait hid another job's bursts (a CI run: others
	// used under 2 % of the CPU over 2.5 s, but over 2 % in some of its 200 ms stretches).
	std::vector<cpu_reading> readings;
	readings.reserve(4096);
	cpu_reading r;
	uint64_t t1 = nt_clock_monotonic_ns(), spun_at = 0;
	while (nt_clock_monotonic_ns() - t1 < 3000 * MS) {
		m = progress_loop(p, MS, pp.fd[0]);
		if (read_cpu(free_cpu, &r) && readings.size() < readings.capacity())
			readings.push_back(r);
		nt_poller_get_stats(p, &st);
		if (m == NT_MODE_SPIN && !st.contended) {
			spun_at = nt_clock_monotonic_ns();
			break;
		}
	}
	const double to_spin_ms = spun_at ? (double)(spun_at - t1) / 1e6 : -1;
	if (!spun_at || to_spin_ms > (double)spin_bound_ns / 1e6) {
		double worst = worst_share(readings, cfg.reprobe_ns);
		if (worst >= cfg.free_share)
			skip("CPU " + std::to_string(free_cpu) +
			     " did not become free after the spinner stopped: others used up to " +
			     pct(worst) + " of it in " + std::to_string(cfg.reprobe_ns / MS) + " ms");
	}
	REQUIRE(spun_at);
	INFO("spinning again " << to_spin_ms << " ms after the spinner stopped");
	CHECK(to_spin_ms <= (double)spin_bound_ns / 1e6);
	std::printf("no-fd decision: asleep after %.1f ms (bound %.0f), spinning again after %.1f ms "
		    "(bound %.0f)\n",
		    to_sleep_ms, (double)sleep_bound_ns / 1e6, to_spin_ms,
		    (double)spin_bound_ns / 1e6);
}

int main(int argc, char **argv)
{
	nt_clock_init();
	const nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
	int cpus[256];
	int n = nt_allowed_cpus(cpus, 256);
	std::string shares;
	// Spin 200 ms on each CPU of the mask: the share of it this thread waited is the
	// competitors' share. The first one under free_share is the test's CPU.
	for (int i = 0; i < n && free_cpu < 0; i++) {
		if (nt_pin_self(cpus[i]) != 0)
			continue;
		uint64_t d0 = run_delay_ns(), w0 = nt_clock_monotonic_ns(), w;
		while ((w = nt_clock_monotonic_ns()) - w0 < 200 * MS)
			;
		double share = (double)(run_delay_ns() - d0) / (double)(w - w0);
		shares += (shares.empty() ? "" : ", ") + std::string("CPU ") + std::to_string(cpus[i]) +
			  " " + pct(share);
		if (share < cfg.free_share)
			free_cpu = cpus[i];
	}
	if (free_cpu < 0)
		skip("no free CPU to react from: competitors took " + shares +
		     " of a 200 ms spin (free is under " + pct(cfg.free_share) + ")");
	return Catch::Session().run(argc, argv);
}
