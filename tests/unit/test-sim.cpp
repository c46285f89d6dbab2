// The simulator: LogGP times by hand for small P, determinism, the noise processes against a
// brute-force reference, absorption, the published shapes (sync vs unsync, long rare vs short
// frequent detours, Engelmann's untouched bcast/reduce), and the option and file parsers.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool/sim.h>

static const nt_sim_loggp test_loggp = { 50, 100, 0, 0.5 }; // L, o, g, G

static nt_sim_config make_cfg(nt_sim_collective c, uint64_t bytes = 8)
{
	nt_sim_config cfg = {};
	cfg.collective = c;
	cfg.bytes = bytes;
	cfg.loggp = test_loggp;
	cfg.iterations = 1;
	return cfg;
}

static nt_sim_result run(const nt_sim_config &cfg, uint64_t ranks)
{
	nt_sim_result r;
	REQUIRE(nt_sim_run(&cfg, ranks, &r) == 0);
	return r;
}

// One periodic comb on every rank.
struct noise_guard {
	nt_sim_noise *n = nullptr;
	noise_guard() { REQUIRE(nt_sim_noise_new(&n) == 0); }
	~noise_guard() { nt_sim_noise_free(n); }
	noise_guard(const noise_guard &) = delete;
	noise_guard &operator=(const noise_guard &) = delete;
};

static void add_periodic(nt_sim_noise *n, double freq_hz, uint64_t dur_ns, bool sync, uint64_t seed)
{
	int m = nt_sim_noise_add_model(n);
	REQUIRE(m >= 0);
	uint64_t period = (uint64_t)std::llround(1e9 / freq_hz);
	REQUIRE(nt_sim_noise_add_comb(n, m, freq_hz, dur_ns, period - dur_ns) == 0);
	nt_sim_noise_set_sync(n, sync, seed);
}

TEST_CASE("noise-free times follow the LogGP formulas")
{
	const double o = 100, L = 50;
	const double x8 = L + 7 * 0.5; // wire time of 8 bytes
	SECTION("allreduce: 2, 4 ranks = rounds x (2o + L + 7G); 3 ranks fold the extra rank")
	{
		nt_sim_config cfg = make_cfg(NT_SIM_ALLREDUCE);
		nt_sim_result r = run(cfg, 2);
		CHECK(r.time_ns_noise_free == (uint64_t)(2 * o + x8 + 0.5));
		CHECK(r.time_ns_noisy == r.time_ns_noise_free);
		CHECK(r.magnification == 1.0);
		CHECK(r.events == 4);
		r = run(cfg, 4);
		CHECK(r.time_ns_noise_free == 2 * (uint64_t)(2 * o + x8 + 0.5));
		CHECK(r.events == 16);
		// fold (2o + x), one exchange (the folded rank starts late), unfold
		r = run(cfg, 3);
		uint64_t x = (uint64_t)(x8 + 0.5);
		CHECK(r.time_ns_noise_free == 6 * 100 + 2 * x);
		CHECK(r.events == 2 + 4 + 2);
	}
	SECTION("dissemination barrier with 8 ranks: 3 rounds of 2o + L (empty messages)")
	{
		nt_sim_result r = run(make_cfg(NT_SIM_BARRIER), 8);
		CHECK(r.time_ns_noise_free == 3 * (uint64_t)(2 * o + L));
		CHECK(r.events == 3 * 16);
		// 5 ranks: ceil(log2 5) = 3 rounds as well
		CHECK(run(make_cfg(NT_SIM_BARRIER), 5).time_ns_noise_free == 3 * 250);
	}
	SECTION("binomial bcast and reduce with 4 ranks: 4o + 2(L + (k-1)G)")
	{
		uint64_t x = (uint64_t)(x8 + 0.5);
		CHECK(run(make_cfg(NT_SIM_BCAST), 4).time_ns_noise_free == 400 + 2 * x);
		CHECK(run(make_cfg(NT_SIM_REDUCE), 4).time_ns_noise_free == 400 + 2 * x);
		CHECK(run(make_cfg(NT_SIM_BCAST), 4).events == 6);
	}
	SECTION("g spaces the root's consecutive sends")
	{
		nt_sim_config cfg = make_cfg(NT_SIM_BCAST, 1);
		cfg.loggp.g_ns = 300;
		// to rank 2 at 0, to rank 1 at g: rank 1 done at g + o + L + o
		CHECK(run(cfg, 4).time_ns_noise_free == 300 + 100 + 50 + 100);
	}
	SECTION("bulk-synchronous loop: iterations x (compute + collective), compute phases count")
	{
		nt_sim_config cfg = make_cfg(NT_SIM_ALLREDUCE);
		cfg.iterations = 10;
		cfg.compute_ns = 1000;
		nt_sim_result r = run(cfg, 4);
		CHECK(r.time_ns_noise_free == 10 * (1000 + 2 * (uint64_t)(2 * o + x8 + 0.5)));
		CHECK(r.events == 10 * (16 + 4));
	}
	SECTION("allgather and alltoall: ring P-1 rounds, bruck log2 P rounds with more blocks")
	{
		nt_sim_config cfg = make_cfg(NT_SIM_ALLGATHER, 1);
		cfg.algorithm = NT_SIM_RING;
		CHECK(run(cfg, 8).time_ns_noise_free == 7 * 250);
		cfg.algorithm = NT_SIM_BRUCK; // blocks 1, 2, 4: x = L + (k-1) G
		CHECK(run(cfg, 8).time_ns_noise_free == 3 * 250 + 1 + 2);
		cfg.collective = NT_SIM_ALLTOALL; // 4 blocks per round
		CHECK(run(cfg, 8).time_ns_noise_free == 3 * (250 + 2));
		CHECK(run(cfg, 8).events == 3 * 16);
	}
	SECTION("a noise model without detours changes nothing")
	{
		noise_guard g;
		REQUIRE(nt_sim_noise_add_model(g.n) == 0);
		nt_sim_config cfg = make_cfg(NT_SIM_ALLREDUCE);
		cfg.noise = g.n;
		nt_sim_result r = run(cfg, 1000);
		CHECK(r.time_ns_noisy == r.time_ns_noise_free);
	}
	SECTION("configuration errors")
	{
		char err[256];
		nt_sim_config cfg = make_cfg(NT_SIM_ALLGATHER);
		cfg.algorithm = NT_SIM_RING;
		CHECK(nt_sim_check(&cfg, NT_SIM_RING_MAX_RANKS, err, sizeof err) == 0);
		CHECK(nt_sim_check(&cfg, NT_SIM_RING_MAX_RANKS + 1, err, sizeof err) == -EINVAL);
		CHECK(std::string(err).find("bruck") != std::string::npos);
		cfg = make_cfg(NT_SIM_BARRIER);
		cfg.algorithm = NT_SIM_BINOMIAL;
		CHECK(nt_sim_check(&cfg, 8, err, sizeof err) == -EINVAL);
		CHECK(std::string(err).find("dissemination") != std::string::npos);
		nt_sim_result r;
		CHECK(nt_sim_run(&cfg, 8, &r) == -EINVAL);
	}
}

TEST_CASE("determinism")
{
	nt_sim_config cfg = make_cfg(NT_SIM_ALLREDUCE);
	cfg.iterations = 5;
	cfg.compute_ns = 50000;
	auto noisy = [&](uint64_t seed) {
		noise_guard g;
		add_periodic(g.n, 1000, 25000, false, seed);
		cfg.noise = g.n;
		return run(cfg, 4096);
	};
	nt_sim_result a = noisy(7), b = noisy(7), c = noisy(8);
	SECTION("the same seed gives identical results")
	{
		CHECK(a.time_ns_noisy == b.time_ns_noisy);
		CHECK(a.time_ns_noise_free == b.time_ns_noise_free);
		CHECK(a.events == b.events);
	}
	SECTION("another seed gives another noisy time (unsync), the same noise-free time")
	{
		CHECK(a.time_ns_noisy != c.time_ns_noisy);
		CHECK(a.time_ns_noise_free == c.time_ns_noise_free);
		CHECK(a.time_ns_noisy > a.time_ns_noise_free);
	}
}

// Reference: step through time 1 ns at a time.
static uint64_t brute_advance(const nt_sim_noise *n, uint64_t rank, uint64_t t, uint64_t w,
			      bool (*in_detour)(const nt_sim_noise *, uint64_t, uint64_t))
{
	while (w > 0) {
		if (!in_detour(n, rank, t))
			w--;
		t++;
	}
	return t;
}

// t is inside a detour when 1 ns of work started at t does not end at t + 1.
static bool probe_in_detour(const nt_sim_noise *n, uint64_t rank, uint64_t t)
{
	return nt_sim_noise_advance(n, rank, t, 1) != t + 1;
}

TEST_CASE("advance: detours delay busy work")
{
	SECTION("a comb, closed form: start inside a detour waits for its end; whole periods skip")
	{
		noise_guard g;
		int m = nt_sim_noise_add_model(g.n);
		REQUIRE(nt_sim_noise_add_comb(g.n, m, 1e9 / 1000, 100, 200) == 0); // P 1000 ns, D 100 at 200
		nt_sim_noise_set_sync(g.n, true, 1);
		CHECK(nt_sim_noise_advance(g.n, 0, 0, 50) == 50);
		CHECK(nt_sim_noise_advance(g.n, 0, 150, 50) == 200);  // ends at the tooth
		CHECK(nt_sim_noise_advance(g.n, 0, 150, 51) == 301);  // one ns after it
		CHECK(nt_sim_noise_advance(g.n, 0, 250, 10) == 310);  // starts inside
		CHECK(nt_sim_noise_advance(g.n, 0, 300, 900) == 1200); // exactly one free stretch
		CHECK(nt_sim_noise_advance(g.n, 0, 300, 9001) == 300 + 10 * 1000 + 1);
		CHECK(nt_sim_noise_advance(g.n, 5, 250, 10) == 310); // sync: every rank alike
	}
	SECTION("a comb and a second source (the generic path) agree with stepping 1 ns at a time")
	{
		noise_guard g;
		int m = nt_sim_noise_add_model(g.n);
		REQUIRE(nt_sim_noise_add_comb(g.n, m, 1e9 / 97, 13, 0) == 0);
		nt_detour tr[] = { { 40, 30, 0 }, { 300, 5, 0 }, { 302, 20, 0 }, { 500, 1, 0 } };
		REQUIRE(nt_sim_noise_add_trace(g.n, m, tr, 4) == 0);
		uint64_t d = 50;
		REQUIRE(nt_sim_noise_add_rare(g.n, m, 1e9 / 2000, &d, 1) == 0);
		nt_sim_noise_set_sync(g.n, false, 3);
		// the comb alone (closed form) in a second model, on odd ranks
		int m2 = nt_sim_noise_add_model(g.n);
		REQUIRE(nt_sim_noise_add_comb(g.n, m2, 1e9 / 89, 17, 0) == 0);
		nt_sim_noise_set_sync(g.n, false, 3);
		uint64_t s = 12345;
		for (int i = 0; i < 400; i++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t rank = (s >> 33) % 64, t = (s >> 20) % 5000, w = (s >> 8) % 700 + 1;
			INFO("rank " << rank << " t " << t << " w " << w);
			REQUIRE(nt_sim_noise_advance(g.n, rank, t, w) ==
				brute_advance(g.n, rank, t, w, probe_in_detour));
		}
	}
	SECTION("rank r follows model r mod n; unsync ranks differ, sync ranks do not")
	{
		noise_guard g;
		int a = nt_sim_noise_add_model(g.n);
		int b = nt_sim_noise_add_model(g.n);
		REQUIRE(nt_sim_noise_add_comb(g.n, b, 1e9 / 1000, 500, 0) == 0);
		(void)a;
		nt_sim_noise_set_sync(g.n, true, 1);
		CHECK(nt_sim_noise_advance(g.n, 0, 0, 10) == 10);  // quiet model
		CHECK(nt_sim_noise_advance(g.n, 1, 0, 10) == 510); // tooth at 0
		CHECK(nt_sim_noise_advance(g.n, 7, 0, 10) == 510);
		nt_sim_noise_set_sync(g.n, false, 1);
		int differ = 0;
		for (uint64_t r = 1; r < 40; r += 2)
			differ += nt_sim_noise_advance(g.n, r, 0, 600) != nt_sim_noise_advance(g.n, 1, 0, 600);
		CHECK(differ > 5);
	}
	SECTION("rare detours: a Poisson process at the given rate and share of time")
	{
		noise_guard g;
		int m = nt_sim_noise_add_model(g.n);
		uint64_t d[] = { 100000, 300000 }; // mean 200 us at 20 Hz: 0.4 %
		REQUIRE(nt_sim_noise_add_rare(g.n, m, 20, d, 2) == 0);
		CHECK(nt_sim_noise_ratio(g.n, m) == Approx(0.004));
		nt_sim_noise_set_sync(g.n, false, 9);
		double lost = 0;
		for (uint64_t r = 0; r < 200; r++) // 200 ranks x 10 s of work
			lost += (double)(nt_sim_noise_advance(g.n, r, 0, 10000000000ull) - 10000000000ull);
		double share = lost / (lost + 200 * 1e10);
		CHECK(share > 0.0035);
		CHECK(share < 0.0045);
	}
	SECTION("a trace is replayed in a loop of its last end, at offset 0 when synchronized")
	{
		noise_guard g;
		int m = nt_sim_noise_add_model(g.n);
		nt_detour tr[] = { { 100, 50, 0 }, { 900, 100, 0 } }; // loop 1000 ns
		REQUIRE(nt_sim_noise_add_trace(g.n, m, tr, 2) == 0);
		nt_sim_noise_set_sync(g.n, true, 1);
		CHECK(nt_sim_noise_advance(g.n, 3, 0, 100) == 100);
		CHECK(nt_sim_noise_advance(g.n, 3, 0, 101) == 151);
		CHECK(nt_sim_noise_advance(g.n, 3, 1000, 101) == 1151);
		CHECK(nt_sim_noise_advance(g.n, 3, 120, 1) == 151);
		CHECK(nt_sim_noise_ratio(g.n, m) == Approx(0.15));
		nt_detour full[] = { { 0, 10, 0 } }; // nothing left for work
		CHECK(nt_sim_noise_add_trace(g.n, m, full, 1) == -EINVAL);
	}
}

TEST_CASE("absorption: a rank that waits during a detour is not delayed")
{
	// 2-rank bcast, o 100, L 50: rank 1 waits for the message until 150.
	nt_sim_config cfg = make_cfg(NT_SIM_BCAST, 1);
	nt_detour tr[] = { { 20, 100, 0 }, { 1000000000, 1, 0 } }; // [20, 120) and far away
	auto with_detour_on = [&](int rank) {
		noise_guard g;
		int m0 = nt_sim_noise_add_model(g.n), m1 = nt_sim_noise_add_model(g.n);
		REQUIRE(nt_sim_noise_add_trace(g.n, rank == 0 ? m0 : m1, tr, 2) == 0);
		nt_sim_noise_set_sync(g.n, true, 1);
		cfg.noise = g.n;
		return run(cfg, 2);
	};
	SECTION("the waiting receiver absorbs it")
	{
		nt_sim_result r = with_detour_on(1);
		CHECK(r.time_ns_noise_free == 250);
		CHECK(r.time_ns_noisy == 250);
	}
	SECTION("the busy sender does not")
	{
		nt_sim_result r = with_detour_on(0);
		CHECK(r.time_ns_noisy == 350);
	}
}

TEST_CASE("physics: the published shapes")
{
	SECTION("synchronized noise magnifies less than unsynchronized (allreduce, 4096 ranks)")
	{
		nt_sim_config cfg = make_cfg(NT_SIM_ALLREDUCE);
		cfg.loggp = NT_SIM_LOGGP_DEFAULT;
		cfg.iterations = 100;
		cfg.compute_ns = 200000;
		double mag[2];
		for (int sync = 0; sync < 2; sync++) {
			noise_guard g;
			add_periodic(g.n, 1000, 25000, sync, 1);
			cfg.noise = g.n;
			mag[sync] = run(cfg, 4096).magnification;
		}
		WARN("allreduce 4096 ranks, 1 kHz x 25 us, 100 x (200 us + allreduce): unsync "
		     << mag[0] << ", sync " << mag[1]);
		CHECK(mag[1] < mag[0]);
		CHECK(mag[1] < 1.04);  // about the 2.5 % ratio
		CHECK(mag[0] > 1.08);  // some rank is in a detour in every iteration
	}
	SECTION("at 0.25 %, rare long detours slow a 262144-rank barrier loop far more than "
		"frequent short ones")
	{
		nt_sim_config cfg = make_cfg(NT_SIM_BARRIER);
		cfg.loggp = NT_SIM_LOGGP_DEFAULT;
		cfg.iterations = 10;
		cfg.compute_ns = 1000000;
		double slow[2];
		const double freq[2] = { 10, 1000 };
		const uint64_t dur[2] = { 250000, 2500 };
		for (int i = 0; i < 2; i++) {
			noise_guard g;
			add_periodic(g.n, freq[i], dur[i], false, 1);
			cfg.noise = g.n;
			slow[i] = run(cfg, 262144).magnification - 1;
		}
		WARN("barrier 262144 ranks, 10 x (1 ms + barrier): 10 Hz x 250 us slows by "
		     << slow[0] << ", 1 kHz x 2.5 us by " << slow[1]);
		CHECK(slow[0] >= 3 * slow[1]);
		CHECK(slow[0] > 0.1);
	}
	SECTION("synchronized noise leaves small bcast and reduce untouched; unsync does not")
	{
		// Engelmann & Naughton (2013), 2^21 ranks, 100 Hz x 50 us (0.5 %), 1 B..1 GB:
		// synchronized noise has zero impact below 1 GB and costs about the noise ratio at
		// 1 GB; random noise costs up to 14 % (bcast) and 28 % (reduce) at 1 MB.
		for (nt_sim_collective coll : { NT_SIM_BCAST, NT_SIM_REDUCE }) {
			double one[2], loop[2];
			for (int sync = 0; sync < 2; sync++) {
				noise_guard g;
				add_periodic(g.n, 100, 50000, sync, 1);
				nt_sim_config cfg = make_cfg(coll, 8);
				cfg.loggp = NT_SIM_LOGGP_DEFAULT;
				cfg.noise = g.n;
				one[sync] = run(cfg, 1 << 21).magnification;
				cfg.iterations = 200;
				cfg.compute_ns = 100000;
				loop[sync] = run(cfg, 65536).magnification;
			}
			WARN(nt_sim_collective_name(coll) << " 8 B, 100 Hz x 50 us: one call at 2^21 "
			     "ranks: sync " << one[1] << ", unsync " << one[0] << "; 200 x (100 us + "
			     "call) at 65536 ranks: sync " << loop[1] << ", unsync " << loop[0]);
			CHECK(one[1] <= 1.05);
			CHECK(one[0] > 1.5);
			CHECK(loop[1] <= 1.05);
			CHECK(loop[0] > loop[1]);
		}
	}
}

TEST_CASE("option parsers")
{
	char err[256];
	uint64_t r[NT_SIM_MAX_RANK_COUNTS];
	SECTION("ranks: lists, ranges of powers of two, 2^k")
	{
		CHECK(nt_sim_parse_ranks("1024,4096", r, 64, err, sizeof err) == 2);
		CHECK(r[1] == 4096);
		REQUIRE(nt_sim_parse_ranks("2^10-2^21", r, 64, err, sizeof err) == 12);
		CHECK(r[0] == 1024);
		CHECK(r[11] == 2097152);
		CHECK(nt_sim_parse_ranks("1024-2097152", r, 64, err, sizeof err) == 12);
		CHECK(nt_sim_parse_ranks("1000-5000", r, 64, err, sizeof err) == 3); // 1024..4096
		CHECK(nt_sim_parse_ranks("4096,7,2^12,2^24", r, 64, err, sizeof err) == 3);
		CHECK(r[0] == 7);
		CHECK(r[2] == 16777216);
	}
	SECTION("ranks: errors name the item")
	{
		const char *bad[] = { "", "0", "abc", "1024,", "2^31", "5-3", "3-3", "-4", "2^x",
				      "3^4", "1e3", "10,,20" };
		for (const char *b : bad) {
			INFO(b);
			CHECK(nt_sim_parse_ranks(b, r, 64, err, sizeof err) == -EINVAL);
			CHECK(err[0] != 0);
		}
		nt_sim_parse_ranks("5-3", r, 64, err, sizeof err);
		CHECK(std::string(err).find("5-3") != std::string::npos);
		CHECK(nt_sim_parse_ranks("1-2^30", r, 4, err, sizeof err) == -EINVAL);
	}
	SECTION("noise: units like the injector's, ns by default")
	{
		double f;
		uint64_t p;
		REQUIRE(nt_sim_parse_noise("freq=10Hz,period=250us", &f, &p, err, sizeof err) == 0);
		CHECK(f == 10);
		CHECK(p == 250000);
		REQUIRE(nt_sim_parse_noise("period=2.5us,freq=1kHz", &f, &p, err, sizeof err) == 0);
		CHECK(f == 1000);
		CHECK(p == 2500);
		REQUIRE(nt_sim_parse_noise("freq=1000,period=800", &f, &p, err, sizeof err) == 0);
		CHECK(p == 800);
		REQUIRE(nt_sim_parse_noise("freq=200Hz,period=1ms", &f, &p, err, sizeof err) == 0);
		CHECK(p == 1000000);
	}
	SECTION("noise: errors")
	{
		double f;
		uint64_t p;
		const char *bad[] = { "freq=10Hz", "period=1us", "freq=1kHz,period=2ms",
				      "freq=abc,period=1us", "freq=10Hz,period=1xs", "colour=red",
				      "freq=10Hz,period=1us,", "freq=-5,period=1us", "freq=0,period=1",
				      "freq=10Hz,period=0", "10Hz" };
		for (const char *b : bad) {
			INFO(b);
			CHECK(nt_sim_parse_noise(b, &f, &p, err, sizeof err) == -EINVAL);
			CHECK(err[0] != 0);
		}
		nt_sim_parse_noise("freq=1kHz,period=2ms", &f, &p, err, sizeof err);
		CHECK(std::string(err).find("shorter") != std::string::npos);
	}
	SECTION("loggp and names")
	{
		nt_sim_loggp lg;
		REQUIRE(nt_sim_parse_loggp("22,78,71,0.123", &lg, err, sizeof err) == 0);
		CHECK(lg.G_ns_per_byte == 0.123);
		CHECK(nt_sim_parse_loggp("1,2,3", &lg, err, sizeof err) == -EINVAL);
		CHECK(nt_sim_parse_loggp("1,2,3,-4", &lg, err, sizeof err) == -EINVAL);
		CHECK(nt_sim_parse_loggp("1,2,3,4,5", &lg, err, sizeof err) == -EINVAL);
		nt_sim_collective c;
		CHECK(nt_sim_collective_parse("alltoall", &c) == 0);
		CHECK(c == NT_SIM_ALLTOALL);
		CHECK(nt_sim_collective_parse("scatter", &c) == -EINVAL);
		nt_sim_algorithm a;
		CHECK(nt_sim_algorithm_parse("recursive-doubling", &a) == 0);
		CHECK(std::string(nt_sim_algorithm_name(a)) == "recursive-doubling");
	}
}

// A temporary file with the given content, removed at scope exit.
struct temp_file {
	std::string path;
	explicit temp_file(const std::string &content)
	{
		char tmpl[] = "/tmp/test-sim-XXXXXX";
		int fd = mkstemp(tmpl);
		REQUIRE(fd >= 0);
		path = tmpl;
		REQUIRE(write(fd, content.data(), content.size()) == (ssize_t)content.size());
		close(fd);
	}
	~temp_file() { unlink(path.c_str()); }
};

static const char *sig_json = R"({
  "schema": "noisetool-noise/1", "version": "0.1.0", "method": "detour",
  "cpus": [
    { "cpu": 0, "elapsed_ns": 5000000000,
      "periodic": [ { "freq_hz": 1000.0, "typical_ns": 10000, "count": 5000,
                      "jitter_ns": 12.5, "phase_ns": 500000 } ],
      "rare_long": { "threshold_ns": 100000, "count": 5,
                     "longest": [ { "start_ns": 1, "duration_ns": 200000, "preempted": true } ] } },
    { "cpu": 1, "elapsed_ns": 5000000000, "periodic": [],
      "rare_long": { "threshold_ns": 0, "count": 0, "longest": [] } }
  ]
})";

TEST_CASE("signature files")
{
	char err[256];
	noise_guard g;
	SECTION("a detour JSON: one model per CPU, combs keep their phase when synchronized")
	{
		temp_file f(sig_json);
		REQUIRE(nt_sim_noise_load(g.n, f.path.c_str(), err, sizeof err) == 2);
		// sources overlap in the model: the share is their union
		CHECK(nt_sim_noise_ratio(g.n, 0) == Approx(1 - (1 - 0.01) * (1 - 1.0 * 200000 / 1e9)));
		CHECK(nt_sim_noise_ratio(g.n, 1) == 0);
		nt_sim_noise_set_sync(g.n, true, 1);
		// rank 0: the comb's tooth at 500 us (a rare detour may also hit: check the tooth)
		CHECK(nt_sim_noise_advance(g.n, 0, 500000, 1) >= 510001);
		CHECK(nt_sim_noise_advance(g.n, 1, 500000, 1) == 500001); // the quiet CPU
	}
	SECTION("a TSV trace: one model")
	{
		temp_file f("# comment\n100\t50\n900\t100\n");
		REQUIRE(nt_sim_noise_load(g.n, f.path.c_str(), err, sizeof err) == 1);
		nt_sim_noise_set_sync(g.n, true, 1);
		CHECK(nt_sim_noise_advance(g.n, 0, 0, 101) == 151);
	}
	SECTION("bad files: one line naming the problem")
	{
		struct {
			const char *content, *says;
		} bad[] = {
			{ "{ \"schema\": \"noisetool-noise/1\", \"cpus\": [ }", "line 1" },
			{ "{ \"schema\": \"other/1\", \"cpus\": [] }", "schema" },
			{ "{ \"schema\": \"noisetool-noise/1\", \"cpus\": [] }", "cpus" },
			{ "{ \"schema\": \"noisetool-noise/1\", \"cpus\": [ { \"elapsed_ns\": 1e9, "
			  "\"periodic\": [ { \"freq_hz\": 1000, \"typical_ns\": 2e6, \"phase_ns\": 0 } ], "
			  "\"rare_long\": { \"count\": 0, \"threshold_ns\": 0, \"longest\": [] } } ] }",
			  "periodic[0]" },
			{ "{ \"schema\": \"noisetool-noise/1\", \"cpus\": [ { \"periodic\": [] } ] }",
			  "elapsed_ns" },
			{ "{ \"schema\": \"noisetool-noise/1\" } trailing", "after" },
			{ "100\t50\nabc\n", "line 2" },
			{ "# only a comment\n", "no detours" },
			{ "", "empty" },
		};
		for (const auto &b : bad) {
			temp_file f(b.content);
			INFO(b.content);
			err[0] = 0;
			CHECK(nt_sim_noise_load(g.n, f.path.c_str(), err, sizeof err) == -EINVAL);
			CHECK(std::string(err).find(b.says) != std::string::npos);
			CHECK(std::string(err).find('\n') == std::string::npos);
		}
		CHECK(nt_sim_noise_load(g.n, "/nonexistent/sig.json", err, sizeof err) == -ENOENT);
	}
	SECTION("numbers no measurement gives: refused, naming the line or the member")
	{
		struct {
			const char *content, *says;
		} bad[] = {
			// A detour of 6 years made a loop so long that advance() wrapped past 2^64 ns
			// and ended work before it started (found by fuzzing).
			{ "1064737\t200215682916046877\n", "line 1: duration_ns is out of range" },
			{ "100\t50\n72057594037927937\t1\n", "line 2: start_ns is out of range" },
			{ "{ \"schema\": \"noisetool-noise/1\", \"cpus\": [ { \"elapsed_ns\": 1e9, "
			  "\"periodic\": [], \"rare_long\": { \"count\": 16.0000001, \"threshold_ns\": 1, "
			  "\"longest\": [] } } ] }",
			  "\"count\" is not a whole number" },
		};
		for (const auto &b : bad) {
			temp_file f(b.content);
			INFO(b.content);
			err[0] = 0;
			CHECK(nt_sim_noise_load(g.n, f.path.c_str(), err, sizeof err) == -EINVAL);
			CHECK(std::string(err).find(b.says) != std::string::npos);
		}
		// The limits themselves are read.
		temp_file edge("72057594037927936\t3600000000000\n");
		CHECK(nt_sim_noise_load(g.n, edge.path.c_str(), err, sizeof err) == 1);
	}
	SECTION("read through a pipe to its end: --signature <(noisetool detour --json -)")
	{
		int fds[2];
		REQUIRE(pipe(fds) == 0);
		std::string doc = std::string("\n  ") + sig_json; // whitespace before the '{'
		REQUIRE(doc.size() < 60000);                       // fits the pipe: no writer thread
		REQUIRE(write(fds[1], doc.data(), doc.size()) == (ssize_t)doc.size());
		close(fds[1]);
		std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
		CHECK(nt_sim_noise_load(g.n, path.c_str(), err, sizeof err) == 2);
		close(fds[0]);
	}
	SECTION("never blocks: a FIFO no one writes is empty, a device is refused unread")
	{
		char dir[] = "/tmp/test-sim-XXXXXX";
		REQUIRE(mkdtemp(dir));
		std::string fifo = std::string(dir) + "/fifo";
		REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
		CHECK(nt_sim_noise_load(g.n, fifo.c_str(), err, sizeof err) == -EINVAL);
		CHECK(std::string(err) == "empty file");
		unlink(fifo.c_str());
		CHECK(nt_sim_noise_load(g.n, "/dev/zero", err, sizeof err) == -EINVAL);
		CHECK(std::string(err) == "not a regular file or pipe");
		CHECK(nt_sim_noise_load(g.n, dir, err, sizeof err) == -EISDIR);
		rmdir(dir);
		CHECK(nt_sim_noise_models(g.n) == 0);
	}
}

// Noise that leaves almost no time for work pushes an end past any time there is: advance()
// answers UINT64_MAX ("never") instead of a time that wrapped round 2^64 ns to before the start.
TEST_CASE("advance: an end past 2^62 ns is never, not an earlier time")
{
	noise_guard g;
	// An hour of detour, 1 ns free, looped: 10 ms of work takes 10^7 loops of an hour.
	nt_detour d[2] = { { 0, 3600000000000ull, 0 }, { 3600000000001ull, 1, 0 } };
	int model = nt_sim_noise_add_model(g.n);
	REQUIRE(nt_sim_noise_add_trace(g.n, model, d, 2) == 0);
	for (bool sync : { true, false }) {
		nt_sim_noise_set_sync(g.n, sync, 3);
		CHECK(nt_sim_noise_advance(g.n, 0, 1000, 10000000) == UINT64_MAX);
		uint64_t t = nt_sim_noise_advance(g.n, 1, 1000, 1000);
		CHECK(t > 1000 + 1000);
		CHECK(t < UINT64_MAX);
	}
	// A comb, and no noise at all: a start near the limit.
	noise_guard c;
	model = nt_sim_noise_add_model(c.n);
	REQUIRE(nt_sim_noise_add_comb(c.n, model, 1000, 100000, 0) == 0);
	CHECK(nt_sim_noise_advance(c.n, 0, (1ull << 62) - 10, 100) == UINT64_MAX);
	CHECK(nt_sim_noise_advance(c.n, 0, 0, UINT64_MAX - 5) == UINT64_MAX);
	CHECK(nt_sim_noise_advance(nullptr, 0, UINT64_MAX - 5, 10) == UINT64_MAX);
	// A trace past the limit is refused.
	nt_detour far[1] = { { (1ull << 62) + 1, 10, 0 } };
	CHECK(nt_sim_noise_add_trace(c.n, model, far, 1) == -EINVAL);
}
