// Unit tests of ftq.c: lost work turned into detours on hand-made FTQ/FWQ results, and short
// real FTQ/FWQ runs on the calling thread.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <noisetool/ftq.h>

namespace {

struct ftq_fixture {
	std::vector<uint64_t> samples;
	struct nt_ftq_result res;

	ftq_fixture(enum nt_ftq_mode mode, std::vector<uint64_t> s, uint64_t best,
		    uint64_t quantum_ns)
		: samples(std::move(s))
	{
		std::memset(&res, 0, sizeof res);
		res.mode = mode;
		res.quantum_ns = quantum_ns;
		res.nsamples = samples.size();
		res.samples = samples.data();
		res.best = best;
	}
};

// RAII for a detour array from nt_ftq_detours.
struct detours {
	struct nt_detour *d = nullptr;
	size_t n = 0;
	~detours() { free(d); }
};

} // namespace

TEST_CASE("nt_ftq_detours on hand-made results", "[ftq]")
{
	detours out;

	SECTION("FTQ: a run of two low quanta is one detour with the summed loss")
	{
		// best 1000 ops per 100 us quantum: 1 op = 100 ns of work.
		ftq_fixture fx(NT_FTQ, { 1000, 950, 500, 800, 1000, 1000, 0, 1000 }, 1000, 100000);
		REQUIRE(nt_ftq_detours(&fx.res, 10000, &out.d, &out.n) == 0);
		REQUIRE(out.n == 2);
		// 950 lost 5 us: below the threshold, not a detour.
		CHECK(out.d[0].start_ns == 200000);
		CHECK(out.d[0].duration_ns == 50000 + 20000);
		CHECK(out.d[0].flags == 0);
		CHECK(out.d[1].start_ns == 600000);
		CHECK(out.d[1].duration_ns == 100000);
	}

	SECTION("samples better than best lose nothing (no unsigned wrap-around)")
	{
		ftq_fixture ftq(NT_FTQ, { 1000, 1200, 1000 }, 1000, 100000);
		REQUIRE(nt_ftq_detours(&ftq.res, 1, &out.d, &out.n) == 0);
		CHECK(out.n == 0);
		detours fwq_out;
		ftq_fixture fwq(NT_FWQ, { 50000, 40000, 50000 }, 50000, 50000);
		REQUIRE(nt_ftq_detours(&fwq.res, 1, &fwq_out.d, &fwq_out.n) == 0);
		CHECK(fwq_out.n == 0);
	}

	SECTION("FTQ: threshold 0 takes every quantum that lost anything")
	{
		ftq_fixture fx(NT_FTQ, { 1000, 950, 500, 1000, 999 }, 1000, 100000);
		REQUIRE(nt_ftq_detours(&fx.res, 0, &out.d, &out.n) == 0);
		REQUIRE(out.n == 2);
		CHECK(out.d[0].start_ns == 100000);
		CHECK(out.d[0].duration_ns == 5000 + 50000);
		CHECK(out.d[1].start_ns == 400000); // a run that ends with the samples
		CHECK(out.d[1].duration_ns == 100);
	}

	SECTION("FWQ: samples longer than the best merge the same way")
	{
		ftq_fixture fx(NT_FWQ, { 1000, 1000, 3000, 2500, 1000, 1000, 1200, 6000 }, 1000,
			       1000);
		REQUIRE(nt_ftq_detours(&fx.res, 1000, &out.d, &out.n) == 0);
		REQUIRE(out.n == 2);
		CHECK(out.d[0].start_ns == 2000);
		CHECK(out.d[0].duration_ns == 2000 + 1500);
		// 1200 lost 200 ns: below the threshold. The last sample is a run of its own.
		CHECK(out.d[1].start_ns == 2000 + 3000 + 2500 + 1000 + 1000 + 1200);
		CHECK(out.d[1].duration_ns == 5000);
	}

	SECTION("no loss, no detours")
	{
		ftq_fixture fx(NT_FTQ, { 1000, 1000, 1000 }, 1000, 100000);
		REQUIRE(nt_ftq_detours(&fx.res, 0, &out.d, &out.n) == 0);
		CHECK(out.n == 0);
		CHECK(out.d == nullptr);
	}

	SECTION("no samples, no detours")
	{
		ftq_fixture fx(NT_FTQ, {}, 0, 100000);
		fx.res.samples = nullptr;
		REQUIRE(nt_ftq_detours(&fx.res, 0, &out.d, &out.n) == 0);
		CHECK(out.n == 0);
		CHECK(out.d == nullptr);
	}

	SECTION("bad arguments give -EINVAL")
	{
		ftq_fixture fx(NT_FTQ, { 1000, 500 }, 1000, 100000);
		CHECK(nt_ftq_detours(nullptr, 0, &out.d, &out.n) == -EINVAL);
		CHECK(nt_ftq_detours(&fx.res, 0, nullptr, &out.n) == -EINVAL);
		CHECK(nt_ftq_detours(&fx.res, 0, &out.d, nullptr) == -EINVAL);
		fx.res.samples = nullptr;
		CHECK(nt_ftq_detours(&fx.res, 0, &out.d, &out.n) == -EINVAL);
	}
}

// Every check of a real run is structural (sample counts, the grid's length, sums and the best
// sample), true however loaded the CPU: a preemption only lowers samples (FTQ) or lengthens them
// (FWQ), and FWQ stops at its time budget or its sample array, whichever comes first.
TEST_CASE("nt_ftq_measure on this thread", "[ftq]")
{
	struct nt_ftq_config cfg;
	std::memset(&cfg, 0, sizeof cfg);
	cfg.mode = NT_FTQ;
	cfg.seconds = 0.2;
	cfg.quantum_ns = 100000;
	cfg.cpu = -1;
	struct nt_ftq_result res;
	std::memset(&res, 0, sizeof res);

	SECTION("FTQ: 0.2 s of 100 us quanta")
	{
		REQUIRE(nt_ftq_measure(&cfg, &res) == 0);
		CHECK(res.mode == NT_FTQ);
		CHECK(res.quantum_ns == 100000);
		CHECK(res.nsamples == 2000);
		CHECK(res.elapsed_ns == 200000000);
		CHECK(res.best > 0);
		CHECK(res.noise_ratio >= 0.0);
		CHECK(res.noise_ratio <= 1.0);
		CHECK(res.os.cpu_start >= 0);
		uint64_t max = 0;
		for (size_t i = 0; i < res.nsamples; i++)
			max = res.samples[i] > max ? res.samples[i] : max;
		CHECK(max == res.best);

		// Every lost op is in some detour at threshold 0: their sum is the lost time.
		detours out;
		REQUIRE(nt_ftq_detours(&res, 0, &out.d, &out.n) == 0);
		double lost = 0;
		for (size_t i = 0; i < out.n; i++)
			lost += (double)out.d[i].duration_ns;
		CHECK(std::fabs(lost - res.noise_ratio * (double)res.elapsed_ns) <=
		      (double)out.n + 1.0);
		nt_ftq_result_free(&res);
		CHECK(res.samples == nullptr);
		CHECK(res.nsamples == 0);
	}

	SECTION("FWQ: samples are at least the best one")
	{
		cfg.mode = NT_FWQ;
		cfg.seconds = 0.05;
		REQUIRE(nt_ftq_measure(&cfg, &res) == 0);
		CHECK(res.mode == NT_FWQ);
		CHECK(res.work_ops > 0);
		REQUIRE(res.nsamples > 0);
		CHECK(res.nsamples <= 500);
		uint64_t sum = 0;
		for (size_t i = 0; i < res.nsamples; i++) {
			CHECK(res.samples[i] >= res.best);
			sum += res.samples[i];
		}
		CHECK(sum == res.elapsed_ns);
		CHECK(res.noise_ratio >= 0.0);
		CHECK(res.noise_ratio <= 1.0);
		nt_ftq_result_free(&res);
	}

	SECTION("bad configurations give -EINVAL")
	{
		cfg.quantum_ns = 10;
		CHECK(nt_ftq_measure(&cfg, &res) == -EINVAL);
		cfg.quantum_ns = 100000;
		cfg.seconds = 0;
		CHECK(nt_ftq_measure(&cfg, &res) == -EINVAL);
		cfg.seconds = NAN;
		CHECK(nt_ftq_measure(&cfg, &res) == -EINVAL);
		cfg.seconds = 0.2;
		cfg.mode = static_cast<enum nt_ftq_mode>(5);
		CHECK(nt_ftq_measure(&cfg, &res) == -EINVAL);
		cfg.mode = NT_FTQ;
		CHECK(nt_ftq_measure(&cfg, nullptr) == -EINVAL);
		CHECK(nt_ftq_measure(nullptr, &res) == -EINVAL);
		// More quanta than NT_FTQ_MAX_SAMPLES.
		cfg.quantum_ns = 1000;
		cfg.seconds = 1000;
		CHECK(nt_ftq_measure(&cfg, &res) == -EINVAL);
	}
}
