// A rank's CPUs (cpus.c): CPU lists parsed and compared, and /proc/stat's busy and steal time
// of a set of CPUs.
#include <catch2/catch.hpp>

#include <cerrno>
#include <ctime>
#include <vector>

#include <noisetool/sysinfo.h>
#include <noisetool-private/cpus.h>

namespace {

std::vector<nt_cpu_range> parse(const char *list, int want)
{
	std::vector<nt_cpu_range> r(8);
	int n = nt_cpulist_parse(list, r.data(), r.size());
	INFO(list);
	REQUIRE(n == want);
	r.resize(n > 0 ? (size_t)n : 0);
	return r;
}

double now_s()
{
	timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

} // namespace

TEST_CASE("CPU lists are parsed as the kernel and the log write them", "[cpus]")
{
	auto a = parse("0-3,8,10-11", 3);
	CHECK(a[0].lo == 0);
	CHECK(a[0].hi == 3);
	CHECK(a[1].lo == 8);
	CHECK(a[1].hi == 8);
	CHECK(a[2].lo == 10);
	CHECK(a[2].hi == 11);
	CHECK(nt_cpulist_count(a.data(), a.size()) == 7);
	CHECK(parse("", 0).empty());
	CHECK(parse("4294967295", 1)[0].lo == UINT32_MAX);
	// What the log may hold but no writer writes: refused, never half-read.
	nt_cpu_range r[2];
	for (const char *bad : { "x", "1,", ",1", "1-", "3-1", "1 ", "1,,2", "2,1", "1-3,2",
				 "4294967296", "-1", "1-2-3" })
		CHECK(nt_cpulist_parse(bad, r, 2) == -EINVAL);
	CHECK(nt_cpulist_parse("1,2,3", r, 2) == -EINVAL); // more runs than room
	CHECK(nt_cpulist_parse(nullptr, r, 2) == -EINVAL);
}

TEST_CASE("CPU lists: within and overlap", "[cpus]")
{
	auto all = parse("0-7", 1), zero = parse("0", 1), odd = parse("1,3,5,7", 4),
	     hi = parse("6-9", 1), none = parse("", 0);
	CHECK(nt_cpulist_within(zero.data(), zero.size(), all.data(), all.size()));
	CHECK(nt_cpulist_within(odd.data(), odd.size(), all.data(), all.size()));
	CHECK_FALSE(nt_cpulist_within(all.data(), all.size(), odd.data(), odd.size()));
	CHECK_FALSE(nt_cpulist_within(hi.data(), hi.size(), all.data(), all.size()));
	CHECK(nt_cpulist_within(none.data(), 0, zero.data(), zero.size()));
	CHECK(nt_cpulist_overlap(hi.data(), hi.size(), odd.data(), odd.size())); // 7
	CHECK_FALSE(nt_cpulist_overlap(zero.data(), zero.size(), odd.data(), odd.size()));
	CHECK_FALSE(nt_cpulist_overlap(none.data(), 0, all.data(), all.size()));
	auto split = parse("0-1,4-5", 2), mid = parse("2-3", 1);
	CHECK_FALSE(nt_cpulist_overlap(split.data(), split.size(), mid.data(), mid.size()));
	CHECK_FALSE(nt_cpulist_within(mid.data(), mid.size(), split.data(), split.size()));
}

TEST_CASE("a CPU's busy and steal time from /proc/stat", "[cpus]")
{
	int cpus[1024];
	int n = nt_allowed_cpus(cpus, 1024);
	REQUIRE(n > 0);
	int bad = 1 << 30;
	uint64_t busy, steal;
	CHECK(nt_cpus_stat(&bad, 1, &busy, &steal) == -ENOENT); // no such CPU
	// Pinned to one CPU and spinning, the CPU is never idle: whoever runs there, its busy
	// and steal time grow by the wall time (counted in ticks: half of it is a wide margin).
	REQUIRE(nt_pin_self(cpus[0]) == 0);
	uint64_t b0, s0, b1, s1;
	REQUIRE(nt_cpus_stat(cpus, 1, &b0, &s0) == 0);
	double t0 = now_s(), t;
	volatile uint64_t spin = 0;
	while ((t = now_s()) - t0 < 0.3)
		spin = spin + 1;
	REQUIRE(nt_cpus_stat(cpus, 1, &b1, &s1) == 0);
	double wall_ns = (now_s() - t0) * 1e9;
	CHECK((double)((b1 - b0) + (s1 - s0)) >= 0.5 * wall_ns);
	CHECK((double)((b1 - b0) + (s1 - s0)) <= 1.2 * wall_ns + 2e7);
	// Every allowed CPU at once: at least the one's.
	uint64_t ball, sall;
	REQUIRE(nt_cpus_stat(cpus, (size_t)n, &ball, &sall) == 0);
	CHECK(ball + sall >= b1 + s1);
}
