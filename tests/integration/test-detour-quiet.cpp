// A CPU with no detour above the threshold gives zeros everywhere, not a crash. Nothing in
// 0.2 s can exceed a 10 s threshold, and the loop iterates millions of times in it even on a
// CPU it gets a tenth of: every check holds under any load.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>

#include <noisetool/detour.h>
#include <noisetool/noise.h>
#include <noisetool/signature.h>

TEST_CASE("no detour above the threshold gives zeros", "[detour][quiet]")
{
	nt_detour_config cfg{};
	cfg.seconds = 0.2;
	cfg.threshold_ns = 10ull * 1000 * 1000 * 1000; // 10 s: nothing qualifies in 0.2 s
	cfg.cpu = -1;
	nt_detour_result res{};
	REQUIRE(nt_detour_measure(&cfg, &res) == 0);
	CHECK(res.count == 0);
	CHECK(res.dropped == 0);
	CHECK(res.iterations > 1000);
	CHECK(res.t_min_ns > 0);

	nt_cpu_noise cn{};
	cn.cpu = -1;
	cn.elapsed_ns = res.elapsed_ns;
	cn.detours = res.detours;
	cn.ndetours = res.count;
	REQUIRE(nt_cpu_noise_analyze(&cn) == 0);
	CHECK(cn.stats.count == 0);
	CHECK(cn.stats.noise_ratio == 0);
	CHECK(cn.stats.max_ns == 0);
	CHECK(cn.stats.median_ns == 0);
	CHECK(cn.stats.p99_ns == 0);
	CHECK(cn.sig.nperiodic == 0);
	CHECK(cn.sig.rare_count == 0);

	nt_node_noise rep{};
	rep.method = "detour";
	rep.ncpus = 1;
	rep.cpus = &cn;
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	CHECK(nt_node_noise_write_json(f, &rep) == 0);
	CHECK(nt_node_noise_write_text(f, &rep) == 0);
	fclose(f);
	CHECK(std::strstr(buf, "\"detour_count\": 0") != nullptr);
	CHECK(std::strstr(buf, "\"periodic\": []") != nullptr);
	free(buf);
	nt_detour_result_free(&res);
}
