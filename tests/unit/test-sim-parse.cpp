// The noise vocabulary (libnoisetool/sim-parse.c): every spelling, the deprecated one flagged,
// mixes refused naming the keys.
#include <catch2/catch.hpp>

#include <cerrno>
#include <string>

#include <noisetool/sim.h>

static std::string errs(const char *spec)
{
	nt_sim_noise_spec n;
	char err[512] = "";
	int rc = nt_sim_parse_noise_spec(spec, &n, err, sizeof err);
	REQUIRE(rc == -EINVAL);
	REQUIRE(std::string(err).find('\n') == std::string::npos);
	return err;
}

TEST_CASE("sim-parse: the noise vocabulary")
{
	nt_sim_noise_spec n;
	char err[512];
	SECTION("the injector's spelling: period the interval, detour the length, bare us")
	{
		REQUIRE(nt_sim_parse_noise_spec("period=1ms,detour=25us", &n, err, sizeof err) == 0);
		CHECK(n.period_ns == 1000000);
		CHECK(n.detour_ns == 25000);
		CHECK(n.freq_hz == 1000);
		CHECK(n.mode == NT_SIM_MODE_UNSET);
		CHECK_FALSE(n.deprecated);
		REQUIRE(nt_sim_parse_noise_spec("detour=25,period=1000,mode=sync", &n, err,
						sizeof err) == 0);
		CHECK(n.period_ns == 1000000);
		CHECK(n.detour_ns == 25000);
		CHECK(n.mode == NT_SIM_MODE_SYNC);
		REQUIRE(nt_sim_parse_noise_spec("period=100us,detour=2.5us,mode=unsync", &n, err,
						sizeof err) == 0);
		CHECK(n.period_ns == 100000); // below the injector's 1 ms floor: simulated anyway
		CHECK(n.mode == NT_SIM_MODE_UNSYNC);
	}
	SECTION("Engelmann's spelling: freq and length (or duration), the unit required")
	{
		REQUIRE(nt_sim_parse_noise_spec("freq=1kHz,length=25us", &n, err, sizeof err) == 0);
		CHECK(n.period_ns == 1000000);
		CHECK(n.detour_ns == 25000);
		REQUIRE(nt_sim_parse_noise_spec("duration=800ns,freq=10Hz,mode=sync", &n, err,
						sizeof err) == 0);
		CHECK(n.period_ns == 100000000);
		CHECK(n.detour_ns == 800);
		CHECK(n.mode == NT_SIM_MODE_SYNC);
		CHECK(errs("freq=1kHz,length=25").find("unit") != std::string::npos);
	}
	SECTION("the old spelling: period the length, bare ns, flagged deprecated")
	{
		REQUIRE(nt_sim_parse_noise_spec("freq=1kHz,period=800", &n, err, sizeof err) == 0);
		CHECK(n.detour_ns == 800);
		CHECK(n.period_ns == 1000000);
		CHECK(n.deprecated);
		double f;
		uint64_t d;
		REQUIRE(nt_sim_parse_noise("period=2.5us,freq=1kHz", &f, &d, err, sizeof err) == 0);
		CHECK(f == 1000);
		CHECK(d == 2500);
		REQUIRE(nt_sim_parse_noise("period=1ms,detour=25us", &f, &d, err, sizeof err) == 0);
		CHECK(d == 25000);
	}
	SECTION("mixed and ambiguous spellings refused, naming the keys")
	{
		std::string e = errs("freq=1kHz,period=25us,detour=3us");
		CHECK(e.find("period=") != std::string::npos);
		CHECK(e.find("detour=") != std::string::npos);
		e = errs("freq=1kHz,period=25us,length=3us");
		CHECK(e.find("length=") != std::string::npos);
		e = errs("period=1ms,length=2us");
		CHECK(e.find("ambiguous") != std::string::npos);
		CHECK(e.find("period=") != std::string::npos);
		e = errs("period=1ms,duration=2us");
		CHECK(e.find("duration=") != std::string::npos);
		e = errs("freq=1kHz,detour=2us");
		CHECK(e.find("freq=") != std::string::npos);
		CHECK(e.find("detour=") != std::string::npos);
		e = errs("detour=1us,length=2us");
		CHECK(e.find("length") != std::string::npos);
		CHECK(errs("period=1ms,period=2ms").find("twice") != std::string::npos);
		CHECK(errs("freq=1kHz,freq=2kHz").find("twice") != std::string::npos);
	}
	SECTION("incomplete, impossible and foreign specs refused with the number")
	{
		CHECK(errs("period=2ms").find("detour=") != std::string::npos);
		CHECK(errs("freq=10Hz").find("length=") != std::string::npos);
		CHECK(errs("detour=2us").find("period=") != std::string::npos);
		std::string e = errs("freq=1kHz,length=2ms");
		CHECK(e.find("2 ms") != std::string::npos);
		CHECK(e.find("1 ms") != std::string::npos);
		CHECK(errs("period=1ms,detour=1ms").find("not shorter") != std::string::npos);
		CHECK(errs("period=1ms,detour=25us,ranks=1").find("ranks=1") != std::string::npos);
		CHECK(errs("period=1ms,detour=25us,seed=3").find("--seed") != std::string::npos);
		CHECK(errs("trace=x.tsv").find("--signature") != std::string::npos);
		CHECK(errs("period=1ms,detour=25us,mode=both").find("sync or unsync") !=
		      std::string::npos);
		const char *bad[] = { "", "colour=red", "period=1ms,detour=25us,", "freq=0,length=1ns",
				      "freq=-5,length=1us", "period=0,detour=0", "10Hz",
				      "period=1xs,detour=1us", "freq=2GHz,length=1ns" };
		for (const char *b : bad) {
			INFO(b);
			if (*b)
				errs(b);
			else
				CHECK(nt_sim_parse_noise_spec(b, &n, err, sizeof err) == -EINVAL);
		}
	}
}
