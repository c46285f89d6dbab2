// Attribution over made-up logs: the late arrival at a collective's entry, and lateness absorbed
// in point-to-point waits between collectives (halo exchanges), each blamed on the right rank
// for the right cause.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include <noisetool/attrib.h>
#include <noisetool/probe.h>

namespace {

struct fake_log {
	nt_log log{};
	nt_log_rank ranks[2]{};
	nt_log_site site{};
	std::vector<nt_log_record> records[2];

	fake_log()
	{
		site.function = "MPI_Allreduce";
		site.module = "app";
		for (uint32_t r = 0; r < 2; r++) {
			ranks[r].rank = r;
			ranks[r].host = "node";
			ranks[r].nsites = 1;
			ranks[r].sites = &site;
		}
		log.nranks = 2;
		log.ranks = ranks;
	}
	// One instance on one rank: its arrival, interval, point-to-point time and window.
	void add(uint32_t rank, uint64_t seq, uint64_t start_ns, uint64_t interval_ns,
		 uint64_t p2p_ns, uint64_t wall_ns, uint64_t cpu_ns, uint64_t run_delay_ns,
		 uint64_t duration_ns = 1000)
	{
		nt_log_record x{};
		x.comm_id = 0;
		x.seq = seq;
		x.flags = NT_LOG_REC_SAMPLE | NT_LOG_REC_WINDOW |
			  (interval_ns ? NT_LOG_REC_INTERVAL : 0);
		x.start_ns = start_ns;
		x.duration_ns = duration_ns;
		x.interval_ns = interval_ns;
		x.p2p_ns = p2p_ns;
		x.win.wall_ns = wall_ns;
		x.win.cpu_ns = cpu_ns;
		x.win.run_delay_ns = run_delay_ns;
		x.win.valid = NT_SRC_SCHEDSTAT | NT_SRC_THREAD_CPU | NT_SRC_RUSAGE;
		records[rank].push_back(x);
	}
	void finish()
	{
		for (int r = 0; r < 2; r++) {
			ranks[r].records = records[r].data();
			ranks[r].nrecords = records[r].size();
		}
	}
	// The attribution of a log whose late instance has one culprit (nt_attrib_free it).
	nt_attrib one_culprit()
	{
		finish();
		nt_attrib a;
		REQUIRE(nt_attrib_build(&log, &a) == 0);
		REQUIRE(a.nranks == 1);
		return a;
	}
};

} // namespace

TEST_CASE("attribution joins instances and names the late rank and its cause", "[attrib]")
{
	SECTION("late at the entry: the last arriver, by its run delay")
	{
		fake_log f;
		// rank 1 arrives 500 us after rank 0; its window shows 500 us of run delay
		f.add(0, 7, 1000000, 0, 0, 1000000, 1000000, 0);
		f.add(1, 7, 1500000, 0, 0, 1500000, 1000000, 500000);
		nt_attrib a = f.one_culprit();
		CHECK(a.instances_late == 1);
		CHECK(a.ranks[0].rank == 1);
		CHECK(a.ranks[0].delay_ns == 500000);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PREEMPTION] > 490000);
		nt_attrib_free(&a);
	}

	SECTION("what the OS took from the median rank while it waited does not excuse the late one")
	{
		fake_log f;
		// Each rank shares its CPU with a hog. Rank 1 loses 4.2 ms in its 100 us phase and
		// arrives 4.2 ms late; rank 0 waits those 4.2 ms in the call, and is itself off the
		// CPU for 2.2 ms of the wait. Both windows are 4.4 ms long and end at the exits.
		f.add(0, 5, 1000000, 0, 0, 4400000, 2200000, 2200000, 4200000);
		f.add(1, 5, 5200000, 0, 0, 4400000, 200000, 4200000, 1000);
		nt_attrib a = f.one_culprit();
		CHECK(a.ranks[0].rank == 1);
		CHECK(a.ranks[0].delay_ns == 4200000);
		// Rank 0's run delay before its arrival is at most 200 us of its window.
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PREEMPTION] >= 4000000);
		nt_attrib_free(&a);
	}

	SECTION("noise common to both phases is subtracted")
	{
		fake_log f;
		// Both ranks lose 300 us to run delay before arriving; rank 1 is 50 us later for
		// a reason the counters do not see.
		f.add(0, 6, 1000000, 0, 0, 1000000, 700000, 300000, 50000);
		f.add(1, 6, 1050000, 0, 0, 1000000, 700000, 300000, 1000);
		nt_attrib a = f.one_culprit();
		CHECK(a.ranks[0].delay_ns == 50000);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PREEMPTION] == 0);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_UNEXPLAINED] == 50000);
		nt_attrib_free(&a);
	}

	SECTION("lateness absorbed in halo exchanges: the rank busy longest, by its run delay")
	{
		fake_log f;
		// Both arrive together, but in the 1.4 ms interval rank 0 waited 0.7 ms in
		// point-to-point calls for rank 1, which was runnable but off the CPU for 0.7 ms.
		f.add(0, 3, 2000000, 1400000, 700000, 1400000, 1400000, 0);
		f.add(1, 3, 2000500, 1400000, 50000, 1400000, 700000, 700000);
		nt_attrib a = f.one_culprit();
		CHECK(a.instances_late == 1);
		CHECK(a.ranks[0].rank == 1);
		// busy 1.35 ms against 0.7 ms: 650 us, more than the 0.5 us at the entry
		CHECK(a.ranks[0].delay_ns == 650000);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PREEMPTION] > 600000);
		nt_attrib_free(&a);
	}

	SECTION("no point-to-point time: the entry rule alone, even with intervals known")
	{
		fake_log f;
		// rank 0 has the longer interval (it left the previous instance early) but rank 1
		// arrives late; without point-to-point time the arrival decides
		f.add(0, 9, 1000000, 900000, 0, 900000, 900000, 0);
		f.add(1, 9, 1200000, 800000, 0, 800000, 600000, 200000);
		nt_attrib a = f.one_culprit();
		CHECK(a.ranks[0].rank == 1);
		CHECK(a.ranks[0].delay_ns == 200000);
		nt_attrib_free(&a);
	}

	SECTION("a member without the interval: the entry rule")
	{
		fake_log f;
		f.add(0, 4, 2000000, 1400000, 700000, 1400000, 1400000, 0);
		f.add(1, 4, 2005000, 0, 0, 1400000, 700000, 700000);
		nt_attrib a = f.one_culprit();
		CHECK(a.ranks[0].rank == 1);
		CHECK(a.ranks[0].delay_ns == 5000);
		nt_attrib_free(&a);
	}
}
