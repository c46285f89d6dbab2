// Unit tests of stats.c: nt_detour_stats_compute on small hand-checked detour lists.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include <noisetool/signature.h>

namespace {

std::vector<struct nt_detour> make(const std::vector<uint64_t> &dur,
				   const std::vector<uint32_t> &flags = {})
{
	std::vector<struct nt_detour> d(dur.size());
	for (size_t i = 0; i < dur.size(); i++) {
		d[i].start_ns = 1000 * (i + 1);
		d[i].duration_ns = dur[i];
		d[i].flags = i < flags.size() ? flags[i] : 0;
	}
	return d;
}

uint64_t hist_sum(const struct nt_detour_stats &st)
{
	uint64_t s = 0;
	for (int b = 0; b < NT_HIST_BINS; b++)
		s += st.hist[b];
	return s;
}

} // namespace

TEST_CASE("nt_detour_stats_compute", "[stats]")
{
	struct nt_detour_stats st;
	std::memset(&st, 0xa5, sizeof st); // garbage: every field must be written

	SECTION("odd count: totals, median, p99, preempted, noise ratio")
	{
		auto d = make({ 1500, 100, 70000, 3000, 1 },
			      { 0, NT_DETOUR_PREEMPTED, 0, NT_DETOUR_PREEMPTED | 2u, 0 });
		REQUIRE(nt_detour_stats_compute(d.data(), d.size(), 1000000, &st) == 0);
		CHECK(st.count == 5);
		CHECK(st.total_ns == 74601);
		CHECK(st.max_ns == 70000);
		CHECK(st.mean_ns == Approx(74601.0 / 5));
		CHECK(st.median_ns == 1500.0);
		CHECK(st.p99_ns == 70000);
		CHECK(st.preempted == 2);
		CHECK(st.noise_ratio == Approx(0.074601));
		// The input is left as it was (the sort works on a copy).
		CHECK(d[0].duration_ns == 1500);
		CHECK(d[4].duration_ns == 1);
	}

	SECTION("even count: median is the mean of the two middle values")
	{
		auto d = make({ 10, 40, 20, 30 });
		REQUIRE(nt_detour_stats_compute(d.data(), d.size(), 0, &st) == 0);
		CHECK(st.count == 4);
		CHECK(st.median_ns == 25.0);
		CHECK(st.mean_ns == 25.0);
		CHECK(st.p99_ns == 40);
		CHECK(st.preempted == 0);
		CHECK(st.noise_ratio == 0.0); // elapsed 0: no ratio
	}

	SECTION("p99 is the nearest rank, not the maximum")
	{
		std::vector<uint64_t> dur;
		for (uint64_t v = 200; v >= 1; v--) // descending: the sort matters
			dur.push_back(v);
		auto d = make(dur);
		REQUIRE(nt_detour_stats_compute(d.data(), d.size(), 10000000, &st) == 0);
		CHECK(st.count == 200);
		CHECK(st.max_ns == 200);
		CHECK(st.p99_ns == 198); // rank ceil(0.99 * 200) = 198
		CHECK(st.median_ns == 100.5);
		CHECK(st.total_ns == 20100);
	}

	SECTION("noise ratio is clamped to 1")
	{
		auto d = make({ 600, 700 });
		REQUIRE(nt_detour_stats_compute(d.data(), d.size(), 1000, &st) == 0);
		CHECK(st.noise_ratio == 1.0);
	}

	SECTION("log2 histogram bins")
	{
		auto d = make({ 0, 1, 2, 3, 4, 100, 1500, 3000, 70000, 1ull << 50 });
		REQUIRE(nt_detour_stats_compute(d.data(), d.size(), 0, &st) == 0);
		CHECK(st.hist[0] == 2);  // 0, 1
		CHECK(st.hist[1] == 2);  // 2, 3
		CHECK(st.hist[2] == 1);  // 4
		CHECK(st.hist[6] == 1);  // 100 in [64, 128)
		CHECK(st.hist[10] == 1); // 1500 in [1024, 2048)
		CHECK(st.hist[11] == 1); // 3000 in [2048, 4096)
		CHECK(st.hist[16] == 1); // 70000 in [65536, 131072)
		CHECK(st.hist[NT_HIST_BINS - 1] == 1); // 2^50 clamped to the last bin
		CHECK(hist_sum(st) == d.size());
	}

	SECTION("n = 0 gives all zeros")
	{
		struct nt_detour one = { 1, 2, 0 };
		REQUIRE(nt_detour_stats_compute(&one, 0, 1000, &st) == 0);
		struct nt_detour_stats zero;
		std::memset(&zero, 0, sizeof zero);
		CHECK(std::memcmp(&st, &zero, sizeof st) == 0);

		std::memset(&st, 0xa5, sizeof st);
		REQUIRE(nt_detour_stats_compute(nullptr, 0, 1000, &st) == 0);
		CHECK(std::memcmp(&st, &zero, sizeof st) == 0);
	}

	SECTION("NULL arguments give -EINVAL")
	{
		struct nt_detour one = { 1, 2, 0 };
		CHECK(nt_detour_stats_compute(&one, 1, 1000, nullptr) == -EINVAL);
		CHECK(nt_detour_stats_compute(nullptr, 3, 1000, &st) == -EINVAL);
	}
}
