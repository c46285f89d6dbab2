// The adaptive policy's state machine, driven with made-up times, run delays and cycle times.
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
	// Sleep for ms (no samples), then note it.
	void sleep(uint64_t ms)
	{
		now += ms * MS;
		nt_adapt_slept(&a);
	}
};

} // namespace

TEST_CASE("adaptive: free CPU spins, a competitor makes it sleep, its end makes it spin")
{
	driver d;
	REQUIRE(d.mode() == NT_MODE_SPIN);
	d.spin(30, 0.0);
	CHECK(d.mode() == NT_MODE_SPIN);
	CHECK(d.a.measurements == 3);

	SECTION("a competitor taking half the CPU is seen within one measurement")
	{
		d.spin(10, 0.5);
		CHECK(d.a.share == Approx(0.5));
		CHECK(d.mode() == NT_MODE_SLEEP); // the sleep trial starts at once
		d.sleep(50);
		CHECK(d.mode() == NT_MODE_SPIN); // then the spin trial
		d.spin(50, 0.5);
		// no events to compare: sleeping wins, the competitor gets the CPU
		CHECK(d.mode() == NT_MODE_SLEEP);
		CHECK(d.a.phase == NT_ADAPT_DWELL);

		SECTION("while sleeping, it probes by spinning every reprobe_ns")
		{
			d.sleep(250);
			CHECK(d.mode() == NT_MODE_SPIN); // the probe
			d.spin(10, 0.5);
			CHECK(d.mode() == NT_MODE_SLEEP); // still shared
			d.sleep(250);
			CHECK(d.mode() == NT_MODE_SPIN);
			d.spin(10, 0.0); // the competitor is gone
			CHECK(d.mode() == NT_MODE_SPIN);
			CHECK(d.a.phase == NT_ADAPT_FREE);
		}
	}
}

TEST_CASE("adaptive: on a shared CPU it keeps the mode whose cycles are shorter")
{
	driver d;
	d.spin(10, 0.5); // shared
	REQUIRE(d.mode() == NT_MODE_SLEEP);
	SECTION("spinning gives shorter cycles (an echo server beside a hog)")
	{
		for (int i = 0; i < 20; i++)
			nt_adapt_cycle(&d.a, NT_MODE_SLEEP, 60000);
		d.sleep(50);
		REQUIRE(d.mode() == NT_MODE_SPIN);
		for (int i = 0; i < 20; i++)
			nt_adapt_cycle(&d.a, NT_MODE_SPIN, 36000);
		d.spin(50, 0.5);
		CHECK(d.mode() == NT_MODE_SPIN);
		CHECK(d.a.phase == NT_ADAPT_DWELL);
		CHECK(d.a.last_cycle_ns[NT_MODE_SPIN] == Approx(36000));

		SECTION("after the dwell, trials run again; 5 % better is not enough to change")
		{
			d.spin(1000, 0.5);
			REQUIRE(d.mode() == NT_MODE_SLEEP); // the new trial
			CHECK(d.a.trials == 2);
			for (int i = 0; i < 20; i++)
				nt_adapt_cycle(&d.a, NT_MODE_SLEEP, 34200);
			d.sleep(50);
			REQUIRE(d.mode() == NT_MODE_SPIN);
			for (int i = 0; i < 20; i++)
				nt_adapt_cycle(&d.a, NT_MODE_SPIN, 36000);
			d.spin(50, 0.5);
			CHECK(d.mode() == NT_MODE_SPIN); // hysteresis
		}
	}
	SECTION("sleeping gives shorter cycles (a server that computes per request)")
	{
		for (int i = 0; i < 20; i++)
			nt_adapt_cycle(&d.a, NT_MODE_SLEEP, 768000);
		d.sleep(50);
		REQUIRE(d.mode() == NT_MODE_SPIN);
		for (int i = 0; i < 20; i++)
			nt_adapt_cycle(&d.a, NT_MODE_SPIN, 1848000);
		d.spin(50, 0.5);
		CHECK(d.mode() == NT_MODE_SLEEP);
	}
	SECTION("too few events in a trial: sleep")
	{
		for (int i = 0; i < 3; i++)
			nt_adapt_cycle(&d.a, NT_MODE_SLEEP, 1000000);
		d.sleep(50);
		d.mode();
		for (int i = 0; i < 3; i++)
			nt_adapt_cycle(&d.a, NT_MODE_SPIN, 10000);
		d.spin(50, 0.5);
		CHECK(d.mode() == NT_MODE_SLEEP);
	}
}
