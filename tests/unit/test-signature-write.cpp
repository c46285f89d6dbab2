// A node's noise signature written out (libnoisetool/signature-write.c): the JSON document's
// keys and values, balanced, FTQ's own keys, what ran meanwhile, where the detour time went.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <string>

#include <noisetool/noise.h>

#include "mem-log.h"
#include "memfile.h"

namespace {

bool has_key(const std::string &doc, const char *key)
{
	return doc.find(std::string("\"") + key + "\": ") != std::string::npos;
}

} // namespace

TEST_CASE("nt_node_noise_write_json", "[noise]")
{
	struct nt_cpu_noise cpu;
	std::memset(&cpu, 0, sizeof cpu);
	cpu.cpu = 3;
	cpu.os.cpu_start = 3;
	cpu.os.cpu_end = 3;
	cpu.t_min_ns = 12.5;
	cpu.elapsed_ns = 1000000000;
	cpu.iterations = 80000000;
	cpu.classified = true;
	cpu.stats.count = 2;
	cpu.stats.preempted = 1;
	cpu.stats.total_ns = 7000;
	cpu.stats.max_ns = 5000;
	cpu.stats.mean_ns = 3500;
	cpu.stats.median_ns = 3500;
	cpu.stats.p99_ns = 5000;
	cpu.stats.noise_ratio = 7e-6;
	cpu.stats.hist[10] = 1;
	cpu.stats.hist[12] = 1;
	cpu.sig.nperiodic = 1;
	cpu.sig.periodic[0].freq_hz = 250;
	cpu.sig.periodic[0].typical_ns = 2000;
	cpu.sig.periodic[0].count = 2500;
	cpu.sig.rare_threshold_ns = 20000;

	struct nt_node_noise node;
	std::memset(&node, 0, sizeof node);
	node.method = "detour";
	node.seconds = 1.0;
	node.threshold_ns = 1000;
	std::strcpy(node.sys.hostname, "node\"1");
	node.clock.source = NT_CLOCK_TSC;
	node.clock.hz = 3e9;
	node.ncpus = 1;
	node.cpus = &cpu;

	memfile m;
	REQUIRE(m.f() != nullptr);
	REQUIRE(nt_node_noise_write_json(m.f(), &node) == 0);
	std::string doc = m.text();

	SECTION("contains the documented keys")
	{
		for (const char *key : { "cpus", "cpu", "t_min_ns", "noise_ratio", "detour_count",
					 "preempted_count", "max_ns", "mean_ns", "median_ns", "p99_ns",
					 "periodic", "freq_hz", "typical_ns", "count" })
			CHECK(has_key(doc, key));
	}

	SECTION("carries the values")
	{
		CHECK(doc.find("\"cpu\": 3,") != std::string::npos);
		CHECK(doc.find("\"detour_count\": 2,") != std::string::npos);
		CHECK(doc.find("\"preempted_count\": 1,") != std::string::npos);
		CHECK(doc.find("\"freq_hz\": 250,") != std::string::npos);
		CHECK(doc.find("\"hostname\": \"node\\\"1\"") != std::string::npos);
		CHECK(doc.find("\"steal_ns\": null") != std::string::npos); // steal unknown
		CHECK(doc.find("\"quantum_ns\"") == std::string::npos);     // detour method
	}

	SECTION("is balanced")
	{
		long braces = 0, brackets = 0;
		bool in_str = false;
		for (size_t i = 0; i < doc.size(); i++) {
			char c = doc[i];
			if (in_str) {
				if (c == '\\')
					i++;
				else if (c == '"')
					in_str = false;
				continue;
			}
			if (c == '"')
				in_str = true;
			braces += c == '{' ? 1 : c == '}' ? -1 : 0;
			brackets += c == '[' ? 1 : c == ']' ? -1 : 0;
			CHECK(braces >= 0);
			CHECK(brackets >= 0);
		}
		CHECK(braces == 0);
		CHECK(brackets == 0);
		CHECK(!in_str);
		CHECK(doc.front() == '{');
		CHECK(doc.substr(doc.size() - 2) == "}\n");
	}

	SECTION("FTQ adds quantum and best")
	{
		node.method = "ftq";
		cpu.quantum_ns = 100000;
		cpu.best = 1234;
		memfile m2;
		REQUIRE(nt_node_noise_write_json(m2.f(), &node) == 0);
		std::string d2 = m2.text();
		CHECK(d2.find("\"quantum_ns\": 100000,") != std::string::npos);
		CHECK(d2.find("\"best\": 1234,") != std::string::npos);
	}

	SECTION("what ran meanwhile: absent unless read")
	{
		CHECK(doc.find("\"meanwhile\"") == std::string::npos);
		cpu.meanwhile.known = true;
		cpu.meanwhile.elapsed_ns = 2000000000;
		cpu.meanwhile.others.run_ns = 81000000;
		cpu.meanwhile.others.count = 2;
		cpu.meanwhile.others.n = 1;
		cpu.meanwhile.others.tasks[0].pid = 4321;
		cpu.meanwhile.others.tasks[0].run_ns = 80000000;
		std::strcpy(cpu.meanwhile.others.tasks[0].comm, "culprit-hog");
		cpu.meanwhile.irq_count = 500;
		cpu.meanwhile.nirqs = 1;
		cpu.meanwhile.irqs[0].count = 500;
		std::strcpy(cpu.meanwhile.irqs[0].name, "LOC");
		std::strcpy(cpu.meanwhile.irqs[0].desc, "Local timer interrupts");
		memfile m2;
		REQUIRE(nt_node_noise_write_json(m2.f(), &node) == 0);
		std::string d2 = m2.text();
		CHECK(d2.find("\"meanwhile\": {") != std::string::npos);
		CHECK(d2.find("\"comm\": \"culprit-hog\"") != std::string::npos);
		CHECK(d2.find("\"kind\": \"process\"") != std::string::npos);
		CHECK(d2.find("\"run_ns\": 80000000") != std::string::npos);
		CHECK(d2.find("\"task_count\": 2") != std::string::npos);
		CHECK(d2.find("\"name\": \"LOC\"") != std::string::npos);
		CHECK(has_key(d2, "softirqs"));

		memfile t;
		REQUIRE(nt_node_noise_write_text(t.f(), &node) == 0);
		std::string text = t.text();
		CHECK(text.find("What else ran on each CPU meanwhile") != std::string::npos);
		CHECK(text.find("culprit-hog (pid 4321) 80.00 ms") != std::string::npos);
		CHECK(text.find("LOC 250/s (Local timer interrupts)") != std::string::npos);
		// The 250 Hz component is the tick, and the LOC line fired at its rate.
		CHECK(text.find("250.0 Hz") != std::string::npos);
		CHECK(text.find("; LOC 250/s") == std::string::npos); // no HZ known here
		CHECK(text.find("  LOC 250/s (Local timer interrupts)\n") != std::string::npos);
	}

	SECTION("a periodic component another task ran in names it")
	{
		cpu.meanwhile.known = true;
		cpu.meanwhile.elapsed_ns = 2000000000;
		cpu.meanwhile.others.n = 2;
		cpu.meanwhile.others.tasks[0] = { 4321, NT_TASK_PROCESS, 229000000, "fifo-ticker" };
		cpu.meanwhile.others.tasks[1] = { 15, NT_TASK_KERNEL, 150000, "rcu_preempt" };
		cpu.sig.periodic[0].freq_hz = 500;
		cpu.sig.periodic[0].total_ns = 2300000;
		cpu.sig.periodic[0].preempted_ns = 2200000;
		memfile t;
		REQUIRE(nt_node_noise_write_text(t.f(), &node) == 0);
		// 2.2 ms of detours against its 229 ms: not within a factor of 2, but the busiest
		// task ran at least that long there (the rest of its detours not periodic).
		CHECK(t.text().find("another task: fifo-ticker (pid 4321), 229.00 ms there") !=
		      std::string::npos);
		// A busiest task that ran less than the component's detours lasted is not named.
		cpu.meanwhile.others.tasks[0].run_ns = 1000000;
		memfile u;
		REQUIRE(nt_node_noise_write_text(u.f(), &node) == 0);
		CHECK(u.text().find("another task ran (preempted)") != std::string::npos);
	}

	SECTION("where the detour time went: another task, periodic interrupts, neither")
	{
		// 5 ms in the 250 Hz component (1 ms of it preempted), 3 ms elsewhere (2 ms preempted);
		// the kernel's HZ unknown, so the component is an interrupt only if a line matches.
		cpu.sig.periodic[0].total_ns = 5000000;
		cpu.sig.periodic[0].preempted_ns = 1000000;
		cpu.sig.other_total_ns = 3000000;
		cpu.sig.other_preempted_ns = 2000000;
		memfile a;
		REQUIRE(nt_node_noise_write_json(a.f(), &node) == 0);
		std::string d1 = one_line(a.text());
		CHECK(d1.find("\"detour_time\": {\"total_ns\": 8000000,\"another_task_ns\": 3000000,"
			      "\"periodic_interrupts_ns\": 0,\"softirqs_ns\": null,\"neither_ns\": 5000000}") !=
		      std::string::npos);
		// LOC fired at 250/s there: the component's unpreempted 4 ms are an interrupt's.
		cpu.meanwhile.known = true;
		cpu.meanwhile.elapsed_ns = 2000000000;
		cpu.meanwhile.nirqs = 1;
		cpu.meanwhile.irqs[0].count = 500;
		std::strcpy(cpu.meanwhile.irqs[0].name, "LOC");
		memfile b;
		REQUIRE(nt_node_noise_write_json(b.f(), &node) == 0);
		std::string d2 = one_line(b.text());
		CHECK(d2.find("\"detour_time\": {\"total_ns\": 8000000,\"another_task_ns\": 3000000,"
			      "\"periodic_interrupts_ns\": 4000000,\"softirqs_ns\": null,\"neither_ns\": 1000000}") !=
		      std::string::npos);
		CHECK(d2.find("\"line\": {\"name\": \"LOC\",\"desc\": \"\",\"per_second\": 250}") !=
		      std::string::npos);
		memfile t;
		REQUIRE(nt_node_noise_write_text(t.f(), &node) == 0);
		CHECK(t.text().find("   3    8.00 ms  38 %, 50 % (LOC), ?, 12 %") != std::string::npos);
		// The kernel's HZ makes a 250 Hz component the tick without any line.
		cpu.meanwhile.known = false;
		node.sys.kernel_hz = 250;
		memfile c;
		REQUIRE(nt_node_noise_write_text(c.f(), &node) == 0);
		CHECK(c.text().find("   3    8.00 ms  38 %, 50 % (the tick), ?, 12 %") != std::string::npos);
	}

	SECTION("softirqs read after each detour: their part, their kinds, a component's note")
	{
		// A 2 kHz component no line matches (4 ms, 3 ms of it with NET_RX), a 250 Hz tick
		// (1 ms, TIMER in all of it: stays the tick's), 5 ms elsewhere: 2 ms preempted, 2 ms
		// with NET_RX (0.5 ms of that with RCU too), 1 ms with nothing.
		node.sys.kernel_hz = 250;
		cpu.softirqs.n = 4;
		const char *names[] = { "HI", "TIMER", "NET_RX", "RCU" };
		for (int k = 0; k < 4; k++)
			std::strcpy(cpu.softirqs.name[k], names[k]);
		cpu.softirq_reads = 900;
		cpu.softirq_read_ns = 2700000;
		cpu.sig.softirqs_read = 890;
		cpu.sig.nperiodic = 2;
		struct nt_periodic *p = &cpu.sig.periodic[0];
		p->freq_hz = 2000;
		p->count = 800;
		p->total_ns = 4000000;
		p->softirq_ns = 3000000;
		p->softirq_kind_ns[2] = 3000000;
		p = &cpu.sig.periodic[1];
		p->freq_hz = 250;
		p->count = 250;
		p->total_ns = 1000000;
		p->softirq_ns = 1000000;
		p->softirq_kind_ns[1] = 1000000;
		cpu.sig.other_total_ns = 5000000;
		cpu.sig.other_preempted_ns = 2000000;
		cpu.sig.other_softirq_ns = 2000000;
		cpu.sig.other_softirq_kind_ns[2] = 2000000;
		cpu.sig.other_softirq_kind_ns[3] = 500000;
		memfile a;
		REQUIRE(nt_node_noise_write_json(a.f(), &node) == 0);
		std::string d = one_line(a.text());
		CHECK(d.find("\"detour_time\": {\"total_ns\": 10000000,\"another_task_ns\": 2000000,"
			     "\"periodic_interrupts_ns\": 1000000,\"softirqs_ns\": 5000000,"
			     "\"softirq_kinds\": [{\"name\": \"NET_RX\",\"ns\": 5000000},"
			     "{\"name\": \"RCU\",\"ns\": 500000}],\"neither_ns\": 2000000}") !=
		      std::string::npos);
		CHECK(d.find("\"softirq_reads\": {\"count\": 900,\"time_ns\": 2700000,"
			     "\"detours_read\": 890,\"kinds\": [\"HI\",\"TIMER\",\"NET_RX\",\"RCU\"]}") !=
		      std::string::npos);
		CHECK(d.find("\"softirq_ns\": 3000000,\"softirq_kinds\": [{\"name\": \"NET_RX\"") !=
		      std::string::npos);
		memfile t;
		REQUIRE(nt_node_noise_write_text(t.f(), &node) == 0);
		std::string text = t.text();
		CHECK(text.find("   3   10.00 ms  20 %, 10 % (the tick), 50 % (NET_RX, RCU), 20 %") !=
		      std::string::npos);
		CHECK(text.find("softirq NET_RX in 75 % of its time") != std::string::npos);
		CHECK(text.find("scheduler tick (CONFIG_HZ); softirq TIMER in 100 % of its time") !=
		      std::string::npos);
	}

	SECTION("NULL arguments give -EINVAL")
	{
		CHECK(nt_node_noise_write_json(nullptr, &node) == -EINVAL);
		CHECK(nt_node_noise_write_json(m.f(), nullptr) == -EINVAL);
	}
}
