// The report's text tables (libnoisetool/report-text.c) over a made-up log: a terminal never
// gets a control character from a log.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include <noisetool/report.h>

#include "mem-log.h"

TEST_CASE("report: a log's strings never reach the terminal as control characters", "[report]")
{
	mem_log m(2);
	m.ranks[0].host = "evil\x1b]0;owned\x07";
	m.ranks[1].host = "n\xc3\xa9ud-\xff"; // UTF-8 é, then a byte that is not UTF-8
	for (uint32_t r = 0; r < 2; r++)
		m.site(r, "MPI_\x1b[2JBarrier", "/bin/\x9b" "31mapp", 0x20).total_ns = 100;
	m.record(0, 1, 0, 0);
	m.record(1, 1, 5000000, 0);
	// A symbolizer that answers with an escape sequence (addr2line reads debug information
	// that the program's author wrote).
	auto sym = [](void *, const char *, uint64_t, char *out, size_t size) {
		std::snprintf(out, size, "file.c\x1b[1m:12\r");
		return 0;
	};
	nt_report rep;
	REQUIRE(nt_report_build(m.get(), sym, nullptr, &rep) == 0);
	std::string t = text_of(rep);
	size_t controls = 0;
	for (char c : t)
		controls += (c != '\n' && (unsigned char)c < 0x20) || c == 0x7f;
	CHECK(controls == 0);
	CHECK(t.find("evil?]0;owned?") != std::string::npos);
	CHECK(t.find("n\xc3\xa9ud-?") != std::string::npos);
	CHECK(t.find("MPI_?[2JBarrier") != std::string::npos);
	CHECK(t.find("file.c?[1m:12?") != std::string::npos);
	CHECK(t.find('\x9b') == std::string::npos);
	nt_report_free(&rep);
}
