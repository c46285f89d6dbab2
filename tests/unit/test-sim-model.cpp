// The noise model from a signature's own statistics: partly hit combs of drawn lengths, the
// renewal process fitted to the measured share, the trace's run length, the signature's keys.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <noisetool/noise.h>
#include <noisetool/signature.h>
#include <noisetool/sim.h>

namespace {

struct noise_guard {
	struct nt_sim_noise *n = nullptr;
	noise_guard() { REQUIRE(nt_sim_noise_new(&n) == 0); }
	~noise_guard() { nt_sim_noise_free(n); }
	noise_guard(const noise_guard &) = delete;
	noise_guard &operator=(const noise_guard &) = delete;
};

// Share of time in detours that rank spends pushing work_ns through model's noise.
double simulated_share(const struct nt_sim_noise *n, uint64_t rank, uint64_t work_ns)
{
	uint64_t end = nt_sim_noise_advance(n, rank, 0, work_ns);
	return 1 - (double)work_ns / (double)end;
}

} // namespace

TEST_CASE("partly hit comb")
{
	noise_guard g;
	int m = nt_sim_noise_add_model(g.n);
	const uint64_t q[] = { 1000000, 3000000 }; // 1..3 ms, mean 2 ms
	SECTION("its share is hit x mean length / period, per rank and in the long run")
	{
		REQUIRE(nt_sim_noise_add_periodic(g.n, m, 100, 0, 0.4, q, 2, 0) == 0);
		CHECK(nt_sim_noise_ratio(g.n, m) == Approx(0.4 * 0.002 / 0.01));
		for (uint64_t r = 0; r < 4; r++)
			CHECK(simulated_share(g.n, r, 100000000000ull) == Approx(0.08).margin(0.003));
	}
	SECTION("lengths past the period merge, they do not refuse")
	{
		const uint64_t longq[] = { 5000000, 25000000 }; // up to 2.5 periods
		REQUIRE(nt_sim_noise_add_periodic(g.n, m, 100, 0, 0.3, longq, 2, 0) == 0);
		double s = simulated_share(g.n, 3, 100000000000ull);
		CHECK(s > 0.3);
		CHECK(s < 0.9);
	}
	SECTION("deterministic; the same on every rank when synchronized, not otherwise")
	{
		REQUIRE(nt_sim_noise_add_periodic(g.n, m, 100, 5000000, 0.4, q, 2, 0) == 0);
		nt_sim_noise_set_sync(g.n, true, 7);
		uint64_t a = nt_sim_noise_advance(g.n, 0, 0, 50000000);
		CHECK(nt_sim_noise_advance(g.n, 12345, 0, 50000000) == a);
		nt_sim_noise_set_sync(g.n, false, 7);
		bool differ = false;
		for (uint64_t r = 1; r < 16; r++)
			differ |= nt_sim_noise_advance(g.n, r, 0, 50000000) != nt_sim_noise_advance(g.n, 0, 0, 50000000);
		CHECK(differ);
		CHECK(nt_sim_noise_advance(g.n, 3, 0, 50000000) == nt_sim_noise_advance(g.n, 3, 0, 50000000));
	}
	SECTION("impossible input is refused")
	{
		CHECK(nt_sim_noise_add_periodic(g.n, m, 100, 0, 1.5, q, 2, 0) == -EINVAL);
		CHECK(nt_sim_noise_add_periodic(g.n, m, 100, 0, 0.4, q, 0, 0) == -EINVAL);
		const uint64_t desc[] = { 3, 1 };
		CHECK(nt_sim_noise_add_periodic(g.n, m, 100, 0, 0.4, desc, 2, 0) == -EINVAL);
	}
}

TEST_CASE("renewal process fitted to a measured share")
{
	noise_guard g;
	int m = nt_sim_noise_add_model(g.n);
	const uint64_t len[] = { 2000, 10000, 4000000 };
	const uint64_t gap[] = { 100000, 1000000, 9000000 };
	SECTION("alone: the share is the target")
	{
		REQUIRE(nt_sim_noise_add_renewal(g.n, m, len, 3, 0, gap, 3, 0, 0.6) == 0);
		CHECK(nt_sim_noise_ratio(g.n, m) == Approx(0.6).margin(0.002));
		for (uint64_t r = 0; r < 3; r++)
			CHECK(simulated_share(g.n, r + 100, 200000000000ull) ==
			      Approx(0.6).margin(0.02));
	}
	SECTION("beside a comb that overlaps it: the union is the target")
	{
		const uint64_t q[] = { 3000000, 5000000 };
		REQUIRE(nt_sim_noise_add_periodic(g.n, m, 250, 0, 0.4, q, 2, 0) == 0);
		REQUIRE(nt_sim_noise_add_renewal(g.n, m, len, 3, 0, gap, 3, 0, 0.65) == 0);
		CHECK(nt_sim_noise_ratio(g.n, m) == Approx(0.65).margin(0.002));
		CHECK(simulated_share(g.n, 77, 200000000000ull) == Approx(0.65).margin(0.02));
	}
	SECTION("gaps of mean 0 without a target leave no time: refused")
	{
		const uint64_t zero[] = { 0, 0 };
		CHECK(nt_sim_noise_add_renewal(g.n, m, len, 3, 0, zero, 2, 0, 0) == -EINVAL);
		CHECK(nt_sim_noise_add_renewal(g.n, m, len, 3, 0, gap, 3, 0, 1) == -EINVAL);
	}
}

TEST_CASE("a run's per-rank state gives the answers of the stateless call")
{
	// A signature-like model: a partly hit comb of long teeth, a renewal process with a long
	// tail, rare long detours. Each rank's calls come with times that never decrease, as in a
	// run: after the work ends, the rank waits a while (a partner late), then works again.
	noise_guard g;
	int m = nt_sim_noise_add_model(g.n);
	const uint64_t teeth[] = { 1000, 4000000, 20000000 };
	const uint64_t len[] = { 1000, 1400, 3000, 42000000 };
	const uint64_t gap[] = { 800, 45000, 300000, 70000000 };
	const uint64_t rare[] = { 5000000 };
	REQUIRE(nt_sim_noise_add_periodic(g.n, m, 250, 3000, 0.39, teeth, 3, 0) == 0);
	REQUIRE(nt_sim_noise_add_renewal(g.n, m, len, 4, 0, gap, 4, 0, 0.6) == 0);
	REQUIRE(nt_sim_noise_add_rare(g.n, m, 3, rare, 1) == 0);
	REQUIRE(nt_sim_noise_stateful(g.n));
	for (bool sync : { false, true }) {
		nt_sim_noise_set_sync(g.n, sync, 7);
		uint64_t mismatches = 0, calls = 0;
		for (uint64_t rank = 0; rank < 16; rank++) {
			struct nt_sim_noise_state st = {};
			uint64_t t = 0, h = rank * 0x9e3779b97f4a7c15ull + 1;
			for (int i = 0; i < 400; i++) {
				h = h * 6364136223846793005ull + 1442695040888963407ull;
				uint64_t work = 100 + (h >> 33) % (i % 3 ? 2000 : 3000000);
				uint64_t wait = (h >> 20) % (i % 5 ? 50000 : 30000000);
				uint64_t a = nt_sim_noise_advance_state(g.n, &st, rank, t, work);
				uint64_t b = nt_sim_noise_advance(g.n, rank, t, work);
				mismatches += a != b;
				calls++;
				t = a + wait;
			}
		}
		CHECK(calls == 6400);
		CHECK(mismatches == 0);
	}
}

TEST_CASE("one renewal process per model")
{
	noise_guard g;
	int m = nt_sim_noise_add_model(g.n);
	const uint64_t len[] = { 2000, 10000 };
	const uint64_t gap[] = { 100000, 1000000 };
	REQUIRE(nt_sim_noise_add_renewal(g.n, m, len, 2, 0, gap, 2, 0, 0) == 0);
	CHECK(nt_sim_noise_add_renewal(g.n, m, len, 2, 0, gap, 2, 0, 0) == -EINVAL);
	int m2 = nt_sim_noise_add_model(g.n);
	CHECK(nt_sim_noise_add_renewal(g.n, m2, len, 2, 0, gap, 2, 0, 0) == 0);
}

TEST_CASE("a plain comb needs no per-rank state")
{
	noise_guard g;
	int m = nt_sim_noise_add_model(g.n);
	REQUIRE(nt_sim_noise_add_comb(g.n, m, 1000, 25000, 0) == 0);
	CHECK_FALSE(nt_sim_noise_stateful(g.n));
	REQUIRE(nt_sim_noise_add_comb(g.n, m, 100, 5000, 0) == 0);
	CHECK(nt_sim_noise_stateful(g.n));
}

TEST_CASE("a model's origin puts its synchronized detours on the common time axis")
{
	noise_guard g;
	// A comb of 100 ns teeth every 1000 ns at phase 0 of its own axis, which starts 300 ns into
	// the run's: the teeth lie at 300, 1300, ... Work of 100 ns from 250 meets the one at 300.
	int m = nt_sim_noise_add_model(g.n);
	REQUIRE(nt_sim_noise_add_comb(g.n, m, 1e6, 100, 0) == 0);
	nt_sim_noise_set_sync(g.n, true, 1);
	CHECK(nt_sim_noise_advance(g.n, 0, 250, 100) == 350); // axis at 0: tooth at 0, 1000
	nt_sim_noise_set_origin(g.n, m, 300);
	CHECK(nt_sim_noise_advance(g.n, 0, 250, 100) == 450);
	CHECK(nt_sim_noise_advance(g.n, 5, 250, 100) == 450); // every rank: synchronized
	nt_sim_noise_set_origin(g.n, m, 2300);                // whole periods fold away
	CHECK(nt_sim_noise_advance(g.n, 0, 250, 100) == 450);
	SECTION("the generic path (two sources) and a trace")
	{
		noise_guard h;
		int a = nt_sim_noise_add_model(h.n);
		nt_sim_noise_set_origin(h.n, a, 300); // before the sources: they take it on
		REQUIRE(nt_sim_noise_add_comb(h.n, a, 1e6, 100, 0) == 0);
		REQUIRE(nt_sim_noise_add_comb(h.n, a, 1e3, 10, 500000) == 0);
		nt_sim_noise_set_sync(h.n, true, 1);
		CHECK(nt_sim_noise_advance(h.n, 0, 250, 100) == 450);
		// A trace of one 100 ns detour at 200 in a 1000 ns run, its axis 300 ns late: the
		// detour is at 500 of the run's time (and 1500, ...).
		noise_guard tr;
		int b = nt_sim_noise_add_model(tr.n);
		const struct nt_detour d[] = { { 200, 100, 0 } };
		REQUIRE(nt_sim_noise_add_trace_loop(tr.n, b, d, 1, 1000) == 0);
		nt_sim_noise_set_sync(tr.n, true, 1);
		CHECK(nt_sim_noise_advance(tr.n, 0, 450, 100) == 550);
		nt_sim_noise_set_origin(tr.n, b, 300);
		CHECK(nt_sim_noise_advance(tr.n, 0, 450, 100) == 650);
		nt_sim_noise_set_sync(tr.n, false, 1); // unsynchronized: random offsets, as before
		nt_sim_noise_set_origin(tr.n, b, 0);
		uint64_t x = nt_sim_noise_advance(tr.n, 3, 450, 100);
		nt_sim_noise_set_origin(tr.n, b, 300);
		CHECK(nt_sim_noise_advance(tr.n, 3, 450, 100) == x);
	}
}

TEST_CASE("trace: where a CPU's time axis starts")
{
	const struct nt_detour d[] = { { 1000, 500, 0 } };
	char buf[256] = "";
	FILE *f = fmemopen(buf, sizeof buf, "w");
	REQUIRE(f);
	const struct nt_trace_axis out = { 100000, 12804 };
	REQUIRE(nt_trace_write_axis(f, d, 1, &out) == 0);
	fclose(f);
	CHECK(std::string(buf) == "# elapsed_ns 100000\n# start_offset_ns 12804\n1000\t500\n");
	f = fmemopen(buf, strlen(buf), "r");
	REQUIRE(f);
	struct nt_detour *got = nullptr;
	size_t n = 0;
	struct nt_trace_axis in = {};
	REQUIRE(nt_trace_read_axis(f, &got, &n, &in, nullptr, 0) == 0);
	fclose(f);
	CHECK(n == 1);
	CHECK(in.elapsed_ns == 100000);
	CHECK(in.start_offset_ns == 12804);
	free(got);
	// the earliest CPU (offset 0) writes no offset line, as before
	char buf2[256] = "";
	f = fmemopen(buf2, sizeof buf2, "w");
	REQUIRE(f);
	const struct nt_trace_axis first = { 100000, 0 };
	REQUIRE(nt_trace_write_axis(f, d, 1, &first) == 0);
	fclose(f);
	CHECK(std::string(buf2) == "# elapsed_ns 100000\n1000\t500\n");
}

TEST_CASE("trace: the run's length")
{
	const struct nt_detour d[] = { { 1000, 500, 0 }, { 5000, 500, 0 } };
	char buf[256] = "";
	FILE *f = fmemopen(buf, sizeof buf, "w");
	REQUIRE(f);
	REQUIRE(nt_trace_write_run(f, d, 2, 100000) == 0);
	fclose(f);
	CHECK(std::string(buf) == "# elapsed_ns 100000\n1000\t500\n5000\t500\n");
	f = fmemopen(buf, strlen(buf), "r");
	struct nt_detour *out = nullptr;
	size_t n = 0;
	uint64_t elapsed = 0;
	char err[128];
	REQUIRE(nt_trace_read_run(f, &out, &n, &elapsed, err, sizeof err) == 0);
	fclose(f);
	CHECK(n == 2);
	CHECK(elapsed == 100000);
	noise_guard g;
	int m = nt_sim_noise_add_model(g.n);
	REQUIRE(nt_sim_noise_add_trace_loop(g.n, m, out, n, elapsed) == 0);
	free(out);
	CHECK(nt_sim_noise_ratio(g.n, m) == Approx(1000.0 / 100000));
	nt_sim_noise_set_sync(g.n, true, 1);
	// second loop: the first detour again at 100000 + 1000, not at 5500 + 1000
	CHECK(nt_sim_noise_advance(g.n, 0, 6000, 1000) == 7000);
	CHECK(nt_sim_noise_advance(g.n, 0, 100900, 200) == 101600);
}

TEST_CASE("signature: the model's inputs")
{
	// a comb of 40 teeth a ms apart, three of four hit, and three other detours
	std::vector<struct nt_detour> d;
	for (int k = 0; k < 40; k++)
		if (k % 4 != 3)
			d.push_back({ (uint64_t)k * 1000000 + 100, (uint64_t)(2000 + k), 0 });
	d.push_back({ 3500000, 50000, 0 });
	d.push_back({ 17300000, 7000000, 0 });
	d.push_back({ 31700000, 30000, 0 });
	struct nt_signature sig;
	REQUIRE(nt_signature_analyze(d.data(), d.size(), 40000000, &sig) == 0);
	REQUIRE(sig.nperiodic == 1);
	CHECK(sig.periodic[0].count == 30);
	CHECK(sig.periodic[0].hit_fraction == Approx(30.0 / 40));
	CHECK(sig.periodic[0].total_ns == 60570); // sum of 2000 + k over the hit teeth
	CHECK(sig.periodic[0].durations.n == 30);
	CHECK(sig.periodic[0].durations.ns[0] == 2000);
	CHECK(sig.periodic[0].durations.ns[29] == 2038);
	CHECK(sig.other_count == 3);
	CHECK(sig.other_total_ns == 7080000);
	CHECK(sig.other_durations.n == 3);
	CHECK(sig.other_durations.ns[2] == 7000000);
	REQUIRE(sig.other_gaps.n == 2);
	CHECK(sig.other_gaps.ns[0] == 31700000 - 24300000); // ascending
	CHECK(sig.other_gaps.ns[1] == 17300000 - 3550000);
}
