// The report's merge over made-up logs (libnoisetool/report-merge.c), with numbers and strings
// no run writes: sums saturate instead of wrapping, a site's spread is computed per rank once,
// every late instance finds its call site's name, a Python call site is its file and line and
// its MPI calls are grouped by Python call.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <noisetool/report.h>

extern "C" {
#include "json-read.h" // private to the core, without its own extern "C"
}

#include "mem-log.h"

TEST_CASE("report: sums saturate and the spread is per rank", "[report]")
{
	mem_log m(3);
	for (uint32_t r = 0; r < 2; r++) {
		nt_log_site &s = m.site(r, "MPI_Allreduce", "/bin/app", 0x10);
		s.calls = UINT64_MAX - 1;
		s.bytes = UINT64_MAX;
		s.total_ns = UINT64_MAX;
		s.max_ns = UINT64_MAX;
	}
	// Rank 2 loaded the module from two paths: one site identity twice, its times add up.
	m.site(2, "MPI_Allreduce", "/bin/app", 0x10).total_ns = 1000;
	m.site(2, "MPI_Allreduce", "/other/app", 0x10).total_ns = 3000;
	m.site(2, "MPI_Barrier", "/bin/app", 0x20).total_ns = 500;
	nt_report rep;
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	REQUIRE(rep.nsites == 2);
	const nt_report_site &a = rep.sites[0];
	CHECK(std::string(a.function) == "MPI_Allreduce");
	CHECK(a.calls == UINT64_MAX);
	CHECK(a.bytes == UINT64_MAX);
	CHECK(a.time_ns_total == UINT64_MAX);
	CHECK(a.time_ns_max == UINT64_MAX);
	CHECK(a.time_ns_max_rank == UINT64_MAX);
	CHECK(a.ranks == 3);
	CHECK((a.max_rank == 0 || a.max_rank == 1));
	const nt_report_site &b = rep.sites[1];
	CHECK(b.ranks == 1);
	CHECK(b.max_rank == 2);
	CHECK(b.time_ns_max_rank == 500);
	CHECK(b.cov == Approx(std::sqrt(2.0)).epsilon(1e-9)); // one rank of three
	std::string t = text_of(rep);
	CHECK(t.find("18446744073709551615") != std::string::npos); // the calls, saturated
	nt_report_free(&rep);

	SECTION("the same, rank 2 alone: its two paths are one site")
	{
		mem_log one(1);
		one.site(0, "MPI_Allreduce", "/bin/app", 0x10).total_ns = 1000;
		one.site(0, "MPI_Allreduce", "/other/app", 0x10).total_ns = 3000;
		REQUIRE(nt_report_build(one.get(), nullptr, nullptr, &rep) == 0);
		REQUIRE(rep.nsites == 1);
		CHECK(rep.sites[0].time_ns_max_rank == 4000);
		CHECK(rep.sites[0].cov == 0);
		nt_report_free(&rep);
	}
}

TEST_CASE("report: a log without ranks or sites divides by nothing", "[report]")
{
	nt_log empty{};
	nt_report rep;
	REQUIRE(nt_report_build(&empty, nullptr, nullptr, &rep) == 0);
	CHECK(rep.nsites == 0);
	CHECK(text_of(rep).find("0 ranks") != std::string::npos);
	nt_report_free(&rep);
	mem_log m(2); // ranks, no sites
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	CHECK(rep.nsites == 0);
	nt_report_free(&rep);
	empty.nranks = 3; // ranks claimed, none there
	CHECK(nt_report_build(&empty, nullptr, nullptr, &rep) == -EINVAL);
}

TEST_CASE("report: every late instance is named after its merged call site", "[report]")
{
	// 300 sites on each of 2 ranks; instance k is late at site k % 300 on rank 1, by k us.
	mem_log m(2);
	std::vector<std::string> fn(300);
	for (uint32_t i = 0; i < 300; i++) {
		fn[i] = "MPI_F" + std::to_string(i);
		for (uint32_t r = 0; r < 2; r++)
			m.site(r, fn[i].c_str(), "/bin/app", 0x1000 + i).total_ns = 1000 + i;
	}
	for (uint64_t k = 1; k <= 600; k++) {
		m.record(0, k, 10000000 * k, (uint32_t)(k % 300));
		m.record(1, k, 10000000 * k + 1000 * k, (uint32_t)(k % 300));
	}
	nt_report rep;
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	REQUIRE(rep.attrib.nlate == 600);
	REQUIRE(rep.attrib.nsites == 300);
	std::string t = text_of(rep, 600);
	// The latest: instance 600 at site 0, then 599 at site 299.
	CHECK(t.find("MPI_F0 app+0x1000") != std::string::npos);
	CHECK(t.find("MPI_F299 app+0x112b") != std::string::npos);
	CHECK(t.find(" ? ") == std::string::npos); // no site without its name
	nt_report_free(&rep);
}

TEST_CASE("report: a Python call site is its file and line, never symbolized", "[report]")
{
	const char *py = "python:Solver.step:/home/u/run: 1/script.py";
	const char *fn = nullptr, *file = nullptr;
	size_t fn_len = 0;
	SECTION("the module names the function and the file (which may hold colons)")
	{
		REQUIRE(nt_log_python_site(py, &fn, &fn_len, &file));
		CHECK(std::string(fn, fn_len) == "Solver.step");
		CHECK(std::string(file) == "/home/u/run: 1/script.py");
		CHECK_FALSE(nt_log_python_site("/usr/lib/libpython.so", &fn, &fn_len, &file));
		CHECK_FALSE(nt_log_python_site("python:nofile", nullptr, nullptr, nullptr));
		CHECK_FALSE(nt_log_python_site("python:f:", nullptr, nullptr, nullptr));
		CHECK_FALSE(nt_log_python_site(nullptr, nullptr, nullptr, nullptr));
	}
	SECTION("text and JSON name file.py:line and the function; the symbolizer is not asked")
	{
		mem_log m(2);
		for (uint32_t r = 0; r < 2; r++) {
			m.site(r, "MPI_Allreduce", py, 12).total_ns = 2000;
			m.site(r, "MPI_Bcast", "/bin/app", 0x40).total_ns = 1000;
		}
		int asked = 0;
		auto sym = [](void *ctx, const char *module, uint64_t, char *out, size_t size) {
			++*static_cast<int *>(ctx);
			CHECK(std::strncmp(module, "python:", 7) != 0);
			std::snprintf(out, size, "app.c:7");
			return 0;
		};
		nt_report rep;
		REQUIRE(nt_report_build(m.get(), sym, &asked, &rep) == 0);
		CHECK(asked == 1);
		REQUIRE(rep.nsites == 2);
		CHECK(std::string(rep.sites[0].location) == "script.py:12");
		CHECK(std::string(rep.sites[0].caller) == "Solver.step");
		CHECK(std::string(rep.sites[1].location) == "app.c:7");
		CHECK(std::string(rep.sites[1].caller).empty());
		CHECK(text_of(rep).find("MPI_Allreduce            script.py:12") != std::string::npos);
		std::string j = json_of(rep);
		CHECK(j.find("\"language\": \"python\"") != std::string::npos);
		CHECK(j.find("\"file\": \"/home/u/run: 1/script.py\"") != std::string::npos);
		CHECK(j.find("\"line\": 12") != std::string::npos);
		CHECK(j.find("\"caller\": \"Solver.step\"") != std::string::npos);
		nt_report_free(&rep);
	}
}

TEST_CASE("report: a Python call site names its Python call; its MPI calls are grouped", "[report]")
{
	const char *fn = nullptr, *file = nullptr, *call = nullptr;
	size_t fn_len = 0, call_len = 0;
	SECTION("python:FUNCTION:CALL:FILE, and the form before call names")
	{
		const char *py = "python:rounds:comm.allreduce:/home/u/run: 1/script.py";
		REQUIRE(nt_log_python_site(py, &fn, &fn_len, &file));
		CHECK(std::string(fn, fn_len) == "rounds");
		CHECK(std::string(file) == "/home/u/run: 1/script.py");
		REQUIRE(nt_log_python_call(py, &call, &call_len));
		CHECK(std::string(call, call_len) == "comm.allreduce");
		// No call name: an empty field.
		REQUIRE(nt_log_python_site("python:f::<string>", &fn, &fn_len, &file));
		CHECK(std::string(file) == "<string>");
		REQUIRE(nt_log_python_call("python:f::<string>", &call, &call_len));
		CHECK(call_len == 0);
		// Logs of earlier builds: the file right after the function ('/' or '<').
		REQUIRE(nt_log_python_site("python:f:/a:b/s.py", &fn, &fn_len, &file));
		CHECK(std::string(file) == "/a:b/s.py");
		REQUIRE(nt_log_python_call("python:f:/a:b/s.py", &call, &call_len));
		CHECK(call_len == 0);
		REQUIRE(nt_log_python_call("python:<module>:<stdin>", &call, &call_len));
		CHECK(call_len == 0);
		CHECK_FALSE(nt_log_python_call("/usr/lib/libpython.so", &call, &call_len));
		CHECK_FALSE(nt_log_python_site("python:f:comm.allreduce:", nullptr, nullptr, nullptr));
	}
	SECTION("the text row reads file.py:line CALL; the grouping sums each Python call's MPI calls")
	{
		const char *lower = "python:rounds:comm.allreduce:/u/script.py";
		const char *upper = "python:rounds:comm.Allreduce:/u/script.py";
		const char *bare = "python:rounds::/u/script.py";
		mem_log m(2);
		auto add = [&m](uint32_t r, const char *fn, const char *module, uint64_t line,
				uint64_t ns) {
			nt_log_site &s = m.site(r, fn, module, line);
			s.calls = 1;
			s.total_ns = ns;
		};
		for (uint32_t r = 0; r < 2; r++) {
			add(r, "MPI_Allreduce", upper, 18, 9000);
			add(r, "MPI_Bcast", lower, 19, 3000);
			add(r, "MPI_Bcast", bare, 21, 500);
			add(r, "MPI_Barrier", "/bin/app", 0x40, 100);
		}
		add(0, "MPI_Recv", lower, 19, 2000);
		add(1, "MPI_Send", lower, 19, 1000);
		nt_report rep;
		REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
		REQUIRE(rep.nsites == 6);
		CHECK(std::string(rep.sites[0].python_call) == "comm.Allreduce");
		CHECK(std::string(rep.sites[5].python_call).empty()); // the C site
		std::string t = text_of(rep);
		CHECK(t.find("MPI_Bcast                script.py:19 comm.allreduce ") != std::string::npos);
		CHECK(t.find("MPI_Bcast                script.py:21                ") != std::string::npos);
		CHECK(t.find("MPI_Barrier              app+0x40") != std::string::npos);
		// By MPI time: comm.Allreduce 18 us, comm.allreduce 6 + 2 + 1 us over 4 MPI calls.
		size_t at = t.find("MPI calls by Python call");
		REQUIRE(at != std::string::npos);
		std::string g = t.substr(at);
		size_t a = g.find("comm.Allreduce           script.py:18"),
		       b = g.find("comm.allreduce           script.py:19");
		REQUIRE(a != std::string::npos);
		REQUIRE(b != std::string::npos);
		CHECK(a < b);
		CHECK(g.find("MPI_Bcast 2, MPI_Recv 1, MPI_Send 1") != std::string::npos);
		CHECK(g.find("script.py:21") == std::string::npos); // no call name: not grouped
		std::string js = json_of(rep);
		nt_jvalue doc;
		char err[128];
		REQUIRE(nt_json_parse(js.data(), js.size(), &doc, err, sizeof err) == 0);
		const nt_jvalue *sites = nt_jvalue_get(&doc, "sites");
		REQUIRE(sites);
		CHECK(std::string(nt_jvalue_get(&sites->items[0], "python_call")->string) ==
		      "comm.Allreduce");
		const nt_jvalue *calls = nt_jvalue_get(&doc, "python_calls");
		REQUIRE(calls);
		REQUIRE(calls->n == 2);
		const nt_jvalue *c = &calls->items[1];
		CHECK(std::string(nt_jvalue_get(c, "python_call")->string) == "comm.allreduce");
		CHECK(nt_jvalue_get(c, "line")->number == 19);
		CHECK(nt_jvalue_get(c, "mpi_calls")->number == 4);
		CHECK(nt_jvalue_get(c, "time_ns_total")->number == 9000);
		CHECK(nt_jvalue_get(c, "mpi_functions")->n == 3);
		nt_jvalue_free(&doc);
		nt_report_free(&rep);
	}
}
