// The report's JSON (libnoisetool/report-json.c) over made-up logs: several reports make one
// JSON array, each naming its log.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <noisetool/report.h>

extern "C" {
#include "json-read.h" // private to the core, without its own extern "C"
}

#include "mem-log.h"

TEST_CASE("report: several reports are one JSON array, each naming its log", "[report]")
{
	mem_log a(1), b(2);
	a.site(0, "MPI_Bcast", "/bin/app", 1).total_ns = 10;
	b.site(1, "MPI_Reduce", "/bin/app", 2).total_ns = 20;
	nt_report ra, rb;
	REQUIRE(nt_report_build(a.get(), nullptr, nullptr, &ra) == 0);
	REQUIRE(nt_report_build(b.get(), nullptr, nullptr, &rb) == 0);
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	CHECK(nt_report_write_json_item(f, &ra, "logs/a \"1\".ntlog", true) == 0);
	CHECK(nt_report_write_json_item(f, &rb, "logs/b.ntlog", false) == 0);
	CHECK(nt_report_write_json_array_end(f) == 0);
	std::fclose(f);
	nt_jvalue doc;
	char err[128];
	REQUIRE(nt_json_parse(buf, len, &doc, err, sizeof err) == 0);
	REQUIRE(doc.type == NT_JARRAY);
	REQUIRE(doc.n == 2);
	const nt_jvalue *log0 = nt_jvalue_get(&doc.items[0], "log");
	REQUIRE(log0);
	CHECK(std::string(log0->string) == "logs/a \"1\".ntlog");
	CHECK(nt_jvalue_get(&doc.items[1], "ranks")->number == 2);
	CHECK(std::string(nt_jvalue_get(&doc.items[1], "schema")->string) == "noisetool-report/1");
	// Indented as one document: the array's items one level in.
	CHECK(std::string(buf, 10) == "[\n  {\n    ");
	CHECK(std::string(buf + len - 7) == "\n  }\n]\n");
	nt_jvalue_free(&doc);
	std::free(buf);
	nt_report_free(&ra);
	nt_report_free(&rb);
}
