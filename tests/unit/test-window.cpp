// The wrappers' probe windows (wrappers/window.c) over a fake probe: a detour or a preemption
// landing in one of the reads made when the probe opens does not become the limiter's estimate
// of a read's cost, and the first window starts at the last of those reads. The fake probe and
// injector stand in for libnoisetool's (this executable defines them); the clock is real.
#include <catch2/catch.hpp>

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

uint64_t nt_inject_spun_cyc(void)
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
		uint64_t due = nt_window_open(NT_PROBE_OS, now);
		REQUIRE(fake.ends.size() == NT_REC_FIRST_READS);
		// The next read is due when the estimated cost is the budget's share of the time
		// since: the detour taken as the cost would put it 200 ms away. Three cheap reads
		// all interrupted by half the detour would be needed to come near.
		CHECK(due - now < (uint64_t)((double)detour / 2 / NT_REC_READ_BUDGET));

		// The first window starts at the last read of the open.
		uint64_t close_at = nt_clock_now_cyc();
		nt_window_close(close_at);
		CHECK(nt_window_last()->wall_cyc == close_at - fake.ends[NT_REC_FIRST_READS - 1]);
		nt_window_shutdown();
	}
}
