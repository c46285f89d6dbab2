// LogGP calibrations (libnoisetool/sim-calibration.c): the robust rule and the file's round
// trip.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool/sim.h>
#include <noisetool-private/sim-calibration.h>

static nt_sim_loggp lg(double L, double o, double g, double G)
{
	return nt_sim_loggp{ L, o, g, G };
}

TEST_CASE("sim-calibration: the robust rule")
{
	nt_loggp_calib c = {};
	char err[512];
	SECTION("a preempted sample's G of 2.93 ns/B against 0.123 is rejected")
	{
		nt_sim_loggp r[5] = { lg(22, 78, 71, 0.123), lg(20, 78, 67, 0.124),
				      lg(23, 79, 73, 2.93), lg(24, 77, 70, 0.122),
				      lg(22, 78, 72, 0.123) };
		REQUIRE(nt_loggp_combine(r, nullptr, 5, &c, err, sizeof err) == 0);
		CHECK(c.loggp.G_ns_per_byte == 0.123);
		CHECK(c.G.rejected == 1);
		CHECK(c.G.kept == 4);
		CHECK(c.G.max == 0.124);
		CHECK(c.G.min == 0.122);
		CHECK(c.loggp.L_ns == 22);
		CHECK(c.L.kept == 5);
		CHECK(c.loggp.g_ns == 71);
	}
	SECTION("preempted repetitions are rejected while three clean ones remain")
	{
		nt_sim_loggp r[4] = { lg(22, 78, 71, 0.123), lg(90, 300, 200, 2.93),
				      lg(22, 78, 71, 0.125), lg(22, 78, 71, 0.121) };
		bool pre[4] = { false, true, false, false };
		REQUIRE(nt_loggp_combine(r, pre, 4, &c, err, sizeof err) == 0);
		CHECK(c.preempted == 1);
		CHECK_FALSE(c.preempt_ignored);
		CHECK(c.loggp.G_ns_per_byte == 0.123);
		CHECK(c.G.rejected == 1);
		bool all[4] = { true, true, true, true };
		REQUIRE(nt_loggp_combine(r, all, 4, &c, err, sizeof err) == 0);
		CHECK(c.preempt_ignored);
		CHECK(c.loggp.G_ns_per_byte == Approx(0.123));
		CHECK(c.G.kept == 3);
	}
	SECTION("too few that agree: refused, naming the parameter and its values")
	{
		nt_sim_loggp r[3] = { lg(22, 78, 71, 0.123), lg(22, 78, 71, 2.93),
				      lg(22, 78, 71, 1.5) };
		REQUIRE(nt_loggp_combine(r, nullptr, 3, &c, err, sizeof err) == -EINVAL);
		std::string e = err;
		CHECK(e.find("G_ns_per_byte") != std::string::npos);
		CHECK(e.find("2.93") != std::string::npos);
		CHECK(nt_loggp_combine(r, nullptr, 0, &c, err, sizeof err) == -EINVAL);
	}
}

TEST_CASE("sim-calibration: write, read back, refuse a corrupt file")
{
	char dir[] = "/tmp/nt-loggp-XXXXXX";
	REQUIRE(mkdtemp(dir));
	std::string path = std::string(dir) + "/loggp.json";
	nt_loggp_calib c = {};
	char err[512];
	nt_sim_loggp r[3] = { lg(14.7, 55.2, 38.6, 0.0655), lg(14.7, 55.2, 41.2, 0.0670),
			      lg(10.2, 60.2, 35.7, 0.0641) };
	REQUIRE(nt_loggp_combine(r, nullptr, 3, &c, err, sizeof err) == 0);
	snprintf(c.date, sizeof c.date, "2026-01-02T03:04:05Z");
	snprintf(c.host, sizeof c.host, "node\"1");
	snprintf(c.mpi, sizeof c.mpi, "MPICH Version: 4.0.2");
	FILE *f = fopen(path.c_str(), "w");
	REQUIRE(f);
	REQUIRE(nt_loggp_write(f, &c) == 0);
	fclose(f);

	nt_loggp_calib back;
	REQUIRE(nt_loggp_read(path.c_str(), &back, err, sizeof err) == 0);
	CHECK(back.loggp.L_ns == Approx(c.loggp.L_ns).epsilon(1e-3));
	CHECK(back.loggp.o_ns == Approx(c.loggp.o_ns).epsilon(1e-3));
	CHECK(back.loggp.g_ns == Approx(c.loggp.g_ns).epsilon(1e-3));
	CHECK(back.loggp.G_ns_per_byte == Approx(c.loggp.G_ns_per_byte).epsilon(1e-3));
	CHECK(back.G.max == Approx(c.G.max));
	CHECK(std::string(back.date) == "2026-01-02T03:04:05Z");
	CHECK(std::string(back.host) == "node\"1");
	CHECK(back.repetitions == 3);

	SECTION("resolve: the file given, the default file, else the built-in values")
	{
		nt_loggp_origin o;
		char p[4096];
		REQUIRE(nt_loggp_resolve(path.c_str(), &back, &o, p, sizeof p, err, sizeof err) == 0);
		CHECK(o == NT_LOGGP_FILE);
		CHECK(std::string(p) == path);
		setenv("XDG_CONFIG_HOME", dir, 1);
		REQUIRE(nt_loggp_resolve(nullptr, &back, &o, p, sizeof p, err, sizeof err) == 0);
		CHECK(o == NT_LOGGP_BUILTIN);
		CHECK(back.loggp.G_ns_per_byte == 0.123);
		CHECK(std::string(p).empty());
		std::string d = std::string(dir) + "/noisetool";
		REQUIRE(mkdir(d.c_str(), 0755) == 0);
		REQUIRE(rename(path.c_str(), (d + "/loggp.json").c_str()) == 0);
		REQUIRE(nt_loggp_resolve(nullptr, &back, &o, p, sizeof p, err, sizeof err) == 0);
		CHECK(o == NT_LOGGP_FILE);
		CHECK(std::string(p) == d + "/loggp.json");
		rename((d + "/loggp.json").c_str(), path.c_str());
		rmdir(d.c_str());
		unsetenv("XDG_CONFIG_HOME");
	}
	SECTION("corrupt files are refused with the reason")
	{
		const char *bad[] = { "", "{", "[]", "{\"schema\":\"noisetool-noise/1\"}",
				      "{\"schema\":\"noisetool-loggp/1\",\"date\":\"x\"}",
				      "{\"schema\":\"noisetool-loggp/1\",\"loggp\":\"1,2,3\",\"date\":\"x\"}",
				      "{\"schema\":\"noisetool-loggp/1\",\"loggp\":\"1,2,3,-4\",\"date\":\"x\"}",
				      "{\"schema\":\"noisetool-loggp/1\",\"loggp\":\"1,2,3,4\"}" };
		std::string bp = std::string(dir) + "/bad.json";
		for (const char *b : bad) {
			INFO(b);
			FILE *g = fopen(bp.c_str(), "w");
			REQUIRE(g);
			fputs(b, g);
			fclose(g);
			err[0] = 0;
			CHECK(nt_loggp_read(bp.c_str(), &back, err, sizeof err) == -EINVAL);
			CHECK(err[0] != 0);
		}
		remove(bp.c_str());
		CHECK(nt_loggp_read(dir, &back, err, sizeof err) == -EISDIR);
		CHECK(nt_loggp_read("/nonexistent/loggp.json", &back, err, sizeof err) == -ENOENT);
	}
	remove(path.c_str());
	rmdir(dir);
}
