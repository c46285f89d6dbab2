// A call site's fold (wrappers/sites.h): the branch-free way the fast path puts a site's
// pending duration into its minimum, maximum and log2 histogram gives what the plain rule
// gives -- bin 0 for 0 and 1 cycles, bin floor(log2 d) up to the last bin, which takes every
// longer call -- and a pending NT_SITE_NONE changes nothing. Made-up durations, no MPI calls.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "sites.h"

namespace {

// The rule, written plainly.
struct reference {
	uint64_t min = UINT64_MAX, max = 0, hist[NT_SITE_HIST] = {};
	void add(uint64_t d)
	{
		unsigned b = 0;
		while (b + 1 < NT_SITE_HIST && d >> (b + 1))
			b++;
		hist[b]++;
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
		s.min_cyc = UINT64_MAX;
		s.pending_cyc = NT_SITE_NONE;
	}
	// As nt_sites_add does: the previous duration is folded, d waits.
	void call(uint64_t d)
	{
		nt_sites_fold(&s, s.pending_cyc);
		s.pending_cyc = d;
	}
	void settle()
	{
		nt_sites_fold(&s, s.pending_cyc);
		s.pending_cyc = NT_SITE_NONE;
	}
};

void check_same(const site_under_test &t, const reference &r)
{
	CHECK(t.s.min_cyc == r.min);
	CHECK(t.s.max_cyc == r.max);
	for (unsigned b = 0; b < NT_SITE_HIST; b++) {
		INFO("bin " << b);
		CHECK(t.s.hist[b] == r.hist[b]);
	}
}

} // namespace

TEST_CASE("fold: nothing pending changes nothing")
{
	site_under_test t;
	reference r;
	t.settle(); // pending is NT_SITE_NONE
	t.settle();
	check_same(t, r);
	t.call(500);
	t.settle();
	r.add(500);
	t.settle(); // again nothing pending
	check_same(t, r);
}

TEST_CASE("fold: edges of the bins and of the histogram")
{
	std::vector<uint64_t> ds = { 0, 1, 2, 3, 4, 7, 8, 1000, (uint64_t)1 << 46,
				     ((uint64_t)1 << 47) - 1, (uint64_t)1 << 47, (uint64_t)1 << 50,
				     UINT64_MAX - 1 };
	site_under_test t;
	reference r;
	for (uint64_t d : ds) {
		t.call(d);
		r.add(d);
	}
	t.settle();
	check_same(t, r);
	CHECK(t.s.hist[0] == 2);                 // 0 and 1 cycles
	CHECK(t.s.hist[NT_SITE_HIST - 1] == 3);  // 2^47, 2^50 and UINT64_MAX - 1
	CHECK(t.s.min_cyc == 0);
	CHECK(t.s.max_cyc == UINT64_MAX - 1);
}

TEST_CASE("fold: a long made-up run")
{
	std::mt19937_64 rng(12345);
	site_under_test t;
	reference r;
	for (int i = 0; i < 100000; i++) {
		uint64_t d = rng() >> (rng() % 64); // every magnitude
		if (d == NT_SITE_NONE)
			d--;
		t.call(d);
		r.add(d);
	}
	t.settle();
	check_same(t, r);
}
