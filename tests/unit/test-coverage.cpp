// Coverage over made-up logs (noisetool/coverage.h): a collective site's own cost from its
// histogram, the time over it, and the late arrivals' waits split as their delay is.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include <noisetool/coverage.h>

namespace {

// A 1 GHz clock: a histogram bin b holds durations of [2^b, 2^(b+1)) ns.
constexpr double hz = 1e9;

nt_log_site site_with(std::vector<std::pair<int, uint64_t>> bins, uint64_t min_ns,
		      uint64_t max_ns, uint64_t total_ns)
{
	nt_log_site s{};
	s.function = "MPI_Allreduce";
	s.module = "app";
	for (auto &b : bins) {
		s.hist[b.first] = b.second;
		s.calls += b.second;
	}
	s.min_ns = min_ns;
	s.max_ns = max_ns;
	s.total_ns = total_ns;
	return s;
}

} // namespace

TEST_CASE("a collective site's own cost: the lower quartile of its histogram", "[coverage]")
{
	// 100 calls in [4096, 8192) ns and 100 in [2^20, 2^21): the quartile is the 50th call,
	// half-way through the first bin: 6144 ns.
	nt_log_site s = site_with({ { 12, 100 }, { 20, 100 } }, 4500, 1500000, 0);
	CHECK(nt_coverage_own_ns(&s, hz) == 6144);
	// never below the site's minimum or above its maximum
	s.min_ns = 7000;
	CHECK(nt_coverage_own_ns(&s, hz) == 7000);
	s = site_with({ { 12, 4 } }, 4096, 5000, 0);
	CHECK(nt_coverage_own_ns(&s, hz) == 5000);
	// an empty histogram (every call a poll), no clock: 0
	s = site_with({}, 0, 0, 0);
	CHECK(nt_coverage_own_ns(&s, hz) == 0);
	s = site_with({ { 12, 4 } }, 0, 0, 0);
	CHECK(nt_coverage_own_ns(&s, 0) == 0);
}

TEST_CASE("coverage: time over the own cost, and the waits given to a rank", "[coverage]")
{
	// 2 ranks, one collective site each (named by a record) and one point-to-point site.
	nt_log_site coll = site_with({ { 12, 100 }, { 20, 100 } }, 4096, 2000000, 110000000);
	nt_log_site p2p = site_with({ { 10, 10 } }, 1024, 2047, 15000);
	p2p.function = "MPI_Send";
	nt_log_site sites[2] = { coll, p2p };
	nt_log_record rec{};
	rec.comm_id = 0;
	rec.site = 0;
	nt_log_record p2p_rec{}; // a record of the send site without a communicator
	p2p_rec.comm_id = UINT64_MAX;
	p2p_rec.site = 1;
	nt_log_record recs[2] = { rec, p2p_rec };
	nt_log_rank ranks[2]{};
	for (uint32_t r = 0; r < 2; r++) {
		ranks[r].rank = r;
		ranks[r].nsites = 2;
		ranks[r].sites = sites;
		ranks[r].nrecords = 2;
		ranks[r].records = recs;
		ranks[r].mpi_ns = 110015000;
	}
	nt_log log{};
	log.nranks = 2;
	log.ranks = ranks;
	log.clock_hz = hz;
	// Own cost 6144 ns a call: 200 calls 1,228,800 ns; over it 108,771,200 ns a rank.
	const uint64_t over = 2 * (110000000 - 200 * 6144);

	SECTION("no attribution: everything over the own cost is unaccounted")
	{
		nt_coverage c;
		REQUIRE(nt_coverage_build(&log, NULL, &c) == 0);
		CHECK(c.mpi_ns == 2 * 110015000);
		CHECK(c.coll_ns == 2 * 110000000); // the send site is not a collective's
		CHECK(c.own_ns == 2 * 200 * 6144);
		CHECK(c.over_ns == over);
		CHECK(c.waited_ns == 0);
	}

	SECTION("late instances: their waits split as their delay, not measured apart")
	{
		std::vector<nt_late> late(2);
		late[0].delay_ns = 10000000;
		late[0].waited_ns = 10000000;
		late[0].causes.ns[NT_CAUSE_PREEMPTION] = 7500000;
		late[0].causes.ns[NT_CAUSE_UNEXPLAINED] = 2500000;
		late[0].os_data = true;
		late[1].delay_ns = 4000000;
		late[1].waited_ns = 6000000; // 3 ranks: more waited than the delay
		late[1].causes.ns[NT_CAUSE_UNEXPLAINED] = 4000000;
		late[1].os_data = false;
		// and one hold inside a call: 3 ms for the others, 5 ms lost in all, all preemption
		std::vector<nt_late> held(1);
		held[0].delay_ns = 3000000;
		held[0].waited_ns = 5000000;
		held[0].causes.ns[NT_CAUSE_PREEMPTION] = 3000000;
		held[0].os_data = true;
		nt_attrib a{};
		a.late = late.data();
		a.nlate = late.size();
		a.held = held.data();
		a.nheld = held.size();
		nt_coverage c;
		REQUIRE(nt_coverage_build(&log, &a, &c) == 0);
		CHECK(c.waited_ns == 16000000);
		CHECK(c.held_ns == 5000000);
		CHECK(c.cause_ns == 7500000 + 5000000);
		CHECK(c.unexplained_ns == 2500000);
		CHECK(c.no_data_ns == 6000000);
		CHECK(c.over_ns == over);
	}

	SECTION("waits beyond the time over the own cost are scaled down to it")
	{
		std::vector<nt_late> late(1);
		late[0].delay_ns = 1000000000;
		late[0].waited_ns = 2 * over;
		late[0].causes.ns[NT_CAUSE_BLOCKED] = 1000000000;
		late[0].os_data = true;
		nt_attrib a{};
		a.late = late.data();
		a.nlate = 1;
		nt_coverage c;
		REQUIRE(nt_coverage_build(&log, &a, &c) == 0);
		CHECK(c.waited_ns == c.over_ns);
		CHECK(c.held_ns == 0);
		CHECK(c.cause_ns + c.unexplained_ns + c.no_data_ns == c.over_ns);
		CHECK(c.cause_ns >= c.over_ns - 2);
	}
}
