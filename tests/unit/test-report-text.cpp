// The report's text tables (libnoisetool/report-text.c) over a made-up log: a terminal never
// gets a control character from a log.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <noisetool/probe.h>
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

TEST_CASE("report: who shares each rank's CPUs, and the shares others took", "[report][cpus]")
{
	// Host a: ranks 0 and 2 on CPU 0, rank 1 alone on CPU 1, each 1 s of wall time; host b:
	// rank 3 bound to CPUs 0-1 with rank 4 inside them on CPU 1; rank 5 recorded nothing.
	mem_log m(6);
	const char *cpus[6] = { "0", "1", "0", "0-1", "1", "" };
	const char *hosts[6] = { "a", "a", "a", "b", "b", "b" };
	const uint64_t s = 1000000000;
	for (uint32_t r = 0; r < 6; r++) {
		m.ranks[r].host = hosts[r];
		m.ranks[r].cpus = cpus[r];
		m.ranks[r].wall_ns = s;
		m.site(r, "MPI_Allreduce", "/bin/app", 0x20).total_ns = 100;
	}
	// CPU 0 of a: busy the whole second, 0.45 s each for ranks 0 and 2, 0.1 s for others.
	m.ranks[0].cpu_ns = m.ranks[2].cpu_ns = s * 45 / 100;
	m.ranks[0].run_delay_ns = m.ranks[2].run_delay_ns = s / 2;
	m.ranks[0].cpus_busy_ns = m.ranks[2].cpus_busy_ns = s;
	m.ranks[0].cpus_steal_ns = m.ranks[2].cpus_steal_ns = s / 100;
	// CPU 1 of a: rank 1 alone, 0.9 s on it, busy 0.95 s: others 5 %; its times unknown.
	m.ranks[1].cpu_ns = s * 9 / 10;
	m.ranks[1].run_delay_ns = NT_LOG_UNKNOWN;
	m.ranks[1].cpus_busy_ns = s * 95 / 100;
	m.ranks[1].cpus_steal_ns = NT_LOG_UNKNOWN;
	// Host b: rank 3 on CPUs 0-1 (2 s of capacity), rank 4 inside them.
	m.ranks[3].cpu_ns = s / 2;
	m.ranks[3].cpus_busy_ns = s * 16 / 10; // 0.5 + 0.8 (rank 4) + 0.3 others
	m.ranks[4].cpu_ns = s * 8 / 10;
	m.ranks[4].cpus_busy_ns = s * 9 / 10; // CPU 1: rank 4's 0.8, rank 3's part, others
	m.log.wait_mode = NT_LOG_WAIT_MPI;
	nt_report rep;
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	REQUIRE(rep.cpus != nullptr);
	const nt_report_cpus *c = rep.cpus;
	CHECK(c[0].known);
	CHECK(c[0].ncpus == 1);
	CHECK(c[0].crowd == 2); // ranks 0 and 2 on CPU 0
	CHECK(c[0].sharing == 1);
	CHECK(c[0].on_cpu == Approx(0.45));
	CHECK(c[0].waited == Approx(0.5));
	CHECK(c[0].job_share == Approx(0.45));
	CHECK(c[0].others_share == Approx(0.1));
	CHECK(c[0].steal_share == Approx(0.01));
	CHECK(c[1].crowd == 1);
	CHECK(c[1].sharing == 0);
	CHECK(c[1].others_share == Approx(0.05));
	CHECK(c[1].waited < 0); // unknown
	CHECK(c[1].steal_share < 0);
	CHECK(c[3].ncpus == 2);
	CHECK(c[3].crowd == 2);   // rank 4 lies within its CPUs
	CHECK(c[3].sharing == 1);
	CHECK(c[3].job_share == Approx(0.4));    // rank 4's 0.8 s of 2 s
	CHECK(c[3].others_share == Approx(0.15)); // 1.6 - 0.5 - 0.8 = 0.3 s of 2 s
	CHECK(c[4].crowd == 1);   // rank 3's CPUs do not lie within rank 4's
	CHECK(c[4].sharing == 1);
	CHECK(c[4].job_share == Approx(0.0));
	CHECK(c[4].others_share == Approx(0.1)); // what rank 3 ran there counts as others
	CHECK_FALSE(c[5].known);
	CHECK(rep.crowded_ranks == 2);
	std::string t = text_of(rep);
	auto rows = table(t, "CPUs by rank");
	REQUIRE(rows.size() >= 8);
	CHECK(rows[1].find("     0  a                    0                    2/1     45.0     50.0"
			   "     45.0     10.0      1.0") == 0);
	CHECK(rows[2].find("     1  a                    1                    1/1     90.0        -"
			   "      0.0      5.0        -") == 0);
	CHECK(rows[6].find("     5  b                    ?") == 0);
	CHECK(t.find("2 ranks take turns on their CPUs with more ranks of this job than they have "
		     "CPUs (rank 0: 2 ranks on CPU 0): their MPI waits spin (waits mpi)") !=
	      std::string::npos);
	CHECK(t.find("Tasks outside this job took 10 % or more of the CPUs of 4 ranks") !=
	      std::string::npos);
	std::string js = one_line(json_of(rep));
	CHECK(js.find("\"crowded_ranks\": 2") != std::string::npos);
	CHECK(js.find("\"cpus\": {\"list\": \"0\",\"cpu_ns\": 450000000,\"run_delay_ns\": "
		      "500000000,\"busy_ns\": 1000000000,\"steal_ns\": 10000000,\"count\": 1,"
		      "\"ranks_within\": 2,\"ranks_sharing\": 1,\"on_cpu_share\": 0.45,"
		      "\"waited_share\": 0.5,\"job_share\": 0.45,\"others_share\": 0.1,"
		      "\"steal_share\": 0.01}") != std::string::npos);
	CHECK(js.find("\"cpus\": {\"list\": \"1\",\"cpu_ns\": 900000000,\"busy_ns\": 950000000,"
		      "\"count\": 1,") != std::string::npos);
	CHECK(js.find("\"cpus\": {\"list\": \"\"}") != std::string::npos);
	nt_report_free(&rep);
	// Adaptive waits: the advice changes; a log without CPUs: no table.
	m.log.wait_mode = NT_LOG_WAIT_ADAPTIVE;
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	CHECK(text_of(rep).find("their MPI waits nap while a CPU is shared (waits adaptive)") !=
	      std::string::npos);
	nt_report_free(&rep);
	for (uint32_t r = 0; r < 6; r++)
		m.ranks[r].cpus = "";
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	CHECK(rep.cpus == nullptr);
	CHECK(text_of(rep).find("CPUs by rank") == std::string::npos);
	nt_report_free(&rep);
}

TEST_CASE("report: the other tasks on the ranks' CPUs, the job's own ranks named by pid and host",
	  "[report][cpus]")
{
	// Host a: ranks 0 and 2 on CPU 0, rank 1 alone on CPU 1 beside a hog; host b: rank 3,
	// beside a task whose pid is rank 0's on host a.
	mem_log m(4);
	const char *cpus[4] = { "0", "1", "0", "0" };
	const char *hosts[4] = { "a", "a", "a", "b" };
	const uint64_t ms = 1000000;
	for (uint32_t r = 0; r < 4; r++) {
		m.ranks[r].host = hosts[r];
		m.ranks[r].cpus = cpus[r];
		m.ranks[r].wall_ns = 1000 * ms;
		m.ranks[r].pid = 100 + r;
		m.site(r, "MPI_Allreduce", "/bin/app", 0x20).total_ns = 100;
	}
	auto other = [&](uint32_t r, uint32_t pid, uint32_t kind, uint64_t ns, const char *comm) {
		nt_log_rank &k = m.ranks[r];
		k.others_flags |= NT_LOG_OTHERS_KNOWN;
		k.others[k.nothers] = { pid, kind, ns, "" };
		std::snprintf(k.others[k.nothers].comm, NT_LOG_TASK_COMM_BYTES, "%s", comm);
		k.nothers++;
		k.others_count++;
		k.others_ns += ns;
	};
	other(0, 102, NT_LOG_TASK_PROCESS, 600 * ms, "app");
	other(0, 7, NT_LOG_TASK_KERNEL, 12 * ms, "kworker/0:1");
	other(1, 555, NT_LOG_TASK_PROCESS, 800 * ms, "culprit-hog");
	other(1, 556, NT_LOG_TASK_OTHER_USER, 50 * ms, "sshd");
	m.ranks[1].others_flags |= NT_LOG_OTHERS_PARTIAL;
	m.ranks[1].others_count = 9; // more than it keeps
	m.ranks[1].others_ns = 1000 * ms;
	other(3, 100, NT_LOG_TASK_PROCESS, 300 * ms, "app");
	m.ranks[2].others_flags = NT_LOG_OTHERS_SKIPPED; // a short job: not read again
	m.ranks[0].others_run_delay_ns = NT_LOG_UNKNOWN;
	// Rank 1's tasks were first read 0.2 s into the job (log version 9); it waited 700 ms
	// for its CPU from then on.
	m.ranks[1].others_from_ns = 200 * ms;
	m.ranks[1].others_run_delay_ns = 700 * ms;
	// Rank 3's CPU counted 300 ticks and 5 network softirqs in the half second of its wall
	// time from their first reading.
	m.ranks[3].others_from_ns = 500 * ms;
	m.ranks[3].others_flags |= NT_LOG_IRQS_KNOWN;
	m.ranks[3].irq_count = 300;
	m.ranks[3].softirq_count = 5;
	m.ranks[3].nirqs = 2;
	m.ranks[3].irqs[0] = { NT_LOG_IRQ_INTERRUPT, "LOC", "Local timer interrupts", 250 };
	m.ranks[3].irqs[1] = { NT_LOG_IRQ_SOFTIRQ, "NET_RX", "", 5 };
	nt_report rep;
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	REQUIRE(rep.cpus != nullptr);
	CHECK(rep.cpus[0].others_rank[0] == 2);
	CHECK(rep.cpus[0].others_rank[1] == -1);
	CHECK(rep.cpus[1].others_rank[0] == -1);
	CHECK(rep.cpus[3].others_rank[0] == -1); // pid 100 is rank 0's on host a, not b's
	std::string t = text_of(rep);
	auto rows = table(t, "Other tasks on the ranks' CPUs");
	REQUIRE(rows.size() == 6); // the head, then ranks 0, 1, 2 (not read again) and 3
	CHECK(rows[1].find("     0  this job's rank 2 (pid 102) 600.00 ms 98 %, kworker/0:1 (pid 7, "
			   "kernel thread) 12.00 ms 2 %; 2 in all, 612.00 ms") == 0);
	CHECK(rows[2].find("     1  from 0.20 s: culprit-hog (pid 555) 800.00 ms 80 %, sshd (pid 556, another "
			   "user's) 50.00 ms 5 %; 9 in all, 1000.00 ms (the node had more threads "
			   "than the rank followed)") == 0);
	CHECK(rows[3] == "     2  not read at both ends: the job was too short (reading them "
			 "would have taken the rank's reads past 1 % of its wall time)");
	CHECK(rows[4].find("     3  from 0.50 s: app (pid 100) 300.00 ms 100 %") == 0);
	CHECK(rows[5] == "        interrupts 600/s: LOC 500/s (Local timer interrupts); softirqs "
			 "10/s: NET_RX 10/s");
	std::string js = one_line(json_of(rep));
	CHECK(js.find("\"pid\": 100,\"others\": {\"from_ns\": 0,\"partial\": false,\"run_ns\": "
		      "612000000,\"count\": 2,"
		      "\"tasks\": [{\"pid\": 102,\"comm\": \"app\",\"kind\": \"process\",\"run_ns\": "
		      "600000000,\"share\": 0.98") != std::string::npos);
	CHECK(js.find("\"job_rank\": 2}") != std::string::npos);
	CHECK(js.find("\"pid\": 102,\"others_skipped\": true}") != std::string::npos);
	CHECK(js.find("\"kind\": \"another user's\"") != std::string::npos);
	CHECK(js.find("\"interrupts\": {\"count\": 300,\"per_second\": 600,\"top\": [{\"name\": "
		      "\"LOC\",\"desc\": \"Local timer interrupts\",\"count\": 250,\"per_second\": "
		      "500}]},\"softirqs\": {\"count\": 5,\"per_second\": 10,\"top\": [{\"name\": "
		      "\"NET_RX\",\"desc\": \"\",\"count\": 5,\"per_second\": 10}]}") !=
	      std::string::npos);
	CHECK(js.find("\"others\": {\"from_ns\": 200000000,\"run_delay_ns\": 700000000,") !=
	      std::string::npos);
	nt_report_free(&rep);
	// Rank 1 arrives 10 ms late at an instance, its window all run delay: under its culprit
	// row, who ran on its CPU, from when, and how long it waited for it then.
	m.record(0, 1, 1 * ms, 0, 10 * ms);
	m.record(1, 1, 11 * ms, 0, 2000);
	nt_log_record &w = m.records[1].back();
	w.flags = NT_LOG_REC_WINDOW;
	w.win.wall_ns = 10 * ms;
	w.win.cpu_ns = 0;
	w.win.run_delay_ns = 10 * ms;
	w.win.valid = NT_SRC_RUSAGE | NT_SRC_SCHEDSTAT | NT_SRC_THREAD_CPU;
	m.log.level = 1;
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	t = text_of(rep);
	CHECK(t.find("    its preemption, by the tasks that ran on its CPUs from 0.20 s (it waited "
		     "700.00 ms for a CPU then): culprit-hog (pid 555) 800.00 ms 80 %") !=
	      std::string::npos);
	m.ranks[1].others_from_ns = 0; // as before log version 9: read at MPI_Init
	nt_report_free(&rep);
	REQUIRE(nt_report_build(m.get(), nullptr, nullptr, &rep) == 0);
	CHECK(text_of(rep).find("    its preemption, by the tasks that ran on its CPUs (it waited "
				"700.00 ms for a CPU): culprit-hog") != std::string::npos);
	nt_report_free(&rep);
}
