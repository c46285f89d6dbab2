// A real periodic preemption (a SCHED_FIFO child on the measured CPU, 100 us every 10 ms, timed
// by itself): every burst lies inside a detour at least as long and flagged preempted, and the
// bursts the loop saw alone are measured within 10 %, however loaded the CPU.
#include "detour-fifo.h"

TEST_CASE("every SCHED_FIFO burst is inside a detour, flagged and measured", "[detour][fifo]")
{
	fifo::run r;
	fifo::measure(3.0, &r);
	fifo::judge(&r);
	fifo::check_bursts(r);
}
