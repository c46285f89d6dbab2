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

TEST_CASE("coverage: time over the own cost, and what each rank lost, adding up", "[coverage]")
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
	const uint64_t over = 110000000 - 200 * 6144;
	auto adds_up = [](const nt_coverage_part &p) {
		CHECK(p.own_ns + p.over_ns == p.coll_ns);
		CHECK(p.waited_ns + p.held_ns <= p.over_ns);
		CHECK(p.cause_ns + p.unexplained_ns + p.no_data_ns == p.waited_ns + p.held_ns);
	};

	SECTION("no attribution: everything over the own cost is unaccounted")
	{
		nt_coverage c;
		REQUIRE(nt_coverage_build(&log, NULL, &c) == 0);
		REQUIRE(c.nranks == 2);
		CHECK(c.all.mpi_ns == 2 * 110015000);
		CHECK(c.all.coll_ns == 2 * 110000000); // the send site is not a collective's
		CHECK(c.all.own_ns == 2 * 200 * 6144);
		CHECK(c.all.over_ns == 2 * over);
		CHECK(c.ranks[1].over_ns == over);
		CHECK(c.all.waited_ns == 0);
		adds_up(c.all);
		nt_coverage_free(&c);
		CHECK(c.ranks == nullptr);
	}

	SECTION("what each rank lost, split as the attribution says, summed over the ranks")
	{
		std::vector<nt_rank_loss> loss(2);
		loss[0] = { 10000000, 2000000, 9000000, 1000000, 2000000 };
		loss[1] = { 0, 5000000, 5000000, 0, 0 };
		nt_attrib a{};
		a.loss = loss.data();
		a.nloss = loss.size();
		nt_coverage c;
		REQUIRE(nt_coverage_build(&log, &a, &c) == 0);
		CHECK(c.ranks[0].waited_ns == 10000000);
		CHECK(c.ranks[0].held_ns == 2000000);
		CHECK(c.ranks[1].held_ns == 5000000);
		CHECK(c.all.waited_ns == 10000000);
		CHECK(c.all.held_ns == 7000000);
		CHECK(c.all.cause_ns == 14000000);
		CHECK(c.all.unexplained_ns == 1000000);
		CHECK(c.all.no_data_ns == 2000000);
		for (const nt_coverage_part &p : { c.all, c.ranks[0], c.ranks[1] })
			adds_up(p);
		nt_coverage_free(&c);
	}

	SECTION("by call site: each site's losses within its time over the own cost, a rank's parts "
		"its sites' sums")
	{
		// Rank 0 lost 10 ms at its collective site, rank 1 twice its time over the own
		// cost there (scaled down to it); the send sites lost nothing.
		std::vector<nt_rank_loss> loss(2), site_loss(4);
		site_loss[0] = { 10000000, 0, 8000000, 2000000, 0 };
		site_loss[2] = { 2 * over, 0, 0, 0, 2 * over };
		size_t site_at[2] = { 0, 2 };
		nt_attrib a{};
		a.loss = loss.data(); // the ranks' sums, which the coverage takes from the sites
		a.nloss = loss.size();
		a.site_loss = site_loss.data();
		a.site_at = site_at;
		a.nsite_loss = site_loss.size();
		nt_coverage c;
		REQUIRE(nt_coverage_build(&log, &a, &c) == 0);
		REQUIRE(c.nsites == 4);
		REQUIRE(c.sites != nullptr);
		CHECK(c.sites[0].waited_ns == 10000000);
		CHECK(c.sites[0].cause_ns == 8000000);
		CHECK(c.sites[1].mpi_ns == 15000); // the send site: its time, nothing collective
		CHECK(c.sites[1].coll_ns == 0);
		CHECK(c.sites[2].waited_ns == over);
		CHECK(c.sites[2].no_data_ns == over);
		CHECK(c.ranks[0].waited_ns == 10000000);
		CHECK(c.ranks[0].unexplained_ns == 2000000);
		CHECK(c.ranks[1].no_data_ns == over);
		CHECK(c.all.waited_ns == 10000000 + over);
		for (size_t i = 0; i < 4; i++)
			adds_up(c.sites[i]);
		for (const nt_coverage_part &p : { c.all, c.ranks[0], c.ranks[1] })
			adds_up(p);
		nt_coverage_free(&c);
		CHECK(c.sites == nullptr);
	}

	SECTION("a rank's losses beyond its time over the own cost are scaled down to it")
	{
		std::vector<nt_rank_loss> loss(2);
		loss[0] = { 2 * over, 0, 2 * over, 0, 0 };
		nt_attrib a{};
		a.loss = loss.data();
		a.nloss = loss.size();
		nt_coverage c;
		REQUIRE(nt_coverage_build(&log, &a, &c) == 0);
		CHECK(c.ranks[0].waited_ns == over);
		CHECK(c.ranks[0].cause_ns == over);
		CHECK(c.ranks[1].waited_ns == 0);
		for (const nt_coverage_part &p : { c.all, c.ranks[0], c.ranks[1] })
			adds_up(p);
		nt_coverage_free(&c);
	}
}
