// The report's text tables (libnoisetool/report-text.c) over a made-up log: a terminal never
// gets a control character from a log.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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

// Each line of the table under the line starting with title, up to the first empty line.
static std::vector<std::string> table(const std::string &t, const std::string &title)
{
	std::vector<std::string> rows;
	size_t at = t.find("\n" + title);
	REQUIRE(at != std::string::npos);
	at = t.find('\n', at + 1) + 1;
	while (at < t.size() && t[at] != '\n') {
		size_t end = t.find('\n', at);
		rows.push_back(t.substr(at, end - at));
		at = end + 1;
	}
	return rows;
}

TEST_CASE("report: long C++ names are elided in their middle, the tables keep their columns",
	  "[report]")
{
	mem_log m(2);
	for (uint32_t r = 0; r < 2; r++) {
		m.site(r, "MPI_Allreduce", "/bin/app", 0x20).total_ns = 100;
		m.site(r, "MPI_Allreduce", "/bin/app", 0x90).total_ns = 90;
	}
	for (uint64_t k = 1; k <= 4; k++) {
		m.record(0, k, k * 10000000, (uint32_t)(k % 2));
		m.record(1, k, k * 10000000 + 5000000, (uint32_t)(k % 2));
	}
	// Two sites of one long C++ function without line information, told apart by the offset
	// at the end of their names.
	auto sym = [](void *, const char *, uint64_t offset, char *out, size_t size) {
		std::snprintf(out, size,
			      "bagel::SpinFreeMethod<std::complex<double> >::compute_residual(std::"
			      "shared_ptr<bagel::MultiTensor_<std::complex<double> > >, std::"
			      "shared_ptr<bagel::MultiTensor_<std::complex<double> > > const&) const"
			      "+0x%llx",
			      (unsigned long long)offset);
		return 0;
	};
	nt_report rep;
	REQUIRE(nt_report_build(m.get(), sym, nullptr, &rep) == 0);
	CHECK(strlen(rep.sites[0].location) > 200); // the report itself (JSON, HTML) keeps it whole
	std::string t = text_of(rep);
	for (const char *title : { "Call sites by MPI time", "Culprits by call site",
				   "The 4 latest instances" }) {
		INFO(title);
		std::vector<std::string> rows = table(t, title);
		REQUIRE(rows.size() >= 3); // the head and both sites
		for (const std::string &row : rows) {
			INFO(row);
			CHECK(row.size() == rows[0].size()); // every column where the head has it
		}
		bool a = false, b = false;
		for (const std::string &row : rows) {
			a = a || row.find("+0x20 ") != std::string::npos;
			b = b || row.find("+0x90 ") != std::string::npos;
			if (row.find("+0x") != std::string::npos) {
				CHECK(row.find("bagel") != std::string::npos);
				CHECK(row.find("...") != std::string::npos);
			}
			// Where it fits, the name without its template arguments and parameters.
			if (row.find("+0x") != std::string::npos &&
			    std::string(title) == "Call sites by MPI time")
				CHECK(row.find("bagel::SpinFreeMethod<...>::compute_residual(...) const+0x") !=
				      std::string::npos);
		}
		CHECK(a);
		CHECK(b);
	}
	nt_report_free(&rep);
}

TEST_CASE("report: late instances without OS data are counted with the delay they hold",
	  "[report]")
{
	// Two ranks, three instances, rank 1 late in each (no record has a probe window, as at
	// level timing): 5 ms, 2 ms and 0.5 ms after rank 0.
	mem_log m(2);
	for (uint32_t r = 0; r < 2; r++)
		m.site(r, "MPI_Barrier", "/bin/app", 0x20).total_ns = 100;
	const uint64_t late_ns[] = { 5000000, 2000000, 500000 };
	for (uint64_t seq = 1; seq <= 3; seq++) {
		m.record(0, seq, seq * 100000000, 0);
		m.record(1, seq, seq * 100000000 + late_ns[seq - 1], 0);
	}
	nt_report rep;
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	CHECK(rep.attrib.instances_no_window == 3);
	CHECK(rep.attrib.delay_no_window_ns == 7500000);
	std::string t = text_of(rep);
	INFO(t);
	CHECK(t.find("without OS data: 3 of the 3 late instances, 7.500 ms of the delay") !=
	      std::string::npos);
	std::string j = json_of(rep);
	CHECK(j.find("\"instances_without_os_data\": 3") != std::string::npos);
	CHECK(j.find("\"delay_without_os_data_ns\": 7500000") != std::string::npos);
	nt_report_free(&rep);
}
