// The report page's data (noisetool-page/1) over made-up logs: the report inside is --json's,
// each site's histogram is the sum of its ranks' bins whatever the module's directory, the
// lateness matrix adds up to the delay imposed and covers every rank in at most 256 rows, the
// latest instances are bounded and largest first, a partial log says why.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <noisetool/report.h>
#include <noisetool-private/report-page.h>

extern "C" {
#include "json-read.h" // private to the core, without its own extern "C"
}

#include "mem-log.h"

namespace {

// A log of nranks ranks on one host, each 10 ms long, whose clock counts ns (a site's bin b
// starts at 2^b ns), its records 1 us long at site 0.
struct page_log : mem_log {
	explicit page_log(uint32_t n) : mem_log(n)
	{
		for (nt_log_rank &k : ranks)
			k.wall_ns = 10000000;
		log.version = NT_LOG_VERSION;
		log.clock_hz = 1e9;
	}
	void record(uint32_t r, uint64_t seq, uint64_t start_ns)
	{
		mem_log::record(r, seq, start_ns, 0, 1000);
	}
};

std::string write(const nt_report &rep, bool page)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	CHECK((page ? nt_report_write_page_json(f, &rep, "mem.ntlog")
		    : nt_report_write_json(f, &rep)) == 0);
	std::fclose(f);
	std::string s(buf, len);
	std::free(buf);
	return s;
}

// The page's document, parsed (the test fails when it is not JSON).
struct page_doc {
	nt_jvalue v{};
	std::string text;
	explicit page_doc(const nt_report &rep) : text(write(rep, true))
	{
		char err[128];
		int rc = nt_json_parse(text.data(), text.size(), &v, err, sizeof err);
		INFO(err);
		REQUIRE(rc == 0);
	}
	~page_doc() { nt_jvalue_free(&v); }
	const nt_jvalue *get(const char *a, const char *b = nullptr) const
	{
		const nt_jvalue *x = nt_jvalue_get(&v, a);
		REQUIRE(x);
		if (b) {
			x = nt_jvalue_get(x, b);
			REQUIRE(x);
		}
		return x;
	}
};

struct built {
	nt_report rep{};
	explicit built(const nt_log *log) { REQUIRE(nt_report_build(log, nullptr, nullptr, &rep) == 0); }
	~built() { nt_report_free(&rep); }
};

} // namespace

TEST_CASE("report page data")
{
	SECTION("the report inside is the report JSON as --json writes it")
	{
		page_log m(2);
		m.site(0, "MPI_Barrier", "/a/app", 0x10).calls = 1;
		m.site(1, "MPI_Barrier", "/a/app", 0x10).calls = 1;
		built b(m.get());
		page_doc d(b.rep);
		std::string report = write(b.rep, false);
		REQUIRE(!report.empty());
		report.pop_back(); // its final newline: the page goes on after it
		CHECK(d.text.find("\"report\": " + report) != std::string::npos);
		CHECK(std::string(d.get("schema")->string) == "noisetool-page/1");
		CHECK(std::string(d.get("log")->string) == "mem.ntlog");
		CHECK(d.get("partial_reasons")->n == 0);
	}

	SECTION("a site's histogram is the sum of its ranks' bins, sites in the report's order")
	{
		page_log m(3);
		for (uint32_t r = 0; r < 3; r++) {
			// One module loaded from two directories is one site.
			nt_log_site &s = m.site(r, "MPI_Allreduce", r ? "/b/app" : "/a/app", 0x20);
			s.calls = 10 + r;
			s.total_ns = 1000;
			s.hist[3] = 10;
			s.hist[40] = r;
			nt_log_site &t = m.site(r, "MPI_Bcast", "/a/app", 0x30);
			t.calls = 1;
			t.total_ns = 5000; // more time: the report's first site
			t.hist[12] = 1;
		}
		built b(m.get());
		page_doc d(b.rep);
		const nt_jvalue *h = d.get("histograms");
		const nt_jvalue *edges = nt_jvalue_get(h, "bin_edges_ns");
		REQUIRE(edges->n == NT_LOG_HIST_BINS + 1);
		CHECK(edges->items[0].number == 1);
		CHECK(edges->items[10].number == 1024);
		const nt_jvalue *sites = nt_jvalue_get(h, "sites");
		REQUIRE(sites->n == 2);
		CHECK(nt_jvalue_get(&sites->items[0], "site")->number == 0);
		const nt_jvalue *bcast = nt_jvalue_get(&sites->items[0], "counts");
		const nt_jvalue *allreduce = nt_jvalue_get(&sites->items[1], "counts");
		REQUIRE(allreduce->n == NT_LOG_HIST_BINS);
		CHECK(bcast->items[12].number == 3);
		CHECK(allreduce->items[3].number == 30);
		CHECK(allreduce->items[40].number == 0 + 1 + 2);
		CHECK(allreduce->items[12].number == 0);
	}

	SECTION("the lateness matrix adds up to the delay imposed, every rank in 256 rows")
	{
		const uint32_t n = 300;
		page_log m(n);
		for (uint32_t r = 0; r < n; r++) {
			m.site(r, "MPI_Barrier", "/a/app", 0x10).calls = 2;
			m.record(r, 1, 1000000 + (r == 299 ? 3000000 : 0)); // rank 299 late 3 ms
			m.record(r, 2, 8000000 + (r == 7 ? 1000000 : 0));   // rank 7 late 1 ms
		}
		built b(m.get());
		REQUIRE(b.rep.attrib.nlate == 2);
		page_doc d(b.rep);
		const nt_jvalue *rows = d.get("lateness", "rows");
		REQUIRE(rows->n == 256);
		double sum = 0;
		double next_first = 0;
		for (size_t i = 0; i < rows->n; i++) {
			const nt_jvalue *row = &rows->items[i];
			CHECK(nt_jvalue_get(row, "first_rank")->number == next_first);
			next_first = nt_jvalue_get(row, "last_rank")->number + 1;
			const nt_jvalue *delay = nt_jvalue_get(row, "delay_ns");
			REQUIRE(delay->n == 100);
			for (size_t k = 0; k < delay->n; k++)
				sum += delay->items[k].number;
		}
		CHECK(next_first == n);
		CHECK(sum == (double)b.rep.attrib.total_delay_ns);
		// Rank 299 is in the last row, rank 7 in row 7 * 256 / 300 = 5; the job's 10 ms in
		// 100 bins: the instances start in bins 10 and 80.
		const nt_jvalue *last = nt_jvalue_get(&rows->items[255], "delay_ns");
		CHECK(last->items[10].number == (double)b.rep.attrib.late[0].delay_ns);
		CHECK(nt_jvalue_get(&rows->items[5], "delay_ns")->items[80].number ==
		      (double)b.rep.attrib.late[1].delay_ns);
	}

	SECTION("the latest instances: 2000 at most, largest first, with their site")
	{
		page_log m(2);
		for (uint32_t r = 0; r < 2; r++)
			m.site(r, "MPI_Allreduce", "/a/app", 0x10).calls = 2500;
		for (uint64_t k = 0; k < 2500; k++) {
			m.record(0, k + 1, 1000000 * (k + 1));
			m.record(1, k + 1, 1000000 * (k + 1) + 10000 + 10 * k);
		}
		built b(m.get());
		REQUIRE(b.rep.attrib.nlate == 2500);
		page_doc d(b.rep);
		CHECK(d.get("latest", "total")->number == 2500);
		const nt_jvalue *inst = d.get("latest", "instances");
		REQUIRE(inst->n == 2000);
		CHECK(nt_jvalue_get(&inst->items[0], "delay_ns")->number == 10000 + 10 * 2499);
		CHECK(nt_jvalue_get(&inst->items[0], "rank")->number == 1);
		CHECK(nt_jvalue_get(&inst->items[0], "site")->number == 0);
		CHECK(nt_jvalue_get(&inst->items[0], "causes")->n == NT_CAUSE_COUNT);
		CHECK(d.get("cause_keys")->n == NT_CAUSE_COUNT);
		for (size_t i = 1; i < inst->n; i++)
			REQUIRE(nt_jvalue_get(&inst->items[i - 1], "delay_ns")->number >=
				nt_jvalue_get(&inst->items[i], "delay_ns")->number);
	}

	SECTION("a partial log says why, in the text report's words")
	{
		page_log m(2);
		m.ranks[1].dropped_records = 7;
		built b(m.get());
		REQUIRE(b.rep.partial);
		page_doc d(b.rep);
		const nt_jvalue *why = d.get("partial_reasons");
		REQUIRE(why->n == 1);
		CHECK(std::string(why->items[0].string).find("7 records") != std::string::npos);
	}

	SECTION("bad arguments")
	{
		page_log m(1);
		built b(m.get());
		CHECK(nt_report_write_page_json(nullptr, &b.rep, "x") == -EINVAL);
		CHECK(nt_report_write_page_json(stdout, nullptr, "x") == -EINVAL);
	}
}
