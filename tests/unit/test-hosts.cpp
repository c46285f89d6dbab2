// Which hosts make jobs late, across jobs (libnoisetool/hosts.c): made-up reports (their
// attribution's culprits by node and holds by rank set by hand) added job by job; the hosts'
// order, shares, jobs in and hurt, worst jobs, causes, unreadable logs, text and JSON.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <noisetool/hosts.h>

#include "mem-log.h"
#include "memfile.h"

namespace {

const uint64_t MS = 1000000;

// A job of ranks on hosts, each 1 h of wall time; late: {host, delay, preemption part}.
struct job {
	mem_log m;
	std::vector<nt_culprit> nodes, held;
	std::vector<nt_late> lates;
	nt_report rep{};
	// batch: its Slurm job id, run by alice (log version 8); NULL: a log without them.
	job(std::vector<const char *> hosts, uint64_t created, const char *batch = nullptr)
		: m((uint32_t)hosts.size())
	{
		for (size_t r = 0; r < hosts.size(); r++) {
			m.ranks[r].host = hosts[r];
			m.ranks[r].wall_ns = 3600000 * MS;
			m.ranks[r].command = "./app 3";
			if (batch) {
				m.ranks[r].user = "alice";
				m.ranks[r].batch_system = "slurm";
				m.ranks[r].batch_job = batch;
				m.ranks[r].batch_nodes = "b,d";
			}
		}
		m.get();
		m.log.created_unix_ns = created;
	}
	void late(const char *host, uint64_t ns, uint64_t preempted)
	{
		nt_culprit c{};
		c.host = host;
		c.delay_ns = ns;
		c.causes.ns[NT_CAUSE_PREEMPTION] = preempted;
		c.causes.ns[NT_CAUSE_UNEXPLAINED] = ns - preempted;
		nodes.push_back(c);
	}
	// A late instance: the last arriver on host, at site.
	void late_at(const char *host, const nt_log_site *site, uint64_t ns)
	{
		nt_late l{};
		l.host = host;
		l.site = site;
		l.delay_ns = ns;
		lates.push_back(l);
	}
	void hold(uint32_t rank, uint64_t ns)
	{
		nt_culprit c{};
		c.rank = rank;
		c.delay_ns = ns;
		held.push_back(c);
	}
	const nt_report *get()
	{
		rep.log = m.get();
		rep.nranks = rep.log->nranks;
		rep.attrib.nodes = nodes.data();
		rep.attrib.nnodes = nodes.size();
		rep.attrib.held_ranks = held.data();
		rep.attrib.nheld_ranks = held.size();
		rep.attrib.late = lates.data();
		rep.attrib.nlate = lates.size();
		return &rep;
	}
};

} // namespace

TEST_CASE("nt_hosts: hosts ranked by the delay they imposed across jobs", "[hosts]")
{
	nt_hosts *h = nt_hosts_new();
	REQUIRE(h != nullptr);
	// Job 1 on a, b, c: b late 30 ms (20 preemption), a 10 ms; rank 0 (a) held 50 ms.
	job j1({ "a", "b", "c" }, 1000000000000000000ull);
	j1.late("b", 30 * MS, 20 * MS);
	j1.late("a", 10 * MS, 0);
	j1.hold(0, 50 * MS);
	REQUIRE(nt_hosts_add(h, j1.get(), "/logs/j1.ntlog") == 0);
	// Job 2 on b and d (two ranks on d): b late 60 ms; job 3 on a alone: nothing late.
	job j2({ "b", "d", "d" }, 1000000000000000000ull + 7200000000000ull, "88.0");
	j2.late("b", 60 * MS, 60 * MS);
	REQUIRE(nt_hosts_add(h, j2.get(), "/logs/j2.ntlog") == 0);
	job j3({ "a" }, 1000000000000000000ull - 3600000000000ull);
	REQUIRE(nt_hosts_add(h, j3.get(), "/logs/j3.ntlog") == 0);
	REQUIRE(nt_hosts_add_unreadable(h, "/logs/bad.ntlog", "not a log (bad magic)") == 0);
	CHECK(nt_hosts_add(h, nullptr, "x") == -EINVAL);

	memfile t;
	REQUIRE(nt_hosts_write_text(t.f(), h, 0) == 0);
	std::string text = t.text();
	CHECK(text.find("3 jobs, 7 ranks, 4 hosts, jobs from 2001-09-09 00:46:40 UTC to "
			"2001-09-09 03:46:40 UTC; 100.000 ms of delay in all") != std::string::npos);
	// b: 90 ms of 100, over 2 rank-hours; a: 10 ms (and 50 held) over 2 rank-hours.
	size_t b = text.find("\nb "), a = text.find("\na "), c = text.find("\nc "),
	       d = text.find("\nd ");
	REQUIRE(b != std::string::npos);
	REQUIRE(a != std::string::npos);
	CHECK(b < a);
	CHECK(a < c); // then c and d, 0 ms each, by name
	CHECK(c < d);
	CHECK(text.find("b                              90.000  90.0%       45.0       2/2     2.000"
			"      0.000  88.9") != std::string::npos);
	CHECK(text.find("a                              10.000  10.0%        5.0       1/2     2.000"
			"     50.000") != std::string::npos);
	CHECK(text.find("b: its worst jobs, then the call sites it arrived last at\n        60.000 ms  "
			"slurm 88.0, alice, /logs/j2.ntlog  (./app 3)\n        30.000 ms  "
			"/logs/j1.ntlog") != std::string::npos);
	CHECK(text.find("1 logs could not be read (left out):\n  /logs/bad.ntlog: not a log (bad "
			"magic)") != std::string::npos);

	memfile top;
	REQUIRE(nt_hosts_write_text(top.f(), h, 1) == 0);
	CHECK(top.text().find("(3 more hosts: --top 0 shows all)") != std::string::npos);

	memfile js;
	REQUIRE(nt_hosts_write_json(js.f(), h) == 0);
	std::string d1 = one_line(js.text());
	CHECK(d1.find("\"schema\": \"noisetool-hosts/1\",\"jobs\": 3,\"ranks\": 7,") == 1);
	CHECK(d1.find("\"delay_ns\": 100000000,\"held_ns\": 50000000,\"causes\": [{\"key\": "
		      "\"preemption\",") != std::string::npos);
	CHECK(d1.find("\"hosts\": [{\"host\": \"b\","
		      "\"delay_ns\": 90000000,\"held_ns\": 0,\"share\": 0.9,\"delay_ms_per_rank_hour\": 45,"
		      "\"rank_ns\": 7200000000000,\"ranks\": 2,\"jobs\": 2,\"jobs_hurt\": 2,\"causes\": "
		      "{\"preemption_ns\": 80000000,") != std::string::npos);
	CHECK(d1.find("\"worst_jobs\": [{\"log\": \"/logs/j2.ntlog\",\"command\": \"./app 3\","
		      "\"user\": \"alice\",\"batch_system\": \"slurm\",\"batch_job\": \"88.0\","
		      "\"delay_ns\": 60000000},{\"log\": \"/logs/j1.ntlog\",\"command\": \"./app 3\","
		      "\"user\": \"\",\"batch_system\": \"\",\"batch_job\": \"\",") != std::string::npos);
	CHECK(d1.find("\"unreadable\": [{\"log\": \"/logs/bad.ntlog\",\"why\": \"not a log (bad "
		      "magic)\"}]") != std::string::npos);
	nt_hosts_free(h);
	nt_hosts_free(nullptr);
}

TEST_CASE("nt_hosts: the call sites each host arrived last at, across jobs", "[hosts]")
{
	nt_log_site x{}, y{}, x2{};
	x.function = x2.function = "MPI_Allreduce";
	y.function = "MPI_Barrier";
	x.module = x2.module = y.module = "/opt/app/bin/solver";
	x.offset = x2.offset = 0x1234; // the same site in another job's log
	y.offset = 0x99;
	nt_hosts *h = nt_hosts_new();
	REQUIRE(h != nullptr);
	job j1({ "a", "b" }, 1);
	j1.late("b", 30 * MS, 0);
	j1.late_at("b", &x, 20 * MS);
	j1.late_at("b", &x, 10 * MS);
	REQUIRE(nt_hosts_add(h, j1.get(), "/logs/j1.ntlog") == 0);
	job j2({ "a", "b" }, 2);
	j2.late("b", 60 * MS, 0);
	j2.late_at("b", &x2, 20 * MS);
	j2.late_at("b", &y, 40 * MS);
	REQUIRE(nt_hosts_add(h, j2.get(), "/logs/j2.ntlog") == 0);

	memfile t;
	REQUIRE(nt_hosts_write_text(t.f(), h, 0) == 0);
	std::string text = t.text();
	// x: 50 ms over 2 jobs, first; y: 40 ms in 1.
	size_t sx = text.find("        50.000 ms  at MPI_Allreduce solver+0x1234 (2 jobs)\n"),
	       sy = text.find("        40.000 ms  at MPI_Barrier solver+0x99 (1 job)\n");
	CHECK(sx != std::string::npos);
	CHECK(sy != std::string::npos);
	CHECK(sx < sy);
	memfile js;
	REQUIRE(nt_hosts_write_json(js.f(), h) == 0);
	std::string d = one_line(js.text());
	CHECK(d.find("\"worst_sites\": [{\"function\": \"MPI_Allreduce\",\"module\": "
		     "\"/opt/app/bin/solver\",\"offset\": 4660,\"delay_ns\": 50000000,\"jobs\": 2},"
		     "{\"function\": \"MPI_Barrier\"") != std::string::npos);
	CHECK(d.find("\"sites_untracked_ns\": 0") != std::string::npos);
	nt_hosts_free(h);

	SECTION("more sites than a host follows: the least delay is counted as untracked")
	{
		nt_hosts *g = nt_hosts_new();
		REQUIRE(g != nullptr);
		std::vector<nt_log_site> many(20, x);
		job j({ "c" }, 3);
		j.late("c", 210 * MS, 0);
		for (size_t i = 0; i < many.size(); i++) {
			many[i].offset = 0x100 + i;
			j.late_at("c", &many[i], (i + 1) * MS); // 1 ... 20 ms
		}
		REQUIRE(nt_hosts_add(g, j.get(), "/logs/j.ntlog") == 0);
		memfile gj;
		REQUIRE(nt_hosts_write_json(gj.f(), g) == 0);
		std::string e = one_line(gj.text());
		// 16 followed: 5 ... 20 ms; 1 + 2 + 3 + 4 = 10 ms untracked; the worst is 20 ms.
		CHECK(e.find("\"sites_untracked_ns\": 10000000") != std::string::npos);
		CHECK(e.find("\"offset\": 275,\"delay_ns\": 20000000,\"jobs\": 1}") !=
		      std::string::npos);
		nt_hosts_free(g);
	}
}

TEST_CASE("nt_hosts: a log's strings reach the terminal without control characters", "[hosts]")
{
	nt_hosts *h = nt_hosts_new();
	REQUIRE(h != nullptr);
	job j({ "a" }, 1, "9.0");
	j.m.ranks[0].command = "./app \x1b[2J";
	j.m.ranks[0].user = "eve\x07";
	j.late("a", 5 * MS, 0);
	REQUIRE(nt_hosts_add(h, j.get(), "/logs/\x1b]0;x.ntlog") == 0);
	memfile t;
	REQUIRE(nt_hosts_write_text(t.f(), h, 0) == 0);
	std::string text = t.text();
	CHECK(text.find("slurm 9.0, eve?, /logs/?]0;x.ntlog  (./app ?[2J)") != std::string::npos);
	CHECK(text.find('\x1b') == std::string::npos);
	nt_hosts_free(h);
}
