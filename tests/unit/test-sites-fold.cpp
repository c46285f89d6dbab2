// A call site's aggregates as a call adds to them (nt_sites_add, nt_sites_add_one in
// wrappers/sites.h): count, total, bytes, minimum, maximum and the log2 histogram, which must
// give what the plain rule gives: bin 0 for 0 and 1 cycles, else bin floor(log2 d), a bin for
// every bit of a 64-bit duration. Made-up durations, no MPI calls.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "sites.h"

// What nt_sites_add needs from sites.c: one thread (the atomic path is never taken here).
bool nt_sites_threaded_ = false;
void nt_sites_add_atomic(struct nt_site *, uint64_t, uint64_t)
{
	FAIL("the atomic path was taken with one thread");
}

namespace {

// The rule, written plainly.
struct reference {
	uint64_t calls = 0, total = 0, bytes = 0;
	uint64_t min = UINT64_MAX, max = 0, hist[NT_SITE_HIST] = {};
	void add(uint64_t d, uint64_t b)
	{
		calls++;
		total += d;
		bytes += b;
		unsigned bin = 0;
		while (bin + 1 < NT_SITE_HIST && d >> (bin + 1))
			bin++;
		hist[bin]++;
		if (d < min)
			min = d;
		if (d > max)
			max = d;
	}
};

struct site_under_test {
	nt_site s;
	site_under_test()
	{
		std::memset(&s, 0, sizeof s);
		s.min_cyc = UINT64_MAX; // as sites.c places a new site
	}
};

void check_same(const site_under_test &t, const reference &r)
{
	CHECK(t.s.calls == r.calls);
	CHECK(t.s.total_cyc == r.total);
	CHECK(t.s.bytes == r.bytes);
	CHECK(t.s.min_cyc == r.min);
	CHECK(t.s.max_cyc == r.max);
	for (unsigned b = 0; b < NT_SITE_HIST; b++) {
		INFO("bin " << b);
		CHECK(t.s.hist[b] == r.hist[b]);
	}
}

} // namespace

TEST_CASE("add: a duration joins every aggregate at once")
{
	site_under_test t;
	reference r;
	nt_sites_add(&t.s, 500, 8);
	CHECK(t.s.calls == 1);
	CHECK(t.s.total_cyc == 500);
	CHECK(t.s.max_cyc == 500);
	CHECK(t.s.min_cyc == 500);
	CHECK(t.s.hist[8] == 1);
	nt_sites_add_one(&t.s, 70); // the fast path's: its bytes joined before the call
	t.s.bytes += 8;
	CHECK(t.s.max_cyc == 500);
	CHECK(t.s.min_cyc == 70);
	r.add(500, 8);
	r.add(70, 8);
	check_same(t, r);
}

TEST_CASE("add: edges of the bins and of the histogram")
{
	std::vector<uint64_t> ds = { 0, 1, 2, 3, 4, 7, 8, 1000, (uint64_t)1 << 46,
				     ((uint64_t)1 << 47) - 1, (uint64_t)1 << 47, (uint64_t)1 << 50,
				     UINT64_MAX - 1 };
	site_under_test t;
	reference r;
	for (uint64_t d : ds) {
		nt_sites_add(&t.s, d, 0);
		r.add(d, 0);
	}
	check_same(t, r);
	CHECK(t.s.hist[0] == 2);                // 0 and 1 cycles
	CHECK(t.s.hist[47] == 1);               // 2^47
	CHECK(t.s.hist[NT_SITE_HIST - 1] == 1); // UINT64_MAX - 1
	CHECK(t.s.min_cyc == 0);
	CHECK(t.s.max_cyc == UINT64_MAX - 1);
}

TEST_CASE("add: a long made-up run")
{
	std::mt19937_64 rng(12345);
	site_under_test t;
	reference r;
	for (int i = 0; i < 100000; i++) {
		uint64_t d = rng() >> (rng() % 64); // every magnitude
		uint64_t b = rng() % 4096;
		nt_sites_add(&t.s, d, b);
		r.add(d, b);
	}
	check_same(t, r);
}
