// The recording policy on made-up counter values: which instances a call site keeps and with
// which flags, its thresholds after each refresh, and the window limiter's reads over a long
// simulated run. Nothing here reads a clock: every number is exact.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "recpolicy.h"

namespace {

const uint64_t FLOOR = 4000;  // 2 us at 2 GHz
const uint64_t ABS = 2000000; // 1 ms at 2 GHz: the absolute floor

// A call site as the wrappers book it: the sums take the instance, then the policy judges it
// by the thresholds of the last refresh (the inline trigger, then the flags of a record).
struct site {
	nt_rec_thresholds th;
	uint64_t calls = 0, total_cyc = 0, span_sum_cyc = 0;
	site() { nt_recpolicy_init(&th, ABS); }

	// One instance of d cycles in the call after a span; its flags, 0 when it is not kept.
	uint32_t call(uint64_t d, uint64_t span)
	{
		calls++;
		total_cyc += d;
		span_sum_cyc += span;
		bool wanted = nt_recpolicy_wanted(&th, calls, d, span);
		uint32_t flags = nt_recpolicy_flags(&th, calls, d, span);
		CHECK(wanted == (flags != 0)); // the fast path and the record agree
		if (flags & NT_REC_SAMPLE)
			nt_recpolicy_refresh(&th, calls, total_cyc, span_sum_cyc, FLOOR, ABS);
		return wanted ? flags : 0;
	}
	// n instances alike; the numbers of the kept ones.
	std::vector<uint64_t> calls_kept(uint64_t n, uint64_t d, uint64_t span)
	{
		std::vector<uint64_t> kept;
		for (uint64_t i = 0; i < n; i++)
			if (call(d, span))
				kept.push_back(calls);
		return kept;
	}
};

// The window limiter driven as window.c drives it: the first read when the probe opens at
// now, then a read at the first instance that starts once the next one is due.
struct limiter {
	nt_rec_reads rl;
	uint64_t now = 1000000, due = 0, last_end = 0;
	uint64_t reads = 0, read_cyc = 0;
	explicit limiter(uint64_t first_cost)
	{
		nt_recpolicy_read_init(&rl);
		due = nt_recpolicy_read_done(&rl, now, first_cost);
		now += first_cost;
	}
	// A read that takes cost cycles, starting now; how far from its end the next is due.
	uint64_t read(uint64_t cost)
	{
		now += cost;
		reads++;
		read_cyc += cost;
		due = nt_recpolicy_read_done(&rl, now, cost);
		last_end = now;
		return due - now;
	}
	// An instance gap cycles after the previous one, with a read when one is due.
	void instance(uint64_t gap, uint64_t cost)
	{
		now += gap;
		if (now >= due)
			read(cost);
	}
};

// Deterministic gaps between instances: 100 to 20099 cycles.
struct lcg {
	uint64_t x = 12345;
	uint64_t next() { return (x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33; }
	uint64_t gap() { return 100 + next() % 20000; }
};

} // namespace

TEST_CASE("which instances a call site keeps", "[recpolicy]")
{
	site s;

	SECTION("a sample at calls 8, 16, ... 1024, then every 1024, and nothing else")
	{
		std::vector<uint64_t> expect = { 8, 16, 32, 64, 128, 256, 512, 1024 };
		for (uint64_t k = 2048; k <= 10 * 1024; k += 1024)
			expect.push_back(k);
		CHECK(s.calls_kept(10 * 1024 + 1023, 1000, 20000) == expect);
		CHECK(s.th.refresh_at == 11 * 1024);
	}

	SECTION("a sample's flags are its own: judged by the thresholds before its refresh")
	{
		for (int i = 0; i < 7; i++)
			s.call(1000, 20000);
		CHECK(s.call(1000, 20000) == NT_REC_SAMPLE);
		for (int i = 0; i < 7; i++)
			s.call(1000, 20000);
		CHECK(s.call(3001, 20000) == (NT_REC_SAMPLE | NT_REC_SLOW)); // over 3x 1000
	}

	SECTION("nothing is slow or long before the first sample: only the absolute floor keeps")
	{
		for (int i = 0; i < 3; i++)
			CHECK(s.call(ABS, ABS) == 0);
		for (int i = 0; i < 4; i++)
			CHECK(s.call(UINT64_MAX / 4, UINT64_MAX / 4) == NT_REC_ABSOLUTE);
		CHECK(s.th.slow_cyc == UINT64_MAX);
		CHECK(s.th.slow_span_cyc == UINT64_MAX);
	}

	SECTION("thresholds after each refresh come from the running means, this call included")
	{
		s.calls_kept(8, 1000, 20000);
		CHECK(s.th.slow_cyc == 3000);       // 3 x 1000
		CHECK(s.th.slow_span_cyc == 30000); // 1.5 x 20000
		CHECK(s.th.refresh_at == 16);
		// Eight more of 2000 after 40000 (long: over 30000): means 1500 and 30000.
		for (int i = 9; i < 16; i++)
			CHECK(s.call(2000, 40000) == NT_REC_LONG_PHASE);
		CHECK(s.call(2000, 40000) == (NT_REC_LONG_PHASE | NT_REC_SAMPLE));
		CHECK(s.th.slow_cyc == 4500);
		CHECK(s.th.slow_span_cyc == 45000);
		CHECK(s.th.refresh_at == 32);
		// Sixteen more of 1500 after 30000: the means stay, the thresholds too.
		for (int i = 17; i <= 32; i++)
			s.call(1500, 30000);
		CHECK(s.th.slow_cyc == 4500);
		CHECK(s.th.slow_span_cyc == 45000);
		CHECK(s.th.refresh_at == 64);
	}

	SECTION("a slow call: over 3x the mean time in the call, not at it")
	{
		s.calls_kept(8, 1000, 20000);
		CHECK(s.call(3000, 20000) == 0);
		CHECK(s.call(3001, 20000) == NT_REC_SLOW);
		CHECK(s.call(1000000, 0) == NT_REC_SLOW);
	}

	SECTION("a long span: over 1.5x the mean span, not at it")
	{
		s.calls_kept(8, 1000, 20000);
		CHECK(s.call(1000, 30000) == 0);
		CHECK(s.call(1000, 30001) == NT_REC_LONG_PHASE);
		CHECK(s.call(0, 1000000) == NT_REC_LONG_PHASE);
	}

	SECTION("a long span is also at least 2 us over the mean one")
	{
		s.calls_kept(8, 1000, 2000); // mean span 2000: 1.5x would be 3000
		CHECK(s.th.slow_span_cyc == 2000 + FLOOR);
		CHECK(s.call(1000, 3001) == 0);
		CHECK(s.call(1000, 2000 + FLOOR) == 0);
		CHECK(s.call(1000, 2001 + FLOOR) == NT_REC_LONG_PHASE);
	}

	SECTION("the floor gives way where half the mean span is larger")
	{
		s.calls_kept(8, 1000, 2 * FLOOR + 2); // half the mean is FLOOR + 1
		CHECK(s.th.slow_span_cyc == 3 * FLOOR + 3);
		site z;
		z.calls_kept(8, 1000, 0); // back-to-back collectives: spans of 0
		CHECK(z.th.slow_span_cyc == FLOOR);
	}

	SECTION("slow and long together keep both flags")
	{
		s.calls_kept(8, 1000, 20000);
		CHECK(s.call(5000, 50000) == (NT_REC_SLOW | NT_REC_LONG_PHASE));
	}

	SECTION("a nonblocking completion (no span) is kept only when slow or sampled")
	{
		s.calls_kept(8, 1000, 20000);
		CHECK_FALSE(nt_recpolicy_wanted(&s.th, 9, 3000, 0));
		CHECK(nt_recpolicy_wanted(&s.th, 9, 3001, 0));
		CHECK(nt_recpolicy_wanted(&s.th, 16, 1000, 0));
	}
}

TEST_CASE("the absolute floor keeps what a coarse-grained program does", "[recpolicy]")
{
	SECTION("a site called twice: a wait or a span over 1 ms is kept, each member's side")
	{
		site waiter, late;
		CHECK(waiter.call(3 * ABS, 100) == NT_REC_ABSOLUTE); // waited 3 ms in the call
		CHECK(late.call(1000, 3 * ABS) == NT_REC_ABSOLUTE);  // computed 3 ms before it
		CHECK(waiter.call(ABS + 1, 100) == NT_REC_ABSOLUTE);
		CHECK(late.call(1000, ABS) == 0); // not over the floor
	}

	SECTION("the relative flags win where they hold")
	{
		site s;
		s.calls_kept(8, 1000, 20000);
		CHECK(s.call(3 * ABS, 20000) == NT_REC_SLOW);
		CHECK(s.call(1000, 3 * ABS) == NT_REC_LONG_PHASE);
	}

	SECTION("a rank late by 5 ms at every instance: kept while the floor is under 5 ms")
	{
		// The waiting side's mean is its wait: no call is 3x the mean, so the relative
		// rules keep only samples; the floor, rising by 1 ms every 1024 calls past 1024,
		// keeps the calls until 5120, then samples again.
		site s;
		std::vector<uint64_t> kept = s.calls_kept(20 * 1024, 5 * ABS, 1000);
		CHECK(kept.size() >= 5 * 1024 - 1);
		CHECK(kept.size() <= 5 * 1024 + 16);
		CHECK(kept[5 * 1024 - 2] == 5 * 1024 - 1);
		CHECK(s.th.keep_cyc == 15 * ABS); // 3x the mean, under the floor of 20 ms by then
	}

	SECTION("a fine-grained site never reaches the floor")
	{
		site s;
		CHECK(s.calls_kept(4096, 1000, 20000).size() == 11); // samples only
	}
}

TEST_CASE("the window limiter", "[recpolicy]")
{
	const uint64_t C = 5000; // one read, in cycles

	SECTION("reads stay within 1 % of wall time over a long run, and near it")
	{
		limiter l(C);
		uint64_t start = l.now;
		lcg g;
		while (l.now - start < 20000000000ull) // 10 s at 2 GHz, ~2 million instances
			l.instance(g.gap(), C);
		double share = (double)l.read_cyc / (double)(l.now - start);
		CHECK(l.reads > 15000);
		CHECK(share <= 0.01);
		CHECK(share >= 0.009); // an instance comes at most 20099 cycles after a read is due
	}

	SECTION("the next read is due when the estimated cost is 1 % of the time since the read")
	{
		limiter l(C);
		CHECK(l.due == 1000000 + 100 * C); // the first read is due from the probe's opening
		CHECK(l.read(C) == 100 * C);
	}

	SECTION("the estimate is an EWMA of the measured costs")
	{
		limiter l(8000);
		CHECK(l.read(16000) == 100 * 9000); // (7 x 8000 + 16000) / 8
		CHECK(l.read(1000) == 100 * 8000);  // (7 x 9000 + 1000) / 8
	}

	SECTION("one interrupted read (100x) does not push the next read far away")
	{
		limiter l(C);
		for (int i = 0; i < 50; i++)
			l.read(C);
		uint64_t normal = l.read(C);
		uint64_t after = l.read(100 * C);
		CHECK(after >= normal);
		CHECK(after <= normal * 9 / 8); // counted as 2x: (7 x C + 2 x C) / 8
		// ... and the estimate comes back to the true cost.
		for (int i = 0; i < 60; i++)
			l.read(C);
		CHECK(l.read(C) == normal);
	}

	SECTION("the first read's cost is taken as measured: there is no estimate to clamp to")
	{
		limiter l(100 * C);
		CHECK(l.due == 1000000 + 100 * 100 * C);
	}

	SECTION("a span is affordable when a read costs at most 5 % of it")
	{
		limiter l(C);
		CHECK(nt_recpolicy_read_affordable(&l.rl, 20 * C));
		CHECK_FALSE(nt_recpolicy_read_affordable(&l.rl, 20 * C - 1));
	}

	SECTION("a record ends its window early for a long span, not for a short one")
	{
		limiter l(C);
		uint64_t t1 = l.now + 1000; // before the next read is due
		REQUIRE(t1 < l.due);
		CHECK(nt_recpolicy_record_ends_window(&l.rl, l.last_end, t1, 20 * C));
		CHECK_FALSE(nt_recpolicy_record_ends_window(&l.rl, l.last_end, t1, 20 * C - 1));
	}

	SECTION("a record does not end a window that just ended at its exit")
	{
		limiter l(C);
		uint64_t t1 = l.now + 1000;
		CHECK_FALSE(nt_recpolicy_record_ends_window(&l.rl, t1, t1, 1000 * C));
	}
}

TEST_CASE("a record's window and interval flags", "[recpolicy]")
{
	SECTION("the window flag: the last window ended at the record's exit")
	{
		CHECK(nt_recpolicy_record_flags(5000, 5000, 0) == NT_REC_WINDOW);
		CHECK(nt_recpolicy_record_flags(4999, 5000, 0) == 0);
		CHECK(nt_recpolicy_record_flags(0, 5000, 0) == 0); // no window closed yet
	}

	SECTION("the interval flag: an interval is known")
	{
		CHECK(nt_recpolicy_record_flags(1, 5000, 7) == NT_REC_INTERVAL);
		CHECK(nt_recpolicy_record_flags(5000, 5000, 7) == (NT_REC_WINDOW | NT_REC_INTERVAL));
	}

	SECTION("a record that ends its window carries it")
	{
		nt_rec_reads rl;
		nt_recpolicy_read_init(&rl);
		nt_recpolicy_read_done(&rl, 1000, 100);
		uint64_t window_end = 1000, t1 = 3000;
		if (nt_recpolicy_record_ends_window(&rl, window_end, t1, 2000))
			window_end = t1; // window.c closes it at the record's exit
		CHECK(nt_recpolicy_record_flags(window_end, t1, 2000) ==
		      (NT_REC_WINDOW | NT_REC_INTERVAL));
	}
}
