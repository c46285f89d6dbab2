// Attribution over made-up logs: the late arrival at a collective's entry, and lateness absorbed
// in point-to-point waits between collectives (halo exchanges), each blamed on the right rank
// for the right cause.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <noisetool/attrib.h>
#include <noisetool/probe.h>

namespace {

struct fake_log {
	nt_log log{};
	std::vector<nt_log_rank> ranks;
	nt_log_site site{};
	std::vector<std::vector<nt_log_record>> records;

	explicit fake_log(uint32_t nranks = 2) : ranks(nranks), records(nranks)
	{
		site.function = "MPI_Allreduce";
		site.module = "app";
		for (uint32_t r = 0; r < nranks; r++) {
			ranks[r].rank = r;
			ranks[r].host = "node";
			ranks[r].nsites = 1;
			ranks[r].sites = &site;
		}
		log.nranks = nranks;
		log.ranks = ranks.data();
	}
	fake_log(const fake_log &) = delete; // log and ranks point into it
	fake_log &operator=(const fake_log &) = delete;
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
		for (size_t r = 0; r < ranks.size(); r++) {
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

	SECTION("time neither running nor runnable: steal without a voluntary switch, blocked with")
	{
		// CI's coarse run: rank 1 computed 40 ms and had 11.2 ms neither on the CPU nor in
		// the run queue, no switch of either kind, 17 minor and 3 major faults.
		for (uint64_t vol : { 0, 4 }) {
			fake_log f;
			f.add(0, 8, 20000000, 0, 0, 20000000, 20000000, 0);
			f.add(1, 8, 40000000, 0, 0, 40100000, 28900000, 0);
			f.records[1][0].win.vol_switches = vol;
			f.records[1][0].win.minor_faults = 17;
			f.records[1][0].win.major_faults = 3;
			nt_attrib a = f.one_culprit();
			const nt_causes &c = a.ranks[0].causes;
			CHECK(a.ranks[0].delay_ns == 20000000);
			if (vol == 0) { // never slept: the hypervisor had the vCPU
				CHECK(c.ns[NT_CAUSE_BLOCKED] == 0);
				CHECK(c.ns[NT_CAUSE_PREEMPTION] == 0);
				CHECK(c.ns[NT_CAUSE_STEAL] >= 11000000);
			} else { // slept: blocked, the major faults' share of it page faults
				CHECK(c.ns[NT_CAUSE_PREEMPTION] == 0);
				CHECK(c.ns[NT_CAUSE_BLOCKED] + c.ns[NT_CAUSE_PAGE_FAULT] >= 11000000);
				CHECK(c.ns[NT_CAUSE_PAGE_FAULT] >= 300000);
			}
			nt_attrib_free(&a);
		}
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

namespace {

// The attribution of a log of these ranks (nt_attrib_free it).
nt_attrib attrib_of(std::vector<nt_log_rank> &ranks)
{
	nt_log log{};
	log.nranks = (uint32_t)ranks.size();
	log.ranks = ranks.data();
	nt_attrib a;
	REQUIRE(nt_attrib_build(&log, &a) == 0);
	return a;
}

uint64_t cause_sum(const nt_causes &c)
{
	uint64_t s = 0;
	for (uint64_t ns : c.ns)
		s += ns;
	return s;
}

} // namespace

// nt_attrib_build is public: a program may hand it a log it built, with numbers the reader
// would refuse (doc/ntlog-format.md, "Ranges"). Whatever they are, nothing overflows and no
// double is converted out of range (undefined behaviour: on x86-64 a delay past 2^64 ns came
// out as 2^63, and clang's UBSan stops on it).
TEST_CASE("attribution stays defined for numbers no run writes", "[attrib]")
{
	SECTION("a delay past 2^64 ns saturates")
	{
		fake_log f;
		f.ranks[1].init_global_ns = INT64_MAX;
		f.ranks[1].drift_ppb = INT64_MAX; // global time runs 9.2e9 times as fast
		f.add(0, 1, 0, 0, 0, 0, 0, 0);
		f.add(1, 1, UINT64_MAX, 0, 0, 0, 0, 0); // no window: all unexplained
		nt_attrib a = f.one_culprit();
		CHECK(a.ranks[0].delay_ns == UINT64_MAX);
		CHECK(a.total_delay_ns == UINT64_MAX);
		CHECK(a.late[0].delay_ns == UINT64_MAX);
		CHECK(a.late[0].start_ns == 0);
		CHECK(a.late[0].causes.ns[NT_CAUSE_UNEXPLAINED] == UINT64_MAX);
		nt_attrib_free(&a);
	}

	SECTION("arrivals before the global origin: the delay is still the difference")
	{
		fake_log f;
		f.ranks[0].init_global_ns = INT64_MIN;
		f.ranks[1].init_global_ns = INT64_MIN;
		f.ranks[0].drift_ppb = INT64_MIN; // runs backwards
		f.ranks[1].drift_ppb = INT64_MIN;
		f.add(0, 1, 1000, 0, 0, 0, 0, 0);
		f.add(1, 1, 0, 0, 0, 0, 0, 0);
		nt_attrib a = f.one_culprit();
		CHECK(a.ranks[0].rank == 1); // its clock ran back less far
		CHECK(a.late[0].start_ns == 0); // the median arrival is before the origin
		CHECK(a.ranks[0].delay_ns > 0);
		nt_attrib_free(&a);
	}

	SECTION("windows and counts at 2^64 - 1: the causes still add up to the delay")
	{
		fake_log f;
		f.add(0, 2, 1000000, 0, 0, 1000000, 1000000, 0);
		f.add(1, 2, 1500000, 0, 0, UINT64_MAX, 0, UINT64_MAX);
		f.records[1][0].win.major_faults = UINT64_MAX;
		f.records[1][0].win.minor_faults = UINT64_MAX;
		f.records[1][0].win.injected_ns = UINT64_MAX;
		f.records[1][0].win.instructions = UINT64_MAX;
		f.records[1][0].win.cpu_ns = UINT64_MAX;
		f.records[1][0].win.valid = ~0u;
		f.records[0][0].win.instructions = 1;
		nt_attrib a = f.one_culprit();
		CHECK(a.ranks[0].delay_ns == 500000);
		CHECK(cause_sum(a.ranks[0].causes) == 500000);
		for (uint64_t ns : a.ranks[0].causes.ns)
			CHECK(ns <= 500000);
		nt_attrib_free(&a);
	}

	SECTION("delays that add up past 2^64 ns: the totals saturate")
	{
		fake_log f;
		f.ranks[1].init_global_ns = INT64_MAX / 2;
		for (uint64_t seq = 1; seq <= 4; seq++) {
			f.add(0, seq, seq, 0, 0, 0, 0, 0);
			f.add(1, seq, seq, 0, 0, 0, 0, 0); // each 2^62 ns late
		}
		nt_attrib a = f.one_culprit();
		CHECK(a.instances_late == 4);
		CHECK(a.late[0].delay_ns == (uint64_t)INT64_MAX / 2 + 1);
		CHECK(a.total_delay_ns == UINT64_MAX);
		CHECK(a.ranks[0].delay_ns == UINT64_MAX);
		CHECK(a.nodes[0].delay_ns == UINT64_MAX);
		CHECK(a.sites[0].delay_ns == UINT64_MAX);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_UNEXPLAINED] == UINT64_MAX);
		nt_attrib_free(&a);
	}

	SECTION("a clock error bound near 2^64: the threshold saturates, nothing is late")
	{
		fake_log f;
		f.ranks[0].clock_error_ns = UINT64_MAX - 10;
		f.add(0, 3, 0, 0, 0, 0, 0, 0);
		f.add(1, 3, 1ull << 56, 0, 0, 0, 0, 0);
		f.finish();
		nt_attrib a;
		REQUIRE(nt_attrib_build(&f.log, &a) == 0);
		CHECK(a.threshold_ns == UINT64_MAX);
		CHECK(a.instances_joined == 1);
		CHECK(a.instances_late == 0);
		nt_attrib_free(&a);
	}

	SECTION("a rank that claims records but has none is refused")
	{
		fake_log f;
		f.finish();
		f.ranks[1].records = nullptr;
		f.ranks[1].nrecords = 5;
		nt_attrib a;
		CHECK(nt_attrib_build(&f.log, &a) == -EINVAL);
	}
}

TEST_CASE("culprits per node and call site: grouped by sorting, one entry each", "[attrib]")
{
	// 2,000 ranks, each late once at its own instance, on 1,000 hosts (two ranks a host) and
	// 500 call sites (four ranks a site): the groups are exact. (A linear search per late
	// instance made this quadratic: a crafted log of 10^6 hosts took hours.)
	const uint32_t nranks = 2000;
	std::vector<nt_log_rank> ranks(nranks);
	std::vector<std::string> hosts(nranks), modules(nranks);
	std::vector<nt_log_site> sites(nranks);
	std::vector<std::vector<nt_log_record>> recs(nranks);
	for (uint32_t r = 0; r < nranks; r++) {
		hosts[r] = "node" + std::to_string(r / 2);
		modules[r] = "/lib/m" + std::to_string(r / 4) + ".so";
		sites[r] = nt_log_site{};
		sites[r].function = "MPI_Barrier";
		sites[r].module = modules[r].c_str();
		ranks[r] = nt_log_rank{};
		ranks[r].rank = r;
		ranks[r].host = hosts[r].c_str();
		ranks[r].nsites = 1;
		ranks[r].sites = &sites[r];
		// instance r on the communicator of ranks r and r + 1 (mod P): rank r is late
		for (uint32_t m : { r, (r + nranks - 1) % nranks }) {
			nt_log_record x{};
			x.comm_id = 1 + m;
			x.seq = 1;
			x.start_ns = m == r ? 1000000 + 1000 * (uint64_t)r : 0;
			recs[r].push_back(x);
		}
		ranks[r].records = recs[r].data();
		ranks[r].nrecords = recs[r].size();
	}
	nt_attrib a = attrib_of(ranks);
	CHECK(a.instances_late == nranks);
	CHECK(a.nranks == nranks);
	REQUIRE(a.nnodes == nranks / 2);
	REQUIRE(a.nsites == nranks / 4);
	// Largest first: the last host holds the two latest ranks.
	CHECK(std::string(a.nodes[0].host) == "node999");
	CHECK(a.nodes[0].instances == 2);
	CHECK(a.nodes[0].delay_ns == 2 * 1000000 + 1000 * (1998 + 1999));
	CHECK(std::string(a.sites[0].site->module) == "/lib/m499.so");
	CHECK(a.sites[0].instances == 4);
	uint64_t total = 0;
	for (size_t i = 0; i < a.nnodes; i++) {
		CHECK(a.nodes[i].instances == 2);
		total += a.nodes[i].delay_ns;
	}
	CHECK(total == a.total_delay_ns);
	CHECK(std::string(a.late[0].host) == "node999");
	nt_attrib_free(&a);
}

TEST_CASE("instances are joined whatever their ids and the order of the records", "[attrib]")
{
	// 5 ranks, 3 communicators whose ids differ in their high bytes, 200 instances each
	// numbered across three bytes, every rank's records in a shuffled order: each instance
	// is one join, its last arriver rank (i + c) % 5, late by 10 us + i ns over the other
	// four, which arrive at the same time.
	const uint32_t nranks = 5;
	const uint64_t comms[] = { 0x8000000000000001ull, 3, 0x0001000000000000ull };
	std::vector<nt_log_rank> ranks(nranks);
	std::vector<std::vector<nt_log_record>> recs(nranks);
	nt_log_site site{};
	site.function = "MPI_Allreduce";
	site.module = "app";
	for (uint32_t c = 0; c < 3; c++)
		for (uint64_t i = 0; i < 200; i++) {
			uint64_t base = 1000000000 + 100000 * (200 * c + i);
			for (uint32_t r = 0; r < nranks; r++) {
				nt_log_record x{};
				x.comm_id = comms[c];
				x.seq = 300 + i * 65537;
				x.start_ns = r == (i + c) % nranks ? base + 10000 + i : base;
				recs[r].push_back(x);
			}
		}
	uint64_t lcg = 12345;
	for (uint32_t r = 0; r < nranks; r++) {
		for (size_t i = recs[r].size() - 1; i > 0; i--) {
			lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
			std::swap(recs[r][i], recs[r][(lcg >> 33) % (i + 1)]);
		}
		ranks[r] = nt_log_rank{};
		ranks[r].rank = r;
		ranks[r].host = "node";
		ranks[r].nsites = 1;
		ranks[r].sites = &site;
		ranks[r].records = recs[r].data();
		ranks[r].nrecords = recs[r].size();
	}
	nt_attrib a = attrib_of(ranks);
	CHECK(a.instances_joined == 600);
	REQUIRE(a.instances_late == 600);
	REQUIRE(a.nlate == 600);
	size_t right = 0;
	for (size_t k = 0; k < a.nlate; k++) {
		const nt_late &l = a.late[k];
		uint32_t c = l.comm_id == comms[0] ? 0 : l.comm_id == comms[1] ? 1 : 2;
		uint64_t i = (l.seq - 300) / 65537;
		right += l.comm_id == comms[c] && l.seq == 300 + i * 65537 && i < 200 &&
			 l.rank == (i + c) % nranks && l.members == nranks &&
			 l.delay_ns == 10000 + i;
	}
	CHECK(right == 600);
	nt_attrib_free(&a);
}

// The model's numbers, pinned exactly on made-up logs: every expected value is worked out by hand
// from the arrivals and windows (attrib.c: nt_attrib_build, split, window_causes,
// interval_culprit), so a change to the model fails here rather than passing on margins.
namespace {

// A window with no OS time in it: wall = CPU, no run delay, nothing else.
const uint64_t quiet_ns = 1000000;

// The late instance of sequence number seq (the test fails if there is none).
const nt_late &late_at(const nt_attrib &a, uint64_t seq)
{
	for (size_t i = 0; i < a.nlate; i++)
		if (a.late[i].seq == seq)
			return a.late[i];
	FAIL("no late instance " << seq);
	return a.late[0];
}

} // namespace

TEST_CASE("attribution measures the delay against the median arrival", "[attrib]")
{
	// Every window is quiet, so the whole delay is unexplained and only the arrivals decide.
	SECTION("3 ranks: the median, not the first arriver")
	{
		fake_log f(3);
		// By rank: 40 us, 5 ms, 0. By arrival: rank 2 (0), rank 0 (40 us), rank 1 (5 ms);
		// the median is member (3 - 1) / 2 = 1, rank 0 at 40 us. Delay 5 ms - 40 us;
		// against the first arriver it would be 5 ms.
		f.add(0, 1, 40000, 0, 0, quiet_ns, quiet_ns, 0);
		f.add(1, 1, 5000000, 0, 0, quiet_ns, quiet_ns, 0);
		f.add(2, 1, 0, 0, 0, quiet_ns, quiet_ns, 0);
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		CHECK(a.instances_joined == 1);
		CHECK(a.late[0].rank == 1);
		CHECK(a.late[0].members == 3);
		CHECK(a.late[0].start_ns == 40000);
		CHECK(a.late[0].delay_ns == 5000000 - 40000);
		CHECK(a.late[0].causes.ns[NT_CAUSE_UNEXPLAINED] == 5000000 - 40000);
		// What the members waited for rank 1, summed: rank 0 from 40 us, rank 2 from 0.
		CHECK(a.late[0].waited_ns == (5000000 - 40000) + 5000000);
		// ... and by rank, unexplained as the delay is (the windows are quiet)
		REQUIRE(a.nloss == 3);
		CHECK(a.loss[0].waited_ns == 5000000 - 40000);
		CHECK(a.loss[1].waited_ns == 0);
		CHECK(a.loss[2].waited_ns == 5000000);
		CHECK(a.loss[2].unexplained_ns == 5000000);
		CHECK(a.loss[2].cause_ns == 0);
		CHECK(a.ranks[0].rank == 1);
		CHECK(a.ranks[0].delay_ns == 5000000 - 40000);
		CHECK(a.total_delay_ns == 5000000 - 40000);
		nt_attrib_free(&a);
	}

	SECTION("5 ranks: the median, not the first arriver")
	{
		fake_log f(5);
		// By rank: 50 us, 5 ms, 0, 60 us, 40 us. By arrival: ranks 2 (0), 4 (40 us),
		// 0 (50 us), 3 (60 us), 1 (5 ms); the median is member (5 - 1) / 2 = 2, rank 0 at
		// 50 us.
		const uint64_t start[5] = { 50000, 5000000, 0, 60000, 40000 };
		for (uint32_t r = 0; r < 5; r++)
			f.add(r, 1, start[r], 0, 0, quiet_ns, quiet_ns, 0);
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		CHECK(a.late[0].rank == 1);
		CHECK(a.late[0].members == 5);
		CHECK(a.late[0].start_ns == 50000);
		CHECK(a.late[0].delay_ns == 5000000 - 50000);
		CHECK(a.late[0].causes.ns[NT_CAUSE_UNEXPLAINED] == 5000000 - 50000);
		CHECK(a.late[0].waited_ns == 4 * 5000000 - (50000 + 0 + 60000 + 40000));
		CHECK(a.ranks[0].delay_ns == 5000000 - 50000);
		nt_attrib_free(&a);
	}

	SECTION("4 ranks: the lower of the two middle arrivals")
	{
		fake_log f(4);
		// Arrivals 0, 40 us, 50 us, 5 ms (ranks 0 to 3): the median is member
		// (4 - 1) / 2 = 1, rank 1 at 40 us.
		const uint64_t start[4] = { 0, 40000, 50000, 5000000 };
		for (uint32_t r = 0; r < 4; r++)
			f.add(r, 1, start[r], 0, 0, quiet_ns, quiet_ns, 0);
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		CHECK(a.late[0].rank == 3);
		CHECK(a.late[0].start_ns == 40000);
		CHECK(a.late[0].delay_ns == 5000000 - 40000);
		nt_attrib_free(&a);
	}
}

TEST_CASE("time off the CPU: blocked with a voluntary switch, preemption without", "[attrib]")
{
	// Rank 0 arrives at 1 ms with a quiet window (nothing of it to subtract); rank 1 arrives
	// at 2 ms, 1 ms late, after a 1.8 ms window with 1 ms on the CPU and 200 us of run delay:
	// 1.8 ms - 1 ms - 200 us = 600 us neither running nor runnable. The causes (800 us) are
	// under the delay, so none is scaled and 1 ms - 800 us = 200 us is unexplained.
	fake_log f;
	f.add(0, 1, 1000000, 0, 0, quiet_ns, quiet_ns, 0);
	f.add(1, 1, 2000000, 0, 0, 1800000, 1000000, 200000);
	nt_log_window &w = f.records[1][0].win;

	SECTION("voluntary switches: the 600 us are blocked")
	{
		w.vol_switches = 3;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(a.ranks[0].rank == 1);
		CHECK(a.ranks[0].delay_ns == 1000000);
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 200000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 600000);
		CHECK(c.ns[NT_CAUSE_PAGE_FAULT] == 0);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 200000);
		CHECK(cause_sum(c) == 1000000);
		nt_attrib_free(&a);
	}

	SECTION("no voluntary switch (rusage read): the 600 us are steal, its own cause")
	{
		w.vol_switches = 0;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 200000);
		CHECK(c.ns[NT_CAUSE_STEAL] == 600000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 0);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 200000);
		nt_attrib_free(&a);
	}

	SECTION("no rusage: the switches are unknown, the 600 us stay blocked")
	{
		w.vol_switches = 0;
		w.valid = NT_SRC_SCHEDSTAT | NT_SRC_THREAD_CPU;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 200000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 600000);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 200000);
		nt_attrib_free(&a);
	}

	SECTION("no schedstat: the run delay is not read, all 800 us off the CPU are blocked")
	{
		w.vol_switches = 3;
		w.valid = NT_SRC_THREAD_CPU | NT_SRC_RUSAGE;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 0);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 1800000 - 1000000);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 200000);
		nt_attrib_free(&a);
	}

	SECTION("neither schedstat nor CPU time: nothing is known off the CPU, all unexplained")
	{
		w.vol_switches = 3;
		w.valid = NT_SRC_RUSAGE;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 0);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 0);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 1000000);
		nt_attrib_free(&a);
	}
}

TEST_CASE("page faults: minor ones at 250 ns, major ones at 100 us out of the blocked time",
	  "[attrib]")
{
	// As above: rank 1 is 1 ms late with 200 us of run delay and 600 us blocked (voluntary
	// switches), now with 40 minor faults: 40 x 250 ns = 10 us (attrib.c MINOR_FAULT_NS), and
	// of the on-CPU time left unexplained, up to 10 us a fault (MINOR_FAULT_MAX_NS) with
	// those: 400 us in all.
	fake_log f;
	f.add(0, 1, 1000000, 0, 0, quiet_ns, quiet_ns, 0);
	f.add(1, 1, 2000000, 0, 0, 1800000, 1000000, 200000);
	nt_log_window &w = f.records[1][0].win;
	w.vol_switches = 3;
	w.minor_faults = 40;

	SECTION("2 major faults: 2 x 100 us of the 600 us blocked")
	{
		w.major_faults = 2;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 200000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 600000 - 200000);
		// 2 x 100 us, 10 us, and the 1 ms - (200 + 400 + 210) us = 190 us left on the CPU
		CHECK(c.ns[NT_CAUSE_PAGE_FAULT] == 200000 + 10000 + 190000);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 0);
		nt_attrib_free(&a);
	}

	SECTION("10 major faults: 1 ms at 100 us each, capped at the 600 us blocked")
	{
		w.major_faults = 10;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 200000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 0);
		// the 190 us left: out of room (600 + 10 us is over 40 x 10 us)
		CHECK(c.ns[NT_CAUSE_PAGE_FAULT] == 600000 + 10000);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 190000);
		nt_attrib_free(&a);
	}

	SECTION("major faults without a voluntary switch: steal, and no time for them")
	{
		// The same 600 us neither on the CPU nor runnable, but no voluntary switch: the
		// hypervisor's (steal), and a major fault that never slept waited for nothing.
		// Charged before the steal rule, the 2 faults' 200 us were counted twice (preemption
		// 800 us and page faults 210 us for 800 us off the CPU) and left blocked at -200 us.
		w.vol_switches = 0;
		w.major_faults = 2;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 200000);
		CHECK(c.ns[NT_CAUSE_STEAL] == 600000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 0);
		CHECK(c.ns[NT_CAUSE_PAGE_FAULT] == 10000 + 190000); // the 190 us left on the CPU
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 0);
		nt_attrib_free(&a);
	}

	SECTION("major faults without blocked time: only the minor faults count")
	{
		// 1.2 ms - 1 ms - 200 us: nothing blocked, so the major faults get nothing
		w.wall_ns = 1200000;
		w.major_faults = 2;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 200000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 0);
		// 10 us, then 390 us of the 790 us left on the CPU: 40 x 10 us in all
		CHECK(c.ns[NT_CAUSE_PAGE_FAULT] == 400000);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 1000000 - 200000 - 400000);
		nt_attrib_free(&a);
	}

	SECTION("the kernel's time: what minor faults cost, between 250 ns and 10 us each")
	{
		// No blocking: 200 us runnable, the rest on the CPU, 100 us of it the kernel's.
		w.vol_switches = 0;
		w.wall_ns = 1200000;
		w.sys_ns = 100000;
		nt_attrib a = f.one_culprit();
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PAGE_FAULT] == 400000); // 100 us, then the room
		nt_attrib_free(&a);
		w.minor_faults = 4; // 4 x 10 us at most, of the kernel's 100 us
		a = f.one_culprit();
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PAGE_FAULT] == 40000);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_UNEXPLAINED] == 1000000 - 200000 - 40000);
		nt_attrib_free(&a);
		w.minor_faults = 0; // no fault: the kernel's time is not theirs
		a = f.one_culprit();
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PAGE_FAULT] == 0);
		nt_attrib_free(&a);
	}

	SECTION("faults no more than the median member's: no room")
	{
		f.records[0][0].win.minor_faults = 40;
		nt_attrib a = f.one_culprit();
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PAGE_FAULT] == 0);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_UNEXPLAINED] == 1000000 - 200000 - 600000);
		nt_attrib_free(&a);
	}
}

TEST_CASE("the median member's OS time before its arrival is subtracted, while it waited not",
	  "[attrib]")
{
	// 3 ranks. Rank 0 arrives first (1 ms), quiet. Rank 1, the median, arrives at 1.1 ms; its
	// 1.3 ms window ends at its exit and holds its 1 ms in the call, so 1.3 - 1 = 300 us of it
	// are before its arrival. Rank 2 arrives at 2.1 ms, 1 ms after the median; its 2.6 ms
	// window (twice the median's: the scale is 2) has 1.2 ms on the CPU, 800 us of run delay
	// and 600 us blocked.
	fake_log f(3);
	f.add(0, 1, 1000000, 0, 0, quiet_ns, quiet_ns, 0);
	f.add(1, 1, 1100000, 0, 0, 1300000, 1300000, 0, 1000000);
	f.add(2, 1, 2100000, 0, 0, 2600000, 1200000, 800000);
	f.records[1][0].win.vol_switches = 1;
	f.records[2][0].win.vol_switches = 1;
	nt_log_window &m = f.records[1][0].win;

	SECTION("OS time within the time before the arrival: subtracted whole, scaled")
	{
		// 300 us of run delay (all the time it had before arriving): 2 x 300 us off rank
		// 2's 800 us; 200 us + 600 us blocked = 800 us given, 200 us unexplained.
		m.cpu_ns = 1000000;
		m.run_delay_ns = 300000;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(a.ranks[0].rank == 2);
		CHECK(a.ranks[0].delay_ns == 1000000);
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 800000 - 2 * 300000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 600000);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 200000);
		nt_attrib_free(&a);
	}

	SECTION("500 us more run delay while it waited: the same, nothing more is subtracted")
	{
		// 800 us of run delay against 300 us before the arrival: scaled by 300 / 800 to
		// 300 us, the same as above.
		m.cpu_ns = 500000;
		m.run_delay_ns = 800000;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 800000 - 2 * 300000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 600000);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 200000);
		nt_attrib_free(&a);
	}

	SECTION("more OS time than the time before the arrival: each cause cut in proportion")
	{
		// 200 us of run delay and 1.3 ms - 700 us - 200 us = 400 us blocked: 600 us against
		// 300 us, so half of each, 100 us and 200 us, x 2 off rank 2's 800 us and 600 us.
		m.cpu_ns = 700000;
		m.run_delay_ns = 200000;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 800000 - 2 * 100000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 600000 - 2 * 200000);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 1000000 - 600000 - 200000);
		nt_attrib_free(&a);
	}

	SECTION("steal counts with the rest of the median's OS time")
	{
		// Neither rank switched out voluntarily: rank 2's 600 us off the CPU are steal. The
		// median's 1.3 ms - 900 us - 100 us = 300 us too, with 100 us of run delay: 400 us
		// against the 300 us before its arrival, so 3/4 of each, 75 us and 225 us, x 2 off
		// rank 2's 800 us and 600 us: 650 us preemption, 150 us steal, 200 us unexplained.
		// (Left out of the median's OS time, its steal would be subtracted whole: 0 us.)
		f.records[2][0].win.vol_switches = 0;
		m.vol_switches = 0;
		m.cpu_ns = 900000;
		m.run_delay_ns = 100000;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 800000 - 2 * 75000);
		CHECK(c.ns[NT_CAUSE_STEAL] == 600000 - 2 * 225000);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 0);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 200000);
		nt_attrib_free(&a);
	}

	SECTION("a window all wait: nothing subtracted, the causes scaled down to the delay")
	{
		// The median's 1.3 ms window is its 1.3 ms in the call: nothing before its
		// arrival, so its 800 us of run delay count for nothing. Rank 2's 800 + 600 us
		// exceed the 1 ms delay and are scaled by 1 / 1.4: 571,428.57 and 428,571.43 ns,
		// rounded down, and the 1 ns they leave is unexplained.
		f.records[1][0].duration_ns = 1300000;
		m.cpu_ns = 500000;
		m.run_delay_ns = 800000;
		nt_attrib a = f.one_culprit();
		const nt_causes &c = a.ranks[0].causes;
		CHECK(c.ns[NT_CAUSE_PREEMPTION] == 571428);
		CHECK(c.ns[NT_CAUSE_BLOCKED] == 428571);
		CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 1);
		CHECK(cause_sum(c) == 1000000);
		nt_attrib_free(&a);
	}
}

TEST_CASE("injected time is given whole, never reduced by the median's", "[attrib]")
{
	// Rank 0 (the median) spun 900 us for the injector in its 1 ms window; rank 1 arrives
	// 600 us late with 500 us injected in its 1.6 ms window, all on the CPU. Subtracted like
	// the other causes (x 1.6) it would be 0; it is 500 us, and 100 us is unexplained.
	fake_log f;
	f.add(0, 1, 1000000, 0, 0, quiet_ns, quiet_ns, 0);
	f.add(1, 1, 1600000, 0, 0, 1600000, 1600000, 0);
	f.records[0][0].win.injected_ns = 900000;
	f.records[1][0].win.injected_ns = 500000;
	nt_attrib a = f.one_culprit();
	const nt_causes &c = a.ranks[0].causes;
	CHECK(a.ranks[0].delay_ns == 600000);
	CHECK(c.ns[NT_CAUSE_INJECTED] == 500000);
	CHECK(c.ns[NT_CAUSE_UNEXPLAINED] == 100000);
	CHECK(cause_sum(c) == 600000);
	nt_attrib_free(&a);
}

TEST_CASE("a late record without a probe window: its delay unexplained, no OS data",
	  "[attrib]")
{
	SECTION("no window flag, or a window of 0 ns: counted, unexplained; a window: OS data")
	{
		// Rank 1 is late three times: 300 us without the window flag (its numbers, 300 us
		// of run delay, are not read), 200 us with a window of wall 0, 100 us with a window
		// of 100 us run delay.
		fake_log f;
		for (uint64_t seq = 1; seq <= 3; seq++)
			f.add(0, seq, seq * 10000000, 0, 0, quiet_ns, quiet_ns, 0);
		f.add(1, 1, 10300000, 0, 0, 1300000, 1000000, 300000);
		f.records[1][0].flags &= ~NT_LOG_REC_WINDOW;
		f.add(1, 2, 20200000, 0, 0, 0, 0, 0);
		f.add(1, 3, 30100000, 0, 0, 1100000, 1000000, 100000);
		nt_attrib a = f.one_culprit();
		CHECK(a.instances_late == 3);
		CHECK(a.instances_no_window == 2);
		REQUIRE(a.nlate == 3);
		const nt_late &l1 = late_at(a, 1), &l2 = late_at(a, 2), &l3 = late_at(a, 3);
		CHECK(l1.delay_ns == 300000);
		CHECK(l1.causes.ns[NT_CAUSE_UNEXPLAINED] == 300000);
		CHECK(l1.causes.ns[NT_CAUSE_PREEMPTION] == 0);
		CHECK(cause_sum(l1.causes) == 300000);
		CHECK_FALSE(l1.os_data);
		CHECK(l2.delay_ns == 200000);
		CHECK(l2.causes.ns[NT_CAUSE_UNEXPLAINED] == 200000);
		CHECK_FALSE(l2.os_data);
		CHECK(l3.delay_ns == 100000);
		CHECK(l3.causes.ns[NT_CAUSE_PREEMPTION] == 100000);
		CHECK(l3.causes.ns[NT_CAUSE_UNEXPLAINED] == 0);
		CHECK(l3.os_data);
		// rank 1 in all: 600 us, of which 300 + 200 us unexplained, 100 us preemption
		CHECK(a.ranks[0].delay_ns == 600000);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_UNEXPLAINED] == 500000);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PREEMPTION] == 100000);
		nt_attrib_free(&a);
	}

	SECTION("the median without a window: the late rank's causes given whole")
	{
		fake_log f;
		f.add(0, 1, 1000000, 0, 0, 1300000, 1000000, 300000);
		f.records[0][0].flags &= ~NT_LOG_REC_WINDOW; // its 300 us are not read
		f.add(1, 1, 1300000, 0, 0, 1300000, 1000000, 300000);
		nt_attrib a = f.one_culprit();
		CHECK(a.instances_no_window == 0);
		CHECK(a.late[0].os_data);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_PREEMPTION] == 300000);
		CHECK(a.ranks[0].causes.ns[NT_CAUSE_UNEXPLAINED] == 0);
		nt_attrib_free(&a);
	}
}

TEST_CASE("lateness in the interval: the rank busy longest over the median busy member",
	  "[attrib]")
{
	// 3 ranks, each 1.4 ms since the previous instance. Busy time (interval - point-to-point):
	// rank 0 1.4 ms - 50 us = 1.35 ms, rank 1 1.4 ms - 700 us = 700 us, rank 2 1.4 ms - 600 us
	// = 800 us. Sorted 700, 800, 1350 us: the busy median is member (3 - 1) / 2 = 1, rank 2,
	// and rank 0 was busy 1.35 ms - 800 us = 550 us longer.
	fake_log f(3);
	auto members = [&f](uint64_t start2_ns) {
		f.add(0, 1, 2000000, 1400000, 50000, 1350000, 850000, 500000);
		f.add(1, 1, 2000300, 1400000, 700000, 700000, 700000, 0);
		f.add(2, 1, start2_ns, 1400000, 600000, 800000, 800000, 0);
	};

	SECTION("arrived first, but busy longest: rank 0 is late, against the busy median")
	{
		// At the entry rank 2 is 200 ns after the median arrival (rank 1's): below the 1 us
		// threshold alone, and under the 550 us of the interval.
		members(2000500);
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		CHECK(a.instances_late == 1);
		CHECK(a.late[0].rank == 0);
		CHECK(a.late[0].delay_ns == 550000);
		// the median is rank 2, the busy median, and the start its arrival
		CHECK(a.late[0].start_ns == 2000500);
		// rank 0's window: 500 us of run delay against rank 2's quiet one, 50 us
		// unexplained
		CHECK(a.late[0].causes.ns[NT_CAUSE_PREEMPTION] == 500000);
		CHECK(a.late[0].causes.ns[NT_CAUSE_UNEXPLAINED] == 50000);
		CHECK(a.late[0].os_data);
		// What the others waited, by busy time: rank 1 1.35 ms - 700 us, rank 2 550 us.
		CHECK(a.late[0].waited_ns == 650000 + 550000);
		CHECK(a.ranks[0].rank == 0);
		nt_attrib_free(&a);
	}

	SECTION("the entry lateness equal to the busy excess: the entry rule keeps it")
	{
		// rank 2 arrives 550 us after rank 1: the interval's 550 us are not more
		members(2000300 + 550000);
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		CHECK(a.late[0].rank == 2);
		CHECK(a.late[0].delay_ns == 550000);
		CHECK(a.late[0].start_ns == 2000300);
		// rank 2's window is quiet: all unexplained
		CHECK(a.late[0].causes.ns[NT_CAUSE_UNEXPLAINED] == 550000);
		nt_attrib_free(&a);
	}

	SECTION("the entry lateness larger: the entry rule")
	{
		members(2000300 + 600000);
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		CHECK(a.late[0].rank == 2);
		CHECK(a.late[0].delay_ns == 600000);
		nt_attrib_free(&a);
	}
}

TEST_CASE("held up inside the call: the member held longest, by the OS time in its window",
	  "[attrib]")
{
	// The site's own cost, known from its histogram: 100 calls in [1024, 2048) ns at 1 GHz,
	// whose lower quartile is 1280 ns.
	auto with_costs = [](fake_log &f) {
		f.site.hist[10] = 100;
		f.log.clock_hz = 1e9;
	};

	SECTION("preempted inside after giving its part: it holds itself, the others left")
	{
		fake_log f;
		with_costs(f);
		// Rank 0 arrives at 0, was preempted 600 ns before (its window), leaves after 2 us;
		// rank 1 arrives 100 ns later (not late) and stays 5 ms, 4.99 ms of it runnable.
		f.add(0, 3, 0, 0, 0, 1000000, 999400, 600, 2000);
		f.add(1, 3, 100, 0, 0, 5000000, 10000, 4990000, 5000000);
		f.finish();
		nt_attrib a;
		REQUIRE(nt_attrib_build(&f.log, &a) == 0);
		CHECK(a.instances_late == 0);
		REQUIRE(a.nheld == 1);
		CHECK(a.instances_held == 1);
		const nt_late &h = a.held[0];
		CHECK(h.rank == 1);
		CHECK(h.os_data);
		// held: rank 1 100 + 5 ms - (100 + 1280), rank 0 2000 - 1380
		CHECK(h.delay_ns == 5000000 - 1280);
		CHECK(h.waited_ns == (5000000 - 1280) + 620);
		CHECK(a.loss[1].held_ns == 5000000 - 1280);
		CHECK(a.loss[0].held_ns == 620);
		CHECK(a.loss[1].cause_ns + a.loss[1].unexplained_ns == a.loss[1].held_ns);
		CHECK(a.loss[1].cause_ns > 4980000);
		CHECK(h.causes.ns[NT_CAUSE_PREEMPTION] > 4980000);
		CHECK(cause_sum(h.causes) == h.delay_ns);
		REQUIRE(a.nheld_ranks == 1);
		CHECK(a.held_ranks[0].rank == 1);
		CHECK(a.held_ranks[0].delay_ns == h.delay_ns);
		nt_attrib_free(&a);
	}

	SECTION("preempted inside before giving its part: all held alike, the preempted one named")
	{
		fake_log f;
		with_costs(f);
		// Rank 0 waits 5 ms in the call on a quiet CPU; rank 1, 100 ns later, is runnable
		// 4.9 ms of its 5 ms: both leave at 5 ms.
		f.add(0, 3, 0, 0, 0, 5000000, 5000000, 0, 5000000);
		f.add(1, 3, 100, 0, 0, 5000000, 100000, 4900000, 4999900);
		f.finish();
		nt_attrib a;
		REQUIRE(nt_attrib_build(&f.log, &a) == 0);
		REQUIRE(a.nheld == 1);
		CHECK(a.held[0].rank == 1);
		CHECK(a.held[0].waited_ns == 2 * (5000000 - 1380));
		CHECK(a.held[0].causes.ns[NT_CAUSE_PREEMPTION] > 4800000);
		nt_attrib_free(&a);
	}

	SECTION("the member held longest without a window: named, not measured")
	{
		fake_log f;
		with_costs(f);
		// As the first case, but rank 1's record has no window; rank 0's shows 600 ns of
		// run delay, which must not make it the culprit.
		f.add(0, 3, 0, 0, 0, 1000000, 999400, 600, 2000);
		f.add(1, 3, 100, 0, 0, 5000000, 10000, 4990000, 5000000);
		f.records[1].back().flags &= ~NT_LOG_REC_WINDOW;
		f.finish();
		nt_attrib a;
		REQUIRE(nt_attrib_build(&f.log, &a) == 0);
		REQUIRE(a.nheld == 1);
		CHECK(a.held[0].rank == 1);
		CHECK_FALSE(a.held[0].os_data);
		CHECK(a.held[0].causes.ns[NT_CAUSE_UNEXPLAINED] == a.held[0].delay_ns);
		nt_attrib_free(&a);
	}

	SECTION("no histogram: the own cost is not known, and no hold is counted")
	{
		fake_log f;
		f.add(0, 3, 0, 0, 0, 1000000, 999400, 600, 2000);
		f.add(1, 3, 100, 0, 0, 5000000, 10000, 4990000, 5000000);
		f.finish();
		nt_attrib a;
		REQUIRE(nt_attrib_build(&f.log, &a) == 0);
		CHECK(a.nheld == 0);
		CHECK(a.instances_held == 0);
		nt_attrib_free(&a);
	}
}

TEST_CASE("lateness carried from a hold inside the instance before", "[attrib]")
{
	// Instance 3: rank 1 is held 5 ms inside the call (4.99 ms runnable) after rank 0 left.
	// Instance 4: rank 1 arrives those 5 ms late, its window since its late exit quiet: the
	// lateness is the hold's, and takes its causes.
	fake_log f;
	f.site.hist[10] = 100; // own cost 1280 ns at 1 GHz
	f.log.clock_hz = 1e9;
	f.add(0, 3, 0, 0, 0, 1000000, 1000000, 0, 2000);
	f.add(1, 3, 100, 0, 0, 5000000, 10000, 4990000, 5000000);
	f.add(0, 4, 100000, 0, 0, 98000, 98000, 0, 5000000);
	f.add(1, 4, 5100000, 0, 0, 98000, 98000, 0, 2000);

	SECTION("the same member: its late arrival takes the hold's causes")
	{
		f.finish();
		nt_attrib a;
		REQUIRE(nt_attrib_build(&f.log, &a) == 0);
		REQUIRE(a.nheld == 1);
		CHECK(a.held[0].seq == 3);
		REQUIRE(a.nlate == 1);
		const nt_late &l = a.late[0];
		CHECK(l.seq == 4);
		CHECK(l.rank == 1);
		CHECK(l.delay_ns == 5000000);
		// The hold's shares: 4.99 ms of its 4,998,720 ns preemption.
		CHECK(l.causes.ns[NT_CAUSE_PREEMPTION] > 4900000);
		CHECK(cause_sum(l.causes) == l.delay_ns);
		nt_attrib_free(&a);
	}

	SECTION("another member late: nothing is carried")
	{
		f.records[0][1].start_ns = 5200000; // rank 0 arrives last at instance 4
		f.records[1][1].start_ns = 100000;
		f.finish();
		nt_attrib a;
		REQUIRE(nt_attrib_build(&f.log, &a) == 0);
		REQUIRE(a.nlate == 1);
		CHECK(a.late[0].rank == 0);
		CHECK(a.late[0].causes.ns[NT_CAUSE_PREEMPTION] == 0);
		nt_attrib_free(&a);
	}
}

TEST_CASE("lateness carried from the late rank's own long call before, not joined", "[attrib]")
{
	// A rank that waits inside every collective (no compute of its own): instance 3 is kept on
	// rank 1 only (its call held 5 ms, 4.9 ms runnable: its window ended at that exit), rank 0's
	// quick call there is not recorded, so instance 3 is not joined. At instance 4 rank 1 is
	// 5 ms late after 20 us outside MPI: its lateness is that call's.
	fake_log f;
	f.add(1, 3, 100, 0, 0, 5000000, 90000, 4900000, 5000000);
	f.add(0, 4, 100000, 200000, 0, 98000, 98000, 0, 5000000);
	f.add(1, 4, 5100000, 20000, 0, 20000, 20000, 0, 2000);

	SECTION("its OS time in that call explains the lateness")
	{
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		const nt_late &l = a.late[0];
		CHECK(l.rank == 1);
		CHECK(l.delay_ns == 5000000);
		// 4.9 ms runnable, 10 us steal (no voluntary switch): all but 90 us of the delay
		CHECK(l.causes.ns[NT_CAUSE_PREEMPTION] == 4900000);
		CHECK(l.causes.ns[NT_CAUSE_STEAL] == 10000);
		CHECK(l.causes.ns[NT_CAUSE_UNEXPLAINED] == 90000);
		CHECK(a.instances_no_window == 0);
		nt_attrib_free(&a);
	}
	SECTION("also when the late arrival has no window of its own: it has OS data then")
	{
		f.records[1][1].flags &= ~NT_LOG_REC_WINDOW;
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		CHECK(a.late[0].causes.ns[NT_CAUSE_PREEMPTION] == 4900000);
		CHECK(a.late[0].os_data);
		CHECK(a.instances_no_window == 0);
		CHECK(a.delay_no_window_ns == 0);
		nt_attrib_free(&a);
	}
	SECTION("its own time outside MPI could hold the lateness: nothing is carried")
	{
		f.records[1][1].interval_ns = 6000000;
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		CHECK(a.late[0].causes.ns[NT_CAUSE_PREEMPTION] == 0);
		nt_attrib_free(&a);
	}
	SECTION("its call before was too short to make the lateness: nothing is carried")
	{
		f.records[1][0].duration_ns = 1000000;
		nt_attrib a = f.one_culprit();
		CHECK(a.late[0].causes.ns[NT_CAUSE_PREEMPTION] == 0);
		nt_attrib_free(&a);
	}
	SECTION("at most its call's length is carried: the window may reach back before it")
	{
		f.records[1][0].duration_ns = 2000000; // 2 ms in the call, 4.91 ms of OS time
		f.records[1][1].start_ns = 3000000;    // 2.9 ms late after 1 ms outside MPI
		f.records[1][1].interval_ns = 1000000;
		nt_attrib a = f.one_culprit();
		REQUIRE(a.nlate == 1);
		const nt_late &l = a.late[0];
		CHECK(l.delay_ns == 2900000);
		CHECK(l.causes.ns[NT_CAUSE_PREEMPTION] + l.causes.ns[NT_CAUSE_STEAL] <= 2000000);
		CHECK(l.causes.ns[NT_CAUSE_PREEMPTION] > 1990000);
		CHECK(l.causes.ns[NT_CAUSE_UNEXPLAINED] >= 900000);
		nt_attrib_free(&a);
	}
	SECTION("its record before is of another instance number: nothing is carried")
	{
		f.records[1][0].seq = 2;
		nt_attrib a = f.one_culprit();
		CHECK(a.late[0].causes.ns[NT_CAUSE_PREEMPTION] == 0);
		nt_attrib_free(&a);
	}
}
