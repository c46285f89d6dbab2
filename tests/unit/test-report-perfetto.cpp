// The timeline of a log built in memory, read back with the core's JSON reader: hosts become
// processes in order of their lowest rank, every time is put on the global time base (offset,
// drift, a negative origin shifted to 0), the late arrival is flagged on its last arriver's
// track, overlapping nonblocking slices take a second lane, injected noise and the OS counters
// sit on their rank, and a name that is not UTF-8 still makes valid JSON.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <noisetool/perfetto.h>
#include <noisetool/probe.h>
#include <noisetool/report.h>

extern "C" {
#include "json-read.h" // private to the core, without its own extern "C"
}

namespace {

const char *HOST_B = "b\"\xff"; // a quote and a byte that is not UTF-8

struct fixture {
	nt_log log{};
	nt_log_rank ranks[3]{};
	nt_log_site site{};
	std::vector<nt_log_record> recs[3];
	nt_report rep{};
	nt_jvalue doc{};

	fixture()
	{
		site.function = "MPI_Allreduce";
		site.module = "/usr/bin/app";
		site.offset = 0x40;
		site.calls = 1;
		const char *hosts[3] = { HOST_B, "a", HOST_B };
		for (uint32_t r = 0; r < 3; r++) {
			ranks[r].rank = r;
			ranks[r].host = hosts[r];
			ranks[r].nsites = 1;
			ranks[r].sites = &site;
			// Instance world:1 at 1 ms local on every rank, 2 us in the call.
			nt_log_record x{};
			x.seq = 1;
			x.start_ns = 1000000;
			x.duration_ns = 2000;
			recs[r].push_back(x);
		}
		// Rank 1: MPI_Init at global 5 us, its clock 0.1 % slow: arrives at 1.006 ms, late.
		ranks[1].init_global_ns = 5000;
		ranks[1].drift_ppb = 1000000;
		// Rank 0: two nonblocking instances on communicator 7 that overlap without nesting.
		nt_log_record nb{};
		nb.comm_id = 7;
		nb.seq = 1;
		nb.start_ns = 2000000;
		nb.duration_ns = 1000000;
		recs[0].push_back(nb);
		nb.seq = 2;
		nb.start_ns = 2500000;
		recs[0].push_back(nb);
		// Rank 2: MPI_Init at global -3 us; its record ends a 1.1 ms window with 100 us
		// injected and 50 us run delay, which began at global -101 us: the trace's origin.
		ranks[2].init_global_ns = -3000;
		nt_log_record &w = recs[2][0];
		w.flags = NT_LOG_REC_WINDOW;
		w.win.wall_ns = 1100000;
		w.win.cpu_ns = 880000;
		w.win.run_delay_ns = 50000;
		w.win.injected_ns = 100000;
		w.win.invol_switches = 3;
		w.win.valid = NT_SRC_RUSAGE | NT_SRC_SCHEDSTAT | NT_SRC_THREAD_CPU;
		for (uint32_t r = 0; r < 3; r++) {
			ranks[r].nrecords = recs[r].size();
			ranks[r].records = recs[r].data();
		}
		log.nranks = 3;
		log.level = 1;
		log.ranks = ranks;
		REQUIRE(nt_report_build(&log, nullptr, nullptr, &rep) == 0);
	}
	~fixture()
	{
		nt_jvalue_free(&doc);
		nt_report_free(&rep);
	}
	const nt_jvalue &trace()
	{
		char *buf = nullptr;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		REQUIRE(f);
		CHECK(nt_perfetto_write(f, &rep) == 0);
		std::fclose(f);
		char err[128] = "";
		int rc = nt_json_parse(buf, len, &doc, err, sizeof err);
		INFO(err);
		REQUIRE(rc == 0);
		std::free(buf);
		return doc;
	}
};

double num(const nt_jvalue *v, const char *key)
{
	const nt_jvalue *x = nt_jvalue_get(v, key);
	REQUIRE(x);
	REQUIRE(x->type == NT_JNUMBER);
	return x->number;
}

std::string str(const nt_jvalue *v, const char *key)
{
	const nt_jvalue *x = nt_jvalue_get(v, key);
	REQUIRE(x);
	REQUIRE(x->type == NT_JSTRING);
	return x->string;
}

// The events with this ph and name (a prefix of it when prefix is set).
std::vector<const nt_jvalue *> events(const nt_jvalue &doc, const char *ph, const std::string &name,
				      bool prefix = false)
{
	std::vector<const nt_jvalue *> out;
	const nt_jvalue *ev = nt_jvalue_get(&doc, "traceEvents");
	REQUIRE(ev);
	REQUIRE(ev->type == NT_JARRAY);
	for (size_t i = 0; i < ev->n; i++) {
		const nt_jvalue *e = &ev->items[i];
		std::string n = str(e, "name");
		if (str(e, "ph") == ph && (prefix ? n.rfind(name, 0) == 0 : n == name))
			out.push_back(e);
	}
	return out;
}

} // namespace

TEST_CASE("perfetto: tracks, time base, late arrivals, noise")
{
	fixture fx;
	const nt_jvalue &doc = fx.trace();
	const nt_jvalue *other = nt_jvalue_get(&doc, "otherData");
	REQUIRE(other);

	SECTION("hosts are processes in order of their lowest rank; names stay valid UTF-8")
	{
		auto procs = events(doc, "M", "process_name");
		REQUIRE(procs.size() == 2);
		CHECK(num(procs[0], "pid") == 1);
		CHECK(str(nt_jvalue_get(procs[0], "args"), "name") == "b\"\xef\xbf\xbd");
		CHECK(num(procs[1], "pid") == 2);
		CHECK(str(nt_jvalue_get(procs[1], "args"), "name") == "a");
	}
	SECTION("every record is a slice on the global time base, ts 0 the earliest event")
	{
		CHECK(num(other, "time_origin_ns") == -101000);
		CHECK(num(other, "records") == 5);
		auto slices = events(doc, "X", "MPI_Allreduce", true);
		REQUIRE(slices.size() == 5);
		const nt_jvalue *late = nullptr;
		for (auto e : slices)
			if (num(nt_jvalue_get(e, "args"), "rank") == 1)
				late = e;
		REQUIRE(late);
		CHECK(str(late, "name") == "MPI_Allreduce (late arrival)");
		CHECK(str(late, "cat") == "collective,late_arrival");
		CHECK(num(late, "pid") == 2);
		CHECK(num(late, "tid") == 11);
		// 5 us + 1 ms x 1.001, from -101 us; 2 us x 1.001 in the call.
		CHECK(num(late, "ts") == Approx(1107.0).margin(0.0005));
		CHECK(num(late, "dur") == Approx(2.002).margin(0.0005));
		const nt_jvalue *a = nt_jvalue_get(late, "args");
		CHECK(nt_jvalue_get(a, "late_arrival")->boolean);
		REQUIRE(fx.rep.attrib.nlate == 1); // 6 us late, as attribution computes it
		CHECK(num(a, "instance_delay_ns") == (double)fx.rep.attrib.late[0].delay_ns);
		CHECK(num(a, "instance_delay_ns") == Approx(6000).margin(1));
		CHECK(num(a, "last_arriver") == 1);
		CHECK(num(a, "members") == 3);
		CHECK(num(a, "time_in_call_ns") == 2000);
		CHECK(str(a, "location") == "app+0x40");
		int flagged = 0;
		for (auto e : slices)
			flagged += nt_jvalue_get(nt_jvalue_get(e, "args"), "late_arrival")->boolean;
		CHECK(flagged == 1);
	}
	SECTION("overlapping nonblocking slices: the second on another lane of its rank")
	{
		std::vector<double> tids;
		for (auto e : events(doc, "X", "MPI_Allreduce", true))
			if (num(nt_jvalue_get(e, "args"), "comm_id") == 7)
				tids.push_back(num(e, "tid"));
		REQUIRE(tids.size() == 2);
		CHECK(tids[0] == 1);
		CHECK(tids[1] == 2);
		CHECK(events(doc, "M", "thread_name").size() == 5); // r0 x2, r1, r2, r2's noise
		CHECK(num(other, "slices_cut") == 0);
	}
	SECTION("injected noise covers its window on the rank's noise track; counters per window")
	{
		auto noise = events(doc, "X", "injected noise");
		REQUIRE(noise.size() == 1);
		CHECK(num(noise[0], "pid") == 1);
		CHECK(num(noise[0], "tid") == 29);
		CHECK(num(noise[0], "ts") == 0);
		CHECK(num(noise[0], "dur") == Approx(1100.0).margin(0.0005));
		CHECK(num(nt_jvalue_get(noise[0], "args"), "injected_ns") == 100000);
		auto run = events(doc, "C", "rank 2 run delay");
		REQUIRE(run.size() == 2); // the window's value, then 0 at its end
		CHECK(num(nt_jvalue_get(run[0], "args"), "% of window") ==
		      Approx(100.0 * 50000 / 1100000).margin(0.001));
		CHECK(num(run[1], "ts") == Approx(1100.0).margin(0.0005));
		CHECK(num(nt_jvalue_get(run[1], "args"), "% of window") == 0);
		auto sw = events(doc, "C", "rank 2 context switches");
		REQUIRE(sw.size() == 2);
		CHECK(num(nt_jvalue_get(sw[0], "args"), "involuntary") == 3);
		CHECK(events(doc, "C", "rank 0", true).empty()); // no windows on rank 0
	}
}

TEST_CASE("perfetto: errors")
{
	fixture fx;
	CHECK(nt_perfetto_write(nullptr, &fx.rep) == -EINVAL);
	CHECK(nt_perfetto_write(stdout, nullptr) == -EINVAL);
	FILE *ro = std::fopen("/dev/null", "r"); // every write fails
	REQUIRE(ro);
	CHECK(nt_perfetto_write(ro, &fx.rep) == -EIO);
	std::fclose(ro);
}
