// The injector: spec parsing (every key, every error), and real injection into this thread,
// whose spun time and count must match the spec.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>

#include <noisetool/clock.h>
#include <noisetool/inject.h>

static int parse(const char *s, nt_inject_spec *out, std::string *why = nullptr)
{
	char err[256] = "";
	int rc = nt_inject_parse(s, out, err, sizeof err);
	if (why)
		*why = err;
	return rc;
}

TEST_CASE("inject spec parsing")
{
	nt_inject_spec s;
	SECTION("the issue's example")
	{
		REQUIRE(parse("period=10ms,detour=100us,mode=sync,ranks=1,3,seed=42", &s) == 0);
		CHECK(s.period_ns == 10000000);
		CHECK(s.detour_ns == 100000);
		CHECK(s.mode == NT_INJECT_SYNC);
		CHECK(s.seed == 42);
		CHECK_FALSE(s.all_ranks);
		REQUIRE(s.nranks == 2);
		CHECK(nt_inject_targets(&s, 1));
		CHECK(nt_inject_targets(&s, 3));
		CHECK_FALSE(nt_inject_targets(&s, 0));
		CHECK_FALSE(nt_inject_targets(&s, 2));
	}
	SECTION("defaults, units and ranges")
	{
		REQUIRE(parse("detour=200,period=5ms", &s) == 0);
		CHECK(s.detour_ns == 200000); // a bare number is us
		CHECK(s.mode == NT_INJECT_UNSYNC);
		CHECK(s.all_ranks);
		CHECK(nt_inject_targets(&s, 77));
		REQUIRE(parse("period=1s,detour=2.5ms,ranks=8-11,0", &s) == 0);
		CHECK(s.period_ns == 1000000000);
		CHECK(s.detour_ns == 2500000);
		CHECK(s.nranks == 5);
		CHECK(nt_inject_targets(&s, 10));
		REQUIRE(parse("trace=/tmp/x.trace,ranks=1", &s) == 0);
		CHECK(std::string(s.trace) == "/tmp/x.trace");
	}
	SECTION("bad specs name the problem")
	{
		std::string why;
		CHECK(parse("period=10ms", &s, &why) == -EINVAL);
		CHECK(why.find("detour=") != std::string::npos);
		CHECK(parse("period=10ms,detour=20ms", &s, &why) == -EINVAL);
		CHECK(why.find("shorter") != std::string::npos);
		CHECK(parse("period=10xs,detour=1us", &s, &why) == -EINVAL);
		CHECK(why.find("period=10xs") != std::string::npos);
		CHECK(parse("period=10ms,detour=1us,mode=often", &s, &why) == -EINVAL);
		CHECK(why.find("sync or unsync") != std::string::npos);
		CHECK(parse("period=10ms,detour=1us,colour=red", &s, &why) == -EINVAL);
		CHECK(why.find("unknown key") != std::string::npos);
		CHECK(parse("period=10ms,detour=1us,ranks=3-1", &s, &why) == -EINVAL);
		CHECK(parse("period=10ms,detour=1us,", &s, &why) == -EINVAL);
		CHECK(parse("period=-1ms,detour=1us", &s, &why) == -EINVAL);
		CHECK(parse("period=0,detour=1us", &s, &why) == -EINVAL);
		CHECK(parse("10ms", &s, &why) == -EINVAL);
		CHECK(parse("period=10ms,detour=1us,seed=x", &s, &why) == -EINVAL);
	}
}

// Spin on this thread for wall_ns while the injector interrupts it.
static void spin_ns(uint64_t wall_ns)
{
	uint64_t end = nt_clock_monotonic_ns() + wall_ns;
	while (nt_clock_monotonic_ns() < end)
		;
}

TEST_CASE("injection into this thread")
{
	nt_clock_init();
	nt_inject_spec s;
	REQUIRE(parse("period=2ms,detour=200us,mode=unsync,seed=7", &s) == 0);
	char err[256] = "";
	uint64_t spun0 = nt_inject_spun_cyc(), n0 = nt_inject_count();
	REQUIRE(nt_inject_start(&s, 0, 0, err, sizeof err) == 0);
	CHECK(nt_inject_start(&s, 0, 0, err, sizeof err) == -EBUSY);
	spin_ns(200000000); // 200 ms: ~100 detours
	nt_inject_stop();
	uint64_t n = nt_inject_count() - n0;
	double spun_us = nt_clock_cyc_to_ns(nt_inject_spun_cyc() - spun0) / 1e3;
	INFO("detours " << n << ", spun " << spun_us << " us");
	// Generous: the VM may stall the timer; each detour is at least its length.
	CHECK(n >= 60);
	CHECK(n <= 101);
	CHECK(spun_us >= 200.0 * (double)n);
	CHECK(spun_us <= 200.0 * (double)n * 1.5);
	// Stopped: nothing more.
	uint64_t after = nt_inject_count();
	spin_ns(10000000);
	CHECK(nt_inject_count() == after);
}

TEST_CASE("trace replay")
{
	nt_clock_init();
	char path[] = "/tmp/nt-inject-XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	FILE *f = fdopen(fd, "w");
	// Three detours of 100, 300 and 50 us over ~10 ms.
	std::fprintf(f, "1000000\t100000\n4000000\t300000\n9000000\t50000\n");
	std::fclose(f);
	nt_inject_spec s;
	REQUIRE(parse((std::string("trace=") + path).c_str(), &s) == 0);
	char err[256] = "";
	uint64_t spun0 = nt_inject_spun_cyc(), n0 = nt_inject_count();
	REQUIRE(nt_inject_start(&s, 0, 0, err, sizeof err) == 0);
	spin_ns(100000000); // ~9 replays of the 11 ms cycle
	nt_inject_stop();
	std::remove(path);
	uint64_t n = nt_inject_count() - n0;
	double spun_us = nt_clock_cyc_to_ns(nt_inject_spun_cyc() - spun0) / 1e3;
	INFO("detours " << n << ", spun " << spun_us << " us");
	CHECK(n >= 18);
	CHECK(n <= 30);
	CHECK(spun_us >= 450.0 * (double)(n / 3));

	SECTION("a missing trace is a clear error")
	{
		REQUIRE(parse("trace=/nonexistent/t", &s) == 0);
		CHECK(nt_inject_start(&s, 0, 0, err, sizeof err) == -ENOENT);
		CHECK(std::string(err).find("/nonexistent/t") != std::string::npos);
	}
}
