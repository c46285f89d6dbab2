// Durations and sizes as people write them (libnoisetool/units.c): every suffix, a bare number in
// the caller's unit, anything else refused; durations and sizes in messages.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

extern "C" {
#include "units.h" // private to the core, without its own extern "C"
}

namespace {

// nt_parse_duration_ns over a whole string.
int parse(const char *s, double bare_ns, uint64_t *ns)
{
	return nt_parse_duration_ns(s, std::strlen(s), bare_ns, ns);
}

} // namespace

TEST_CASE("durations read", "[units]")
{
	uint64_t ns = 0;
	CHECK(parse("800ns", 1e3, &ns) == 0);
	CHECK(ns == 800);
	CHECK(parse("2.5us", 1, &ns) == 0);
	CHECK(ns == 2500);
	CHECK(parse("8ms", 1, &ns) == 0);
	CHECK(ns == 8000000);
	CHECK(parse("1s", 1, &ns) == 0);
	CHECK(ns == 1000000000);
	CHECK(parse("25", 1e3, &ns) == 0); // a bare number in the caller's unit
	CHECK(ns == 25000);
	CHECK(parse("3600s", 1, &ns) == 0); // an hour at most
	CHECK(ns == 3600000000000ull);
	for (const char *bad : { "", "-1us", " 1us", "1 us", "1min", "us", "3601s", "nan" })
		CHECK(parse(bad, 1, &ns) == -EINVAL);
	CHECK(nt_parse_duration_ns(nullptr, 3, 1, &ns) == -EINVAL);
}

TEST_CASE("durations in messages", "[units]")
{
	char buf[32];
	CHECK(std::string(nt_fmt_duration(800, buf)) == "800 ns");
	CHECK(std::string(nt_fmt_duration(2500, buf)) == "2.5 us");
	CHECK(std::string(nt_fmt_duration(8000000, buf)) == "8 ms");
	CHECK(std::string(nt_fmt_duration(1500000000, buf)) == "1.5 s");
}

TEST_CASE("sizes in messages", "[units]")
{
	char buf[32];
	CHECK(std::string(nt_fmt_bytes(100, buf)) == "100 bytes");
	CHECK(std::string(nt_fmt_bytes(3 * 1024, buf)) == "3 KiB");
	CHECK(std::string(nt_fmt_bytes(812ull << 20, buf)) == "812 MiB");
	CHECK(std::string(nt_fmt_bytes((7ull << 30) / 2, buf)) == "3.50 GiB");
}
