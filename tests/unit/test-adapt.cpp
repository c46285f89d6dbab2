// The adaptive policy's state machine, driven with made-up times, run delays, CPU shares and
// cycle times.
#include <catch2/catch.hpp>

#include "adapt.h"

namespace {

const uint64_t MS = 1000000;

struct driver {
	nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
	nt_adapt a;
	uint64_t now = 1000 * MS, delay = 0;
	driver() { nt_adapt_init(&a, &cfg, now); }

	nt_poll_mode mode()
	{
		uint64_t slice;
		return nt_adapt_mode(&a, now, &slice);
	}
	// Spin for ms milliseconds, a sample each millisecond, losing share of the time to others.
	void spin(uint64_t ms, double share)
	{
		if (!a.have_last) // a stretch starts with a reading, as the poller's spin does
			nt_adapt_runnable_sample(&a, now, delay);
		for (uint64_t i = 0; i < ms; i++) {
			now += MS;
			delay += (uint64_t)(share * MS);
			nt_adapt_runnable_sample(&a, now, delay);
		}
	}
	void sleep(uint64_t ms)
	{
		now += ms * MS;
		nt_adapt_slept(&a);
	}
	// Events every cycle_us while in mode m, for ms milliseconds (asking for the mode at each).
	void events(uint64_t ms, nt_poll_mode expect, uint64_t cycle_us, double share = 0.5)
	{
		uint64_t end = now + ms * MS;
		while (now < end) {
			nt_poll_mode m = mode();
			if (m != expect)
				return;
			if (m == NT_MODE_SPIN)
				spin(0, share);
			now += cycle_us * 1000;
			if (m == NT_MODE_SPIN)
				nt_adapt_runnable_sample(&a, now, delay += (uint64_t)(share * cycle_us * 1000));
			else
				nt_adapt_slept(&a);
			nt_adapt_cycle(&a, m, cycle_us * 1000);
		}
	}
};

} // namespace

TEST_CASE("adaptive: a free CPU spins; a competitor makes an idle poller sleep; its end frees it")
{
	driver d;
	REQUIRE(d.mode() == NT_MODE_SPIN);
	d.spin(30, 0.0);
	CHECK(d.mode() == NT_MODE_SPIN);
	CHECK(d.a.measurements == 3);
	CHECK(d.a.phase == NT_ADAPT_FREE);

	d.spin(10, 0.5); // a competitor takes half the CPU: one measurement is not enough
	CHECK(d.a.share == Approx(0.5));
	CHECK(d.a.phase == NT_ADAPT_FREE);
	d.spin(10, 0.5); // two in a row are
	CHECK(d.a.phase == NT_ADAPT_DWELL);
	CHECK(d.mode() == NT_MODE_SPIN); // a short look at spinning on the shared CPU
	d.spin(25, 0.5);
	CHECK(d.mode() == NT_MODE_SLEEP); // no events to judge by: leave the CPU to the other task

	// While sleeping, the CPU's accounting tells when the competitor is gone.
	d.sleep(200);
	nt_adapt_cpu_share(&d.a, d.now, 0.6);
	CHECK(d.mode() == NT_MODE_SLEEP);
	for (int i = 0; i < 2; i++) {
		d.sleep(200);
		nt_adapt_cpu_share(&d.a, d.now, 0.0);
		CHECK(d.mode() == NT_MODE_SLEEP); // not yet: three in a row
	}
	d.sleep(200);
	nt_adapt_cpu_share(&d.a, d.now, 0.0);
	CHECK(d.mode() == NT_MODE_SPIN);
	CHECK(d.a.phase == NT_ADAPT_FREE);

	// The competitor is back within 10 s: the choice held before resumes at once.
	d.spin(20, 0.5);
	CHECK(d.a.phase == NT_ADAPT_DWELL);
	CHECK(d.mode() == NT_MODE_SLEEP);
}

TEST_CASE("adaptive: on a shared CPU it keeps the mode whose cycles are shorter")
{
	driver d;
	d.spin(20, 0.5); // shared
	REQUIRE(d.a.phase == NT_ADAPT_DWELL);

	SECTION("spinning gives shorter cycles (an echo server beside a hog): a sleep trial is cut short")
	{
		d.events(25, NT_MODE_SPIN, 36);   // the first look: spin
		REQUIRE(d.mode() == NT_MODE_SLEEP); // the trial of sleeping
		uint64_t t0 = d.now;
		d.events(50, NT_MODE_SLEEP, 60);
		CHECK(d.mode() == NT_MODE_SPIN);
		CHECK(d.a.aborted == 1);
		CHECK(d.now - t0 < 2 * MS); // 8 cycles of 60 us: the bad choice cost under 1 ms
		CHECK(d.a.dwell_ns == 2 * d.cfg.dwell_ns); // confirmed: kept twice as long
	}
	SECTION("sleeping gives shorter cycles (a server that computes per request)")
	{
		d.events(25, NT_MODE_SPIN, 1848);
		REQUIRE(d.mode() == NT_MODE_SLEEP);
		d.events(50, NT_MODE_SLEEP, 768);
		CHECK(d.mode() == NT_MODE_SLEEP);
		CHECK(d.a.chosen == NT_MODE_SLEEP);
		CHECK(d.a.last_cycle_ns[NT_MODE_SPIN] == Approx(1848000));
		CHECK(d.a.last_cycle_ns[NT_MODE_SLEEP] == Approx(768000));

		SECTION("a later spin trial is cut short; 5 % better would not be enough")
		{
			d.events(1000, NT_MODE_SLEEP, 768);
			REQUIRE(d.mode() == NT_MODE_SPIN); // the trial
			d.events(50, NT_MODE_SPIN, 1848);
			CHECK(d.mode() == NT_MODE_SLEEP);
			CHECK(d.a.aborted == 1);
			d.events(2000, NT_MODE_SLEEP, 768);
			REQUIRE(d.mode() == NT_MODE_SPIN);
			d.events(50, NT_MODE_SPIN, 730); // 5 % better: not enough
			CHECK(d.mode() == NT_MODE_SLEEP);
		}
	}
	SECTION("cycles within 5 % (SOR beside a hog): with MPI waits' sleep_win sleeping wins")
	{
		d.cfg.sleep_win = 1.05;
		nt_adapt_init(&d.a, &d.cfg, d.now);
		d.spin(20, 0.5);
		d.events(25, NT_MODE_SPIN, 300);
		REQUIRE(d.mode() == NT_MODE_SLEEP);
		d.events(50, NT_MODE_SLEEP, 312); // 4 % longer
		CHECK(d.mode() == NT_MODE_SLEEP);
		CHECK(d.a.chosen == NT_MODE_SLEEP);
	}
	SECTION("cycles within 5 %, the default sleep_win: spinning stays")
	{
		d.events(25, NT_MODE_SPIN, 300);
		REQUIRE(d.mode() == NT_MODE_SLEEP);
		d.events(50, NT_MODE_SLEEP, 290); // 3 % shorter: not enough
		CHECK(d.mode() == NT_MODE_SPIN);
	}
	SECTION("sleeping 8 % worse: spinning stays")
	{
		d.events(25, NT_MODE_SPIN, 300);
		REQUIRE(d.mode() == NT_MODE_SLEEP);
		d.events(50, NT_MODE_SLEEP, 324);
		CHECK(d.mode() == NT_MODE_SPIN);
		CHECK(d.a.chosen == NT_MODE_SPIN);
	}
}
