// Unit tests of probe.c and probe-os.c: the rate limiter on fake counter values, the schedstat
// parser, and the probe on the calling thread of this Linux machine.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <time.h>
#include <unistd.h>

#include <noisetool/clock.h>
#include <noisetool/probe.h>
#include <noisetool-private/schedstat.h>

namespace {

uint64_t thread_cpu_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Spin until this thread has used cpu_ns of CPU time, however long that takes on a loaded
// machine (the test's timeout bounds it).
volatile uint64_t spin_sink;
void burn_cpu(uint64_t cpu_ns)
{
	uint64_t c0 = thread_cpu_ns();
	uint64_t x = 1;
	while (thread_cpu_ns() - c0 < cpu_ns)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1;
	spin_sink = x;
}

// This thread's schedstat (CPU time, run delay, times put on a CPU); false without it.
bool schedstat(uint64_t *run, uint64_t *delay, uint64_t *count)
{
	FILE *f = std::fopen("/proc/thread-self/schedstat", "r");
	if (!f)
		return false;
	unsigned long long r, d, c;
	bool ok = std::fscanf(f, "%llu %llu %llu", &r, &d, &c) == 3;
	std::fclose(f);
	*run = r;
	*delay = d;
	*count = c;
	return ok;
}

// RAII for a probe.
struct probe_guard {
	struct nt_probe *p = nullptr;
	~probe_guard() { nt_probe_close(p); }
};

} // namespace

TEST_CASE("nt_parse_schedstat", "[probe][schedstat]")
{
	uint64_t run = 1, delay = 1, count = 1;

	SECTION("parses three numbers")
	{
		REQUIRE(nt_parse_schedstat("123 456 7\n", &run, &delay, &count) == 0);
		CHECK(run == 123);
		CHECK(delay == 456);
		CHECK(count == 7);
	}

	SECTION("parses values beyond 32 bits")
	{
		REQUIRE(nt_parse_schedstat("18446744073709551615 4294967296 0", &run, &delay,
					   &count) == 0);
		CHECK(run == UINT64_MAX);
		CHECK(delay == 4294967296ull);
		CHECK(count == 0);
	}

	SECTION("rejects garbage and leaves the outputs alone")
	{
		CHECK(nt_parse_schedstat("x", &run, &delay, &count) == -EINVAL);
		CHECK(nt_parse_schedstat("", &run, &delay, &count) == -EINVAL);
		CHECK(nt_parse_schedstat("1 2", &run, &delay, &count) == -EINVAL);
		CHECK(nt_parse_schedstat("1 2 x", &run, &delay, &count) == -EINVAL);
		CHECK(nt_parse_schedstat("-1 -2 3", &run, &delay, &count) == -EINVAL);
		CHECK(nt_parse_schedstat("99999999999999999999 1 1", &run, &delay, &count) ==
		      -EINVAL);
		CHECK(run == 1);
		CHECK(delay == 1);
		CHECK(count == 1);
	}
}

TEST_CASE("the probe on this thread", "[probe]")
{
	probe_guard g;
	REQUIRE(nt_probe_open(&g.p, nullptr) == 0);
	REQUIRE(g.p != nullptr);
	const uint32_t src = nt_probe_sources(g.p);
	const bool have_schedstat = access("/proc/thread-self/schedstat", R_OK) == 0;

	SECTION("the expected sources opened")
	{
		CHECK((src & NT_SRC_COUNTER) != 0);
		CHECK((src & NT_SRC_RUSAGE) != 0);
		CHECK((src & NT_SRC_THREAD_CPU) != 0); // schedstat or the thread CPU clock
		// schedstat when the kernel has it, never claimed when it does not
		CHECK(((src & NT_SRC_SCHEDSTAT) != 0) == have_schedstat);
	}

	SECTION("samples are valid and the counter is monotonic")
	{
		struct nt_probe_sample a, b, c;
		REQUIRE(nt_probe_read(g.p, &a) == 0);
		REQUIRE(nt_probe_read(g.p, &b) == 0);
		REQUIRE(nt_probe_read(g.p, &c) == 0);
		for (const auto *s : { &a, &b, &c }) {
			CHECK((s->valid & NT_SRC_COUNTER) != 0);
			CHECK((s->valid & NT_SRC_RUSAGE) != 0);
			if (have_schedstat)
				CHECK((s->valid & NT_SRC_SCHEDSTAT) != 0);
			CHECK((s->valid & ~src) == 0); // nothing that did not open
		}
		CHECK(a.counter_cyc <= b.counter_cyc);
		CHECK(b.counter_cyc <= c.counter_cyc);
		CHECK(a.cpu_ns <= c.cpu_ns);

		struct nt_probe_stats st;
		nt_probe_get_stats(g.p, &st);
		CHECK(st.reads == 3);
		CHECK(st.read_cost_ns > 0);
		for (int i = 0; i < NT_SRC_COUNT; i++)
			CHECK(st.failures[i] == 0);
	}

	SECTION("a 20 ms busy loop shows in the delta")
	{
		// Bounds against the thread's own CPU clock and the counter, whatever the load: the
		// probe's CPU time may lag the clock by up to a tick (schedstat is updated at ticks
		// and switches: 10 ms at HZ=100), hence the 10 ms margins.
		struct nt_probe_sample a, b;
		uint64_t out0[3], in0[3], in1[3], out1[3]; // schedstat around and inside the samples
		const bool ss = schedstat(&out0[0], &out0[1], &out0[2]);
		REQUIRE(nt_probe_read(g.p, &a) == 0);
		schedstat(&in0[0], &in0[1], &in0[2]);
		burn_cpu(20 * 1000 * 1000);
		schedstat(&in1[0], &in1[1], &in1[2]);
		REQUIRE(nt_probe_read(g.p, &b) == 0);
		schedstat(&out1[0], &out1[1], &out1[2]);
		const uint64_t after_cyc = nt_clock_now_cyc();
		struct nt_probe_delta d;
		std::memset(&d, 0xa5, sizeof d);
		nt_probe_delta(&a, &b, &d);
		CHECK(d.valid == (a.valid & b.valid));
		REQUIRE((d.valid & NT_SRC_THREAD_CPU) != 0);
		CHECK(d.cpu_ns >= 10 * 1000 * 1000);
		CHECK(nt_clock_cyc_to_ns(d.wall_cyc) >= 10e6);
		CHECK(nt_clock_cyc_to_ns(d.wall_cyc) >= 0.5 * (double)d.cpu_ns);
		// Waiting for a CPU cannot take longer than the wall time. Each sample reads the
		// counter before schedstat, so the wait may reach past b's counter read to the end
		// of b's read: judged against a counter read after b (1 ms of slack for the
		// scheduler's clock against the counter).
		if (have_schedstat)
			CHECK((double)d.run_delay_ns <=
			      nt_clock_cyc_to_ns(after_cyc - a.counter_cyc) + 1e6);
		// From the same file, read just outside and just inside the two samples: the
		// probe's deltas lie between, exactly.
		if (have_schedstat && ss && (d.valid & NT_SRC_SCHEDSTAT)) {
			CHECK(d.cpu_ns >= in1[0] - in0[0]);
			CHECK(d.cpu_ns <= out1[0] - out0[0]);
			CHECK(d.run_delay_ns >= in1[1] - in0[1]);
			CHECK(d.run_delay_ns <= out1[1] - out0[1]);
			CHECK(d.run_count >= in1[2] - in0[2]);
			CHECK(d.run_count <= out1[2] - out0[2]);
		}
		// Swapped samples never go negative: the delta clamps at 0.
		nt_probe_delta(&b, &a, &d);
		CHECK(d.wall_cyc == 0);
		CHECK(d.cpu_ns == 0);
	}

	SECTION("NULL arguments")
	{
		struct nt_probe_sample s;
		CHECK(nt_probe_read(nullptr, &s) == -EINVAL);
		CHECK(nt_probe_read(g.p, nullptr) == -EINVAL);
		CHECK(nt_probe_sources(nullptr) == 0);
		nt_probe_close(nullptr); // accepted
	}
}

TEST_CASE("nt_probe_open configurations", "[probe]")
{
	probe_guard g;
	struct nt_probe_config cfg;
	std::memset(&cfg, 0, sizeof cfg);
	cfg.level = NT_PROBE_OS;

	SECTION("level 7 gives -EINVAL")
	{
		cfg.level = static_cast<enum nt_probe_level>(7);
		CHECK(nt_probe_open(&g.p, &cfg) == -EINVAL);
		CHECK(g.p == nullptr);
	}

	SECTION("NULL out gives -EINVAL")
	{
		CHECK(nt_probe_open(nullptr, &cfg) == -EINVAL);
	}

	SECTION("timing level opens the counter only")
	{
		cfg.level = NT_PROBE_TIMING;
		REQUIRE(nt_probe_open(&g.p, &cfg) == 0);
		CHECK(nt_probe_sources(g.p) == NT_SRC_COUNTER);
		struct nt_probe_sample s;
		REQUIRE(nt_probe_read(g.p, &s) == 0);
		CHECK(s.valid == NT_SRC_COUNTER);
	}
}

TEST_CASE("source names", "[probe]")
{
	CHECK(std::string(nt_probe_source_name(NT_SRC_SCHEDSTAT)) == "schedstat");
	CHECK(std::string(nt_probe_source_name(NT_SRC_RUSAGE)) == "getrusage");
	CHECK(std::string(nt_probe_source_name(3)) == "unknown");
}
