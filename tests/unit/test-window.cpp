// The wrappers' probe windows (wrappers/window.c) over a fake probe: the reads made when the
// probe opens report their costs, so that a detour or a preemption landing in one of them does
// not become the recording policy's estimate of a read's cost; the first window starts at the
// last of those reads; a close reports what its read cost. The fake probe and injector stand
// in for libnoisetool's (this executable defines them); the clock is real.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include <noisetool/clock.h>
#include <noisetool/inject.h>
#include <noisetool/probe.h>

#include "recpolicy.h"
#include "window.h"

namespace {

struct fake_probe_state {
	int slow_read = -1;           // the read (0, 1, ...) that holds a detour
	uint64_t slow_cyc = 0;        // and its length
	std::vector<uint64_t> ends;   // each read's counter value
} fake;

} // namespace

extern "C" {

struct nt_probe {
	int unused;
};

int nt_probe_open(struct nt_probe **out, const struct nt_probe_config *)
{
	static nt_probe p;
	*out = &p;
	return 0;
}

void nt_probe_close(struct nt_probe *) {}

int nt_probe_read(struct nt_probe *, struct nt_probe_sample *s)
{
	uint64_t t0 = nt_clock_now_cyc();
	if ((int)fake.ends.size() == fake.slow_read)
		while (nt_clock_now_cyc() - t0 < fake.slow_cyc)
			;
	std::memset(s, 0, sizeof *s);
	s->counter_cyc = nt_clock_now_cyc();
	s->valid = NT_SRC_SCHEDSTAT;
	fake.ends.push_back(s->counter_cyc);
	return 0;
}

void nt_probe_delta(const struct nt_probe_sample *, const struct nt_probe_sample *,
		    struct nt_probe_delta *d)
{
	std::memset(d, 0, sizeof *d);
	d->valid = NT_SRC_SCHEDSTAT;
}

uint64_t nt_inject_taken_cyc(void)
{
	return 0;
}
}

TEST_CASE("a detour in a read at open does not become the estimate of a read's cost",
	  "[window]")
{
	REQUIRE(nt_clock_init() == 0);
	const uint64_t detour = nt_clock_ns_to_cyc(2e6); // 2 ms
	for (int slow = 0; slow < NT_REC_FIRST_READS; slow++) {
		CAPTURE(slow);
		fake = fake_probe_state{ slow, detour, {} };
		uint64_t now = nt_clock_now_cyc();
		uint64_t costs[NT_REC_FIRST_READS];
		REQUIRE(nt_window_open(NT_PROBE_OS, costs, NT_REC_FIRST_READS) == 0);
		REQUIRE(fake.ends.size() == NT_REC_FIRST_READS);
		CHECK(costs[slow] >= detour); // measured as it was
		nt_rec_thread rt;
		nt_recpolicy_windows_open(&rt, now, costs, NT_REC_FIRST_READS);
		// The estimate is the least of the reads: the detour taken as the cost would
		// make every record's early read look unaffordable. Three cheap reads all
		// interrupted by half the detour would be needed to come near.
		CHECK(rt.read_cost_cyc < detour / 2);

		// The first window starts at the last read of the open.
		uint64_t close_at = nt_clock_now_cyc();
		nt_window_read rd;
		REQUIRE(nt_window_close(close_at, &rd) == 0);
		CHECK(nt_window_last()->wall_cyc == close_at - fake.ends[NT_REC_FIRST_READS - 1]);
		CHECK(nt_window_last()->end_cyc == close_at);
		nt_window_shutdown();
	}
}

TEST_CASE("a close reports its read: when it ended and what it took", "[window]")
{
	REQUIRE(nt_clock_init() == 0);
	const uint64_t spin = nt_clock_ns_to_cyc(1e5); // 100 us in the read
	fake = fake_probe_state{ NT_REC_FIRST_READS, spin, {} }; // the first close's read
	uint64_t costs[NT_REC_FIRST_READS];
	REQUIRE(nt_window_open(NT_PROBE_OS, costs, NT_REC_FIRST_READS) == 0);
	uint64_t before = nt_clock_now_cyc();
	nt_window_read rd{};
	REQUIRE(nt_window_close(before, &rd) == 0);
	uint64_t after = nt_clock_now_cyc();
	CHECK(rd.cost_cyc >= spin);
	CHECK(rd.end_cyc <= after);
	CHECK(rd.end_cyc - rd.cost_cyc >= before);
	// The next window starts at the close's instant, not at its read.
	uint64_t close2 = nt_clock_now_cyc();
	REQUIRE(nt_window_close(close2, &rd) == 0);
	CHECK(nt_window_last()->wall_cyc == close2 - before);
	uint64_t reads = 0;
	double mean_ns = 0;
	nt_window_stats(&reads, &mean_ns);
	CHECK(reads >= 2);
	nt_window_shutdown();
}

TEST_CASE("no windows at the timing level, nor without a probe", "[window]")
{
	fake = fake_probe_state{};
	uint64_t costs[NT_REC_FIRST_READS] = {};
	CHECK(nt_window_open(NT_PROBE_TIMING, costs, NT_REC_FIRST_READS) == -EINVAL);
	CHECK(fake.ends.empty()); // nothing read
	nt_window_read rd{ 7, 7 };
	CHECK(nt_window_close(1000, &rd) == -EBADF);
	CHECK(rd.end_cyc == 7); // untouched
}
