// A log built in memory for the report's unit tests (test-report-*.cpp), and its text and JSON
// reports.
// Include after catch.hpp.
#ifndef NT_TESTS_UNIT_MEM_LOG_H
#define NT_TESTS_UNIT_MEM_LOG_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <noisetool/report.h>

// A log built in memory: ranks with the given sites (all at their zero values otherwise).
struct mem_log {
	nt_log log{};
	std::vector<nt_log_rank> ranks;
	std::vector<std::vector<nt_log_site>> sites;
	std::vector<std::vector<nt_log_record>> records;

	explicit mem_log(uint32_t n) : ranks(n), sites(n), records(n)
	{
		for (uint32_t r = 0; r < n; r++) {
			ranks[r] = nt_log_rank{};
			ranks[r].rank = r;
			ranks[r].host = "node";
		}
	}
	nt_log_site &site(uint32_t r, const char *function, const char *module, uint64_t offset)
	{
		nt_log_site s{};
		s.function = function;
		s.module = module;
		s.offset = offset;
		sites[r].push_back(s);
		return sites[r].back();
	}
	// An instance on rank r at the given start, at its site index, lasting duration_ns.
	void record(uint32_t r, uint64_t seq, uint64_t start_ns, uint32_t site,
		    uint64_t duration_ns = 0)
	{
		nt_log_record x{};
		x.seq = seq;
		x.start_ns = start_ns;
		x.site = site;
		x.duration_ns = duration_ns;
		records[r].push_back(x);
	}
	const nt_log *get()
	{
		for (size_t r = 0; r < ranks.size(); r++) {
			ranks[r].nsites = (uint32_t)sites[r].size();
			ranks[r].sites = sites[r].data();
			ranks[r].nrecords = records[r].size();
			ranks[r].records = records[r].data();
		}
		log.nranks = (uint32_t)ranks.size();
		log.ranks = ranks.data();
		return &log;
	}
};

// The text report of rep, then its late instances.
inline std::string text_of(const nt_report &rep, size_t late = 10)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	CHECK(nt_report_write_text(f, &rep, "mem.ntlog", 0) == 0);
	CHECK(nt_report_write_late(f, &rep, late) == 0);
	std::fclose(f);
	std::string s(buf, len);
	std::free(buf);
	return s;
}

// JSON on one line: without the newlines and the indentation after them.
inline std::string one_line(const std::string &js)
{
	std::string out;
	for (size_t i = 0; i < js.size(); i++) {
		if (js[i] != '\n') {
			out += js[i];
			continue;
		}
		while (i + 1 < js.size() && js[i + 1] == ' ')
			i++;
	}
	return out;
}

// The JSON report of rep.
inline std::string json_of(const nt_report &rep)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	CHECK(nt_report_write_json(f, &rep) == 0);
	std::fclose(f);
	std::string s(buf, len);
	std::free(buf);
	return s;
}

#endif // NT_TESTS_UNIT_MEM_LOG_H
