// Every concept the core defines in one list reaches every output from it (issue 33). Built
// against a second copy of the core compiled with NT_TEST_EXTRA_ENTRIES (noisetool/ntlog.h),
// where each list has one more entry -- a cause "test_dummy" in NT_CAUSES, a window field
// "test_dummy" in NT_LOG_WINDOW_FIELDS, and the log version for it -- a made-up job's log must
// carry the new field through encoding and decoding, and the report must show the new cause in
// its text tables, its JSON (keys and the list of causes), its CSV tables, its page's data and
// a comparison, and the new field in the timeline. Nothing else in the core names them.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <noisetool/attrib.h>
#include <noisetool/compare.h>
#include <noisetool/ntlog.h>
#include <noisetool/perfetto.h>
#include <noisetool/report-csv.h>
#include <noisetool/report.h>
#include <noisetool-private/report-page.h>

#include "mem-log.h"
#include "tempdir.h"

#ifndef NT_TEST_EXTRA_ENTRIES
#error "built with the extra entries only (tests/unit/meson.build)"
#endif

namespace {

// What a writer writes to a FILE, as a string.
template <typename F> std::string written(F write)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	CHECK(write(f) == 0);
	std::fclose(f);
	std::string s(buf, len);
	std::free(buf);
	return s;
}

// A 2-rank job of 20 allreduces; rank 1 is late by 2 ms at each, its windows preempted, and
// every window carries the new field (a value per instance).
struct job {
	mem_log m{ 2 };
	job()
	{
		for (uint32_t r = 0; r < 2; r++) {
			nt_log_site &s = m.site(r, "MPI_Allreduce", "/usr/bin/prog", 0x1234);
			s.calls = 20;
			s.total_ns = 20 * 3000000;
			s.min_ns = 1000;
			s.max_ns = 5000000;
			s.hist[20] = 20;
			m.ranks[r].wall_ns = 200000000;
			m.ranks[r].mpi_ns = s.total_ns;
			for (uint64_t k = 0; k < 20; k++) {
				uint64_t start = 10000000 * (k + 1) + (r == 1 ? 2000000 : 0);
				m.record(r, k, start, 0, r == 1 ? 1000 : 2001000);
				nt_log_record &x = m.records[r].back();
				x.flags = NT_LOG_REC_SLOW | NT_LOG_REC_WINDOW | NT_LOG_REC_INTERVAL;
				x.phase_ns = x.interval_ns = 8000000 + (r == 1 ? 2000000 : 0);
				x.win.wall_ns = x.interval_ns;
				x.win.cpu_ns = 8000000;
				x.win.run_delay_ns = r == 1 ? 2000000 : 0;
				x.win.test_dummy = 4200 + k;
				x.win.valid = 0x7;
			}
		}
	}
};

} // namespace

TEST_CASE("a window field added to the list reaches the log and the timeline")
{
	job j;
	std::vector<unsigned char> bytes(NT_LOG_HEADER_BYTES);
	nt_log_header(bytes.data(), 2, 0, 1, 0, 16, 2.6e9, 123456789);
	const nt_log *made = j.m.get();
	for (uint32_t r = 0; r < 2; r++) {
		unsigned char *buf;
		size_t len;
		REQUIRE(nt_log_rank_encode(&made->ranks[r], &buf, &len) == 0);
		bytes.insert(bytes.end(), buf, buf + len);
		std::free(buf);
	}
	nt_log log{};
	char err[256] = "";
	REQUIRE(nt_log_decode(bytes.data(), bytes.size(), &log, err, sizeof err) == 0);
	CHECK(log.version == NT_LOG_VERSION);
	CHECK(log.version == NT_LOG_VERSION_WRITTEN + 1);
	for (uint32_t r = 0; r < 2; r++)
		for (uint64_t k = 0; k < log.ranks[r].nrecords; k++)
			CHECK(log.ranks[r].records[k].win.test_dummy == 4200 + k);

	nt_report rep{};
	REQUIRE(nt_report_build(&log, nullptr, nullptr, &rep) == 0);
	std::string trace = written([&](FILE *f) { return nt_perfetto_write(f, &rep); });
	CHECK(trace.find("\"window_test_dummy\":4200") != std::string::npos);
	CHECK(trace.find("\"window_test_dummy\":4219") != std::string::npos);
	nt_report_free(&rep);
	nt_log_free(&log);
}

TEST_CASE("a cause added to the list reaches every report")
{
	job j;
	nt_report rep{};
	REQUIRE(nt_report_build(j.m.get(), nullptr, nullptr, &rep) == 0);
	REQUIRE(rep.attrib.nlate > 0);
	REQUIRE(NT_CAUSE_TEST_DUMMY == NT_CAUSE_COUNT - 1); /* the list's last entry */
	const struct nt_cause_info *dummy = nt_cause_info(NT_CAUSE_TEST_DUMMY);
	REQUIRE(dummy);
	CHECK(std::string(nt_cause_key(NT_CAUSE_TEST_DUMMY)) == "test_dummy_ns");

	SECTION("text: a column in the culprits' and the late instances' tables")
	{
		std::string text = text_of(rep);
		size_t culprits = text.find("Culprits by rank");
		REQUIRE(culprits != std::string::npos);
		std::string head = text.substr(text.find('\n', culprits) + 1);
		head = head.substr(0, head.find('\n'));
		CHECK(head.substr(head.size() - 6) == " dummy"); // the list's last column
		size_t latest = text.find("latest instances");
		REQUIRE(latest != std::string::npos);
		head = text.substr(text.find('\n', latest) + 1);
		head = head.substr(0, head.find('\n'));
		CHECK(head.substr(head.size() - 6) == " dummy");
	}
	SECTION("JSON: a key in every causes object, an entry in the list of causes")
	{
		std::string js = json_of(rep);
		// Every "causes" object ends with the new key; the list ends with the new cause.
		size_t objects = 0, keys = 0;
		for (size_t at = 0; (at = js.find("\"causes\": {", at)) != std::string::npos; at++)
			objects++;
		for (size_t at = 0; (at = js.find("\"test_dummy_ns\": 0", at)) != std::string::npos;
		     at++)
			keys++;
		CHECK(objects == rep.attrib.nranks + rep.attrib.nlate + rep.attrib.nnodes +
				 rep.attrib.nsites);
		CHECK(keys == objects);
		size_t list = js.find("\"causes\": [");
		REQUIRE(list != std::string::npos);
		std::string entries = js.substr(list);
		for (const char *want : { "\"key\": \"test_dummy\"", "\"json\": \"test_dummy_ns\"",
					  "\"column\": \"dummy\"", "\"words\": \"the test's dummy\"",
					  "\"colour\": \"#000000\"" }) {
			INFO(want);
			CHECK(entries.find(want) != std::string::npos);
		}
	}
	SECTION("CSV: a column of every table of causes")
	{
		tempdir dir;
		char why[256] = "";
		REQUIRE(nt_report_write_csv(&rep, dir.path().c_str(), why, sizeof why) == 0);
		for (const char *table : { "culprits.csv", "culprit-nodes.csv", "culprit-sites.csv",
					   "late.csv" }) {
			INFO(table);
			std::string csv = slurp(dir / table);
			std::string header = csv.substr(0, csv.find("\r\n")); // RFC 4180 lines
			CHECK(header.substr(header.size() - 14) == ",test_dummy_ns");
		}
	}
	SECTION("the page's data: the cause among the keys of its arrays and in the report's list")
	{
		std::string page =
			written([&](FILE *f) { return nt_report_write_page_json(f, &rep, "x"); });
		CHECK(page.find("\"test_dummy_ns\"") != std::string::npos);
		CHECK(page.find("\"key\": \"test_dummy\"") != std::string::npos);
	}
	SECTION("a comparison: its causes and its list")
	{
		nt_compare *c = nullptr;
		REQUIRE(nt_compare_build(&rep, &rep, &c) == 0);
		std::string js =
			written([&](FILE *f) { return nt_compare_write_json(f, c, "a", "b"); });
		CHECK(js.find("\"test_dummy_ns\": 0") != std::string::npos);
		CHECK(js.find("\"key\": \"test_dummy\"") != std::string::npos);
		nt_compare_free(c);
	}
	nt_report_free(&rep);
}
