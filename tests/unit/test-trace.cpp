// The TSV noise trace (libnoisetool/trace.c), both ways: a round trip exactly, the reader's
// limits, comments and blank lines, malformed lines refused with their number.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <noisetool/noise.h>

#include "memfile.h"

TEST_CASE("TSV trace", "[trace]")
{
	char err[128];

	SECTION("write then read round-trips exactly")
	{
		std::vector<struct nt_detour> d = {
			{ 0, 1, 0 }, { 1000, 2500, 0 }, { 123456789012ull, 5000000, 0 },
			{ 1ull << 56, 3600000000000ull, 0 }, // the reader's limits
		};
		memfile m;
		REQUIRE(nt_trace_write(m.f(), d.data(), d.size()) == 0);
		std::string text = m.text();
		CHECK(text.substr(0, 13) == "0\t1\n1000\t2500");

		strfile in(text);
		struct nt_detour *out = nullptr;
		size_t n = 99;
		REQUIRE(nt_trace_read(in.f(), &out, &n, err, sizeof err) == 0);
		REQUIRE(n == d.size());
		for (size_t i = 0; i < n; i++) {
			CHECK(out[i].start_ns == d[i].start_ns);
			CHECK(out[i].duration_ns == d[i].duration_ns);
			CHECK(out[i].flags == 0);
		}
		free(out);
	}

	SECTION("a start past 2^56 ns or a detour over an hour is refused, naming the line")
	{
		for (const char *bad : { "1\t2\n72057594037927937\t1\n", "1\t2\n5\t3600000000001\n",
					 "1\t2\n18446744073709551614\t18446744073709551615\n" }) {
			INFO(bad);
			strfile in(bad);
			struct nt_detour *out = nullptr;
			size_t n = 99;
			CHECK(nt_trace_read(in.f(), &out, &n, err, sizeof err) == -EINVAL);
			CHECK(std::string(err).find("line 2: ") == 0);
			CHECK(std::string(err).find("out of range") != std::string::npos);
		}
	}

	SECTION("an empty trace reads as none")
	{
		memfile m;
		REQUIRE(nt_trace_write(m.f(), nullptr, 0) == 0);
		strfile in(m.text() + "\n");
		struct nt_detour *out = nullptr;
		size_t n = 99;
		REQUIRE(nt_trace_read(in.f(), &out, &n, err, sizeof err) == 0);
		CHECK(n == 0);
		free(out);
	}

	SECTION("comments and blank lines are skipped")
	{
		strfile in("# noise trace\n\n10\t20\n   \n  # indented comment\n30 40\r\n\t50\t60\n");
		struct nt_detour *out = nullptr;
		size_t n = 0;
		REQUIRE(nt_trace_read(in.f(), &out, &n, err, sizeof err) == 0);
		REQUIRE(n == 3);
		CHECK(out[0].start_ns == 10);
		CHECK(out[0].duration_ns == 20);
		CHECK(out[1].start_ns == 30);
		CHECK(out[1].duration_ns == 40);
		CHECK(out[2].start_ns == 50);
		CHECK(out[2].duration_ns == 60);
		CHECK(std::string(err).empty());
		free(out);
	}

	SECTION("malformed lines are rejected with their line number")
	{
		for (const char *bad : { "12 x", "abc", "1\t2\t3" }) {
			std::string text = std::string("# header\n\n1\t2\n") + bad + "\n5\t6\n";
			strfile in(text);
			struct nt_detour sentinel = { 7, 7, 7 };
			struct nt_detour *out = &sentinel;
			size_t n = 99;
			INFO("line: " << bad);
			CHECK(nt_trace_read(in.f(), &out, &n, err, sizeof err) == -EINVAL);
			CHECK(out == nullptr);
			CHECK(n == 0);
			CHECK(std::string(err).find("line 4") != std::string::npos);
		}
	}

	SECTION("a number beyond 64 bits is rejected")
	{
		strfile in("1\t2\n18446744073709551616\t1\n");
		struct nt_detour *out = nullptr;
		size_t n = 99;
		CHECK(nt_trace_read(in.f(), &out, &n, err, sizeof err) == -EINVAL);
		CHECK(out == nullptr);
		CHECK(std::string(err).find("line 2") != std::string::npos);
	}

	SECTION("NULL arguments give -EINVAL")
	{
		struct nt_detour *out = nullptr;
		size_t n = 0;
		CHECK(nt_trace_read(nullptr, &out, &n, err, sizeof err) == -EINVAL);
		CHECK(nt_trace_write(nullptr, nullptr, 0) == -EINVAL);
		memfile m;
		CHECK(nt_trace_write(m.f(), nullptr, 1) == -EINVAL);
	}
}
