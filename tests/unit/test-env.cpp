// NOISETOOL_* parsing: defaults, accepted values, and one message per bad value that names the
// variable and the accepted values while the setting keeps its default.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "env.h"

namespace {

std::map<std::string, std::string> fake_env;

const char *fake_getenv(const char *name)
{
	auto it = fake_env.find(name);
	return it == fake_env.end() ? nullptr : it->second.c_str();
}

} // namespace

TEST_CASE("NOISETOOL_* environment", "[env]")
{
	fake_env.clear();
	struct nt_env env;
	char errors[512];

	SECTION("defaults")
	{
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK_FALSE(env.disable);
		CHECK(env.level == NT_PROBE_OS);
		CHECK(env.mem_bytes == 16u << 20);
		CHECK(std::string(env.out_dir) == ".");
		CHECK(errors[0] == '\0');
	}

	SECTION("accepted values")
	{
		fake_env = { { "NOISETOOL_DISABLE", "1" }, { "NOISETOOL_LEVEL", "timing" },
			     { "NOISETOOL_MEM", "64M" }, { "NOISETOOL_OUT", "/tmp/x" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK(env.disable);
		CHECK(env.level == NT_PROBE_TIMING);
		CHECK(env.mem_bytes == 64u << 20);
		CHECK(std::string(env.out_dir) == "/tmp/x");
		fake_env = { { "NOISETOOL_LEVEL", "full" }, { "NOISETOOL_MEM", "2097152" },
			     { "NOISETOOL_DISABLE", "0" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK(env.level == NT_PROBE_FULL);
		CHECK(env.mem_bytes == 2u << 20);
		CHECK_FALSE(env.disable);
	}

	SECTION("NOISETOOL_LOG: shared by default, per-rank, and mpiio as shared's old name")
	{
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK_FALSE(env.log_per_rank);
		fake_env = { { "NOISETOOL_LOG", "per-rank" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK(env.log_per_rank);
		for (const char *shared : { "shared", "mpiio" }) {
			fake_env = { { "NOISETOOL_LOG", shared } };
			CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
			CHECK_FALSE(env.log_per_rank);
		}
		fake_env = { { "NOISETOOL_LOG", "posix" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 1);
		CHECK(std::string(errors).find("accepted values are shared, per-rank, mpiio; using shared") !=
		      std::string::npos);
	}

	SECTION("NOISETOOL_LIVE: on by default")
	{
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK(env.live);
		fake_env = { { "NOISETOOL_LIVE", "0" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK_FALSE(env.live);
		fake_env = { { "NOISETOOL_LIVE", "yes" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 1);
		CHECK(env.live);
	}

	SECTION("NOISETOOL_JOB: a file-name-safe id, else rank 0's host and pid")
	{
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK(env.job == nullptr);
		fake_env = { { "NOISETOOL_JOB", "run-42.a_b" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK(std::string(env.job) == "run-42.a_b");
		for (const char *bad : { "../x", "a/b", ".hidden", "a b",
					 "0123456789012345678901234567890123456789012345678901234567890123456789" }) {
			fake_env = { { "NOISETOOL_JOB", bad } };
			INFO(bad);
			CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 1);
			CHECK(env.job == nullptr);
			CHECK(std::string(errors).find("NOISETOOL_JOB='") != std::string::npos);
		}
	}

	SECTION("bad values keep their defaults, one line each naming variable and choices")
	{
		fake_env = { { "NOISETOOL_DISABLE", "maybe" }, { "NOISETOOL_LEVEL", "verbose" },
			     { "NOISETOOL_MEM", "12Q" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 3);
		CHECK(std::string(errors).find("accepted values are 0, 1; using 0") != std::string::npos);
		CHECK_FALSE(env.disable);
		CHECK(env.level == NT_PROBE_OS);
		CHECK(env.mem_bytes == 16u << 20);
		std::string e(errors);
		CHECK(e.find("NOISETOOL_DISABLE='maybe'") != std::string::npos);
		CHECK(e.find("NOISETOOL_LEVEL='verbose': accepted values are timing, os, full; using os") !=
		      std::string::npos);
		CHECK(e.find("NOISETOOL_MEM='12Q'") != std::string::npos);
		CHECK(std::count(e.begin(), e.end(), '\n') == 3);
	}

	SECTION("NOISETOOL_INJECT: a valid spec turns injection on, a bad one names the problem")
	{
		fake_env["NOISETOOL_INJECT"] = "period=5ms,detour=200us,ranks=1";
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK(env.inject);
		CHECK(env.inject_spec.period_ns == 5000000);
		CHECK(nt_inject_targets(&env.inject_spec, 1));
		CHECK_FALSE(nt_inject_targets(&env.inject_spec, 0));
		fake_env["NOISETOOL_INJECT"] = "period=5ms";
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 1);
		CHECK_FALSE(env.inject);
		std::string e = errors;
		CHECK(e.find("NOISETOOL_INJECT") != std::string::npos);
		CHECK(e.find("detour=") != std::string::npos);
		CHECK(e.find("injection is off") != std::string::npos);
	}

	SECTION("memory outside 1M..4G is refused")
	{
		fake_env = { { "NOISETOOL_MEM", "1023K" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 1);
		CHECK(std::string(errors).find("1M to 4G") != std::string::npos);
		fake_env = { { "NOISETOOL_MEM", "1M" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK(env.mem_bytes == 1u << 20);
		fake_env = { { "NOISETOOL_MEM", "32K" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 1);
		fake_env = { { "NOISETOOL_MEM", "8G" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 1);
		fake_env = { { "NOISETOOL_MEM", "-5M" } };
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 1);
		CHECK(env.mem_bytes == 16u << 20);
	}

	SECTION("NOISETOOL_POLL_SAMPLE: 64 by default, 1 to 1024 accepted, anything else refused")
	{
		CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
		CHECK(env.poll_sample == 64);
		for (unsigned n : { 1u, 7u, 1024u }) {
			std::string v = std::to_string(n);
			fake_env = { { "NOISETOOL_POLL_SAMPLE", v.c_str() } };
			CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 0);
			CHECK(env.poll_sample == n);
		}
		for (const char *v : { "0", "1025", "-3", "16x", "x", " 4", "99999999999999999999" }) {
			INFO(v);
			fake_env = { { "NOISETOOL_POLL_SAMPLE", v } };
			CHECK(nt_env_parse(&env, fake_getenv, errors, sizeof errors) == 1);
			CHECK(env.poll_sample == 64);
			CHECK(std::string(errors).find("NOISETOOL_POLL_SAMPLE='" + std::string(v) +
						       "': accepted values are 1 (time every test "
						       "call) to 1024; using 64\n") != std::string::npos);
		}
	}

	SECTION("a tiny error buffer is never overrun")
	{
		fake_env = { { "NOISETOOL_LEVEL", "verbose" } };
		char small[8];
		std::memset(small, 'x', sizeof small);
		CHECK(nt_env_parse(&env, fake_getenv, small, sizeof small) == 1);
		CHECK(std::strlen(small) < sizeof small);
	}
}
