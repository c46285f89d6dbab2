// What else ran on a CPU meanwhile (libnoisetool/meanwhile.c, tasks.c, irqlines.c), read from a
// made-up /proc tree: the interrupt and softirq tables (offline CPUs, short lines, devices, a
// set of CPUs summed a line at a time), the tasks (names with spaces and parentheses, kernel
// threads, threads summed into their process, tasks born meanwhile, this process left out),
// the rate match of periodic components, and one CPU's softirq column read after each detour
// (softirqcol.c).
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include <noisetool-private/irqlines.h>
#include <noisetool-private/meanwhile.h>
#include <noisetool-private/softirqcol.h>
#include <noisetool-private/tasks.h>

#include "tempdir.h"

namespace {

// A task's stat line: processor (field 39) and flags (field 9) where the kernel puts them.
std::string stat_line(int tid, const std::string &comm, unsigned flags, int cpu)
{
	std::string s = std::to_string(tid) + " (" + comm + ") S 1 1 1 0 -1 " + std::to_string(flags);
	for (int field = 10; field < 39; field++)
		s += " 0";
	return s + " " + std::to_string(cpu) + " 0 0 0 0 0\n";
}

void task(const tempdir &root, int pid, int tid, const std::string &comm, unsigned flags, int cpu,
	  unsigned long long run_ns)
{
	std::string dir = root / std::to_string(pid);
	mkdir(dir.c_str(), 0755);
	dir += "/task";
	mkdir(dir.c_str(), 0755);
	dir += "/" + std::to_string(tid);
	mkdir(dir.c_str(), 0755);
	spit(dir + "/stat", stat_line(tid, comm, flags, cpu));
	spit(dir + "/schedstat", std::to_string(run_ns) + " 5 7\n");
}

void counters(const tempdir &root, unsigned long long loc3, unsigned long long dev3,
	      unsigned long long timer3)
{
	// CPU 2 is offline: no column. ERR has one count (not per CPU) and is left out.
	spit(root / "interrupts",
	     "           CPU0       CPU1       CPU3\n"
	     " 36:          0          9   " + std::to_string(dev3) +
		     "   PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
	     "NMI:          0          0          0   Non-maskable interrupts\n"
	     "LOC:         10         20   " + std::to_string(loc3) + "   Local timer interrupts\n"
	     "ERR:          0\n");
	spit(root / "softirqs",
	     "                    CPU0       CPU1       CPU3\n"
	     "          HI:          0          0          0\n"
	     "       TIMER:          1          2   " + std::to_string(timer3) + "\n");
}

const struct nt_task_use *find(const struct nt_task_top &top, int pid)
{
	for (size_t i = 0; i < top.n; i++)
		if (top.tasks[i].pid == pid)
			return &top.tasks[i];
	return nullptr;
}

} // namespace

TEST_CASE("nt_meanwhile_finish", "[meanwhile]")
{
	tempdir root;
	REQUIRE(!root.path().empty());
	const pid_t self = 4242;
	counters(root, 1000, 50, 300);
	task(root, 100, 100, "culprit (hog) x", 0, 3, 1000000);  // a process, two threads on CPU 3
	task(root, 100, 101, "worker", 0, 3, 500000);
	task(root, 2, 2, "kworker/3:1", 0x00200000u, 3, 10000);  // a kernel thread
	task(root, 200, 200, "elsewhere", 0, 1, 0);             // on another CPU
	task(root, self, self, "noisetool", 0, 3, 0);             // the measuring process
	task(root, 300, 300, "idle", 0, 3, 777);                  // did not run meanwhile
	struct nt_meanwhile_snap *a = nullptr;
	REQUIRE(nt_meanwhile_snap_take(root.path().c_str(), &a) == 0);
	CHECK(nt_meanwhile_snap_tasks(a) == 6);

	counters(root, 1250, 60, 400);
	task(root, 100, 100, "culprit (hog) x", 0, 3, 81000000); // +80 ms
	task(root, 100, 101, "worker", 0, 3, 2500000);            // +2 ms
	task(root, 2, 2, "kworker/3:1", 0x00200000u, 3, 1010000); // +1 ms
	task(root, 200, 200, "elsewhere", 0, 1, 9000000);
	task(root, self, self, "noisetool", 0, 3, 900000000);
	task(root, 400, 400, "newborn\x01", 0, 3, 3000000);      // born meanwhile: 3 ms

	const int cpus[] = { 3, 1, 2, -1 };
	struct nt_cpu_meanwhile m[4];
	REQUIRE(nt_meanwhile_finish(root.path().c_str(), a, cpus, 4, self, getuid(), m) == 0);
	const struct nt_task_top &top = m[0].others;
	CHECK(m[0].known);

	SECTION("the processes that ran there, threads summed, busiest first")
	{
		REQUIRE(top.n == 3);
		CHECK(top.count == 3);
		CHECK(top.tasks[0].pid == 100);
		CHECK(top.tasks[0].run_ns == 82000000);
		CHECK(std::string(top.tasks[0].comm) == "culprit (hog) x"); // the busiest thread's
		CHECK(top.tasks[0].kind == NT_TASK_PROCESS);
		CHECK(top.tasks[1].pid == 400);
		CHECK(top.tasks[1].run_ns == 3000000);
		CHECK(std::string(top.tasks[1].comm) == "newborn?"); // printable ASCII only
		CHECK(top.tasks[2].pid == 2);
		CHECK(top.tasks[2].kind == NT_TASK_KERNEL);
		CHECK(top.run_ns == 86000000);
		CHECK(find(top, self) == nullptr);
		CHECK(find(top, 200) == nullptr);
		CHECK(find(top, 300) == nullptr);
	}

	SECTION("each CPU its own")
	{
		CHECK(m[1].known);
		REQUIRE(m[1].others.n == 1);
		CHECK(m[1].others.tasks[0].pid == 200);
		CHECK(m[1].others.tasks[0].run_ns == 9000000);
		CHECK(m[2].known); // tasks were read, though no table counts CPU 2 (offline)
		CHECK(m[2].nirqs == 0);
		CHECK(m[2].others.n == 0);
		CHECK(!m[3].known); // not pinned
	}

	SECTION("another user's processes")
	{
		struct nt_cpu_meanwhile o;
		REQUIRE(nt_meanwhile_finish(root.path().c_str(), a, cpus, 1, self, getuid() + 1, &o) == 0);
		CHECK(o.others.tasks[0].kind == NT_TASK_OTHER_USER);
		CHECK(o.others.tasks[2].kind == NT_TASK_KERNEL);
		CHECK(std::string(nt_task_kind_name(NT_TASK_OTHER_USER)) == "another user's");
	}

	SECTION("interrupt lines and softirq kinds counted on the CPU")
	{
		CHECK(m[0].irq_count == 260);
		REQUIRE(m[0].nirqs == 2);
		CHECK(std::string(m[0].irqs[0].name) == "LOC");
		CHECK(m[0].irqs[0].count == 250);
		CHECK(std::string(m[0].irqs[0].desc) == "Local timer interrupts");
		CHECK(std::string(m[0].irqs[1].name) == "36");
		CHECK(std::string(m[0].irqs[1].desc) == "virtio1-req.0"); // a numbered line's device
		CHECK(m[0].softirq_count == 100);
		REQUIRE(m[0].nsoftirqs == 1);
		CHECK(std::string(m[0].softirqs[0].name) == "TIMER");
	}

	SECTION("bad arguments")
	{
		CHECK(nt_meanwhile_finish(nullptr, nullptr, cpus, 1, self, getuid(), m) == -EINVAL);
		CHECK(!m[0].known);
		CHECK(nt_meanwhile_finish(nullptr, a, cpus, 1, self, getuid(), nullptr) == -EINVAL);
		CHECK(nt_meanwhile_finish(nullptr, a, nullptr, 1, self, getuid(), m) == -EINVAL);
		CHECK(nt_meanwhile_snap_take(root.path().c_str(), nullptr) == -EINVAL);
	}
	nt_meanwhile_snap_free(a);
}

TEST_CASE("nt_tasks_ran_on: a first reading that was full", "[meanwhile]")
{
	tempdir root;
	REQUIRE(!root.path().empty());
	task(root, 10, 10, "old", 0, 0, 1000);
	task(root, 20, 20, "older", 0, 0, 1000);
	struct nt_task_time before[1];
	size_t n = 0, more = 0;
	REQUIRE(nt_tasks_times(root.path().c_str(), before, 1, &n, &more) == 0);
	CHECK(n == 1);
	CHECK(more == 1);
	task(root, 10, 10, "old", 0, 0, 5000);
	task(root, 20, 20, "older", 0, 0, 5000);
	const int slot_of_cpu[] = { 0 };
	struct nt_task_top top;
	// The thread left out of the first reading is not counted whole: only the one followed.
	REQUIRE(nt_tasks_ran_on(root.path().c_str(), before, n, more == 0, slot_of_cpu, 1, 1, getuid(),
				&top, 1) == 0);
	REQUIRE(top.n == 1);
	CHECK(top.tasks[0].pid == before[0].pid);
	CHECK(top.tasks[0].run_ns == 4000);
	CHECK(nt_tasks_times(root.path().c_str(), nullptr, 1, &n, &more) == -EINVAL);
	CHECK(nt_tasks_times("/nonexistent-nt-proc", before, 1, &n, &more) == -ENOENT);
}

TEST_CASE("nt_meanwhile_snap_take on a missing tree", "[meanwhile]")
{
	struct nt_meanwhile_snap *a = nullptr;
	REQUIRE(nt_meanwhile_snap_take("/nonexistent-nt-proc", &a) == 0);
	CHECK(nt_meanwhile_snap_tasks(a) == 0);
	const int cpus[] = { 0 };
	struct nt_cpu_meanwhile m;
	CHECK(nt_meanwhile_finish("/nonexistent-nt-proc", a, cpus, 1, 1, 0, &m) == 0);
	CHECK(!m.known); // nothing was read
	nt_meanwhile_snap_free(a);
}

TEST_CASE("nt_meanwhile_snap_take on this machine", "[meanwhile]")
{
	struct nt_meanwhile_snap *a = nullptr;
	REQUIRE(nt_meanwhile_snap_take(nullptr, &a) == 0);
	CHECK(nt_meanwhile_snap_tasks(a) >= 1); // this test's own thread at least
	nt_meanwhile_snap_free(a);
}

TEST_CASE("nt_meanwhile_rate_match", "[meanwhile]")
{
	struct nt_cpu_meanwhile m;
	std::memset(&m, 0, sizeof m);
	m.known = true;
	m.elapsed_ns = 2000000000;
	m.nirqs = 2;
	std::strcpy(m.irqs[0].name, "LOC");
	m.irqs[0].count = 500; // 250/s
	std::strcpy(m.irqs[1].name, "36");
	m.irqs[1].count = 205; // 102.5/s
	m.nsoftirqs = 1;
	std::strcpy(m.softirqs[0].name, "TIMER");
	m.softirqs[0].count = 498; // 249/s: LOC has more counts

	const struct nt_count_use *u = nt_meanwhile_rate_match(&m, 250.0);
	REQUIRE(u != nullptr);
	CHECK(std::string(u->name) == "LOC");
	u = nt_meanwhile_rate_match(&m, 100.0);
	REQUIRE(u != nullptr); // within 3 %
	CHECK(std::string(u->name) == "36");
	CHECK(nt_meanwhile_rate_match(&m, 1000.0) == nullptr);
	CHECK(nt_meanwhile_rate_match(&m, 0.0) == nullptr);
	m.known = false;
	CHECK(nt_meanwhile_rate_match(&m, 250.0) == nullptr);
	CHECK(nt_meanwhile_rate_match(nullptr, 250.0) == nullptr);
}

TEST_CASE("nt_irq_read_set: each line summed over a set of CPUs, a line at a time", "[meanwhile]")
{
	tempdir root;
	REQUIRE(!root.path().empty());
	counters(root, 1000, 50, 300); // columns CPU0, CPU1, CPU3
	bool in_set[4] = { false, true, false, true };
	struct nt_irq_count out[8];
	size_t n = 0;
	REQUIRE(nt_irq_read_set((root / "interrupts").c_str(), in_set, 4, out, 8, &n) == 0);
	REQUIRE(n == 3); // 36, NMI, LOC: ERR has no column per CPU
	CHECK(std::string(out[0].name) == "36");
	CHECK(std::string(out[0].desc) == "virtio1-req.0");
	CHECK(out[0].count == 9 + 50);
	CHECK(std::string(out[2].name) == "LOC");
	CHECK(out[2].count == 20 + 1000);
	CHECK(std::string(out[2].desc) == "Local timer interrupts");
	REQUIRE(nt_irq_read_set((root / "softirqs").c_str(), in_set, 4, out, 1, &n) == 0);
	CHECK(n == 1); // room for one: HI
	CHECK(std::string(out[0].name) == "HI");
	CHECK(nt_irq_read_set((root / "missing").c_str(), in_set, 4, out, 8, &n) == -ENOENT);
	CHECK(nt_irq_read_set(nullptr, in_set, 4, out, 8, &n) == -EINVAL);
}

TEST_CASE("nt_softirq_col: one CPU's softirq kinds that ran between two readings", "[meanwhile]")
{
	tempdir root;
	const std::string path = root / "softirqs";
	const char *first = "                    CPU0       CPU2\n"
			    "          HI:          0          1\n"
			    "       TIMER:     100000         50\n"
			    "      NET_RX:         10       7000\n"
			    "       SCHED:          5          9\n";
	spit(path, first);
	struct nt_softirq_col s;

	SECTION("the column of a CPU, the kinds in the file's order, the kinds that moved")
	{
		REQUIRE(nt_softirq_col_open(&s, path.c_str(), 2) == 0);
		CHECK(s.col == 1);
		REQUIRE(s.kinds.n == 4);
		CHECK(std::string(s.kinds.name[0]) == "HI");
		CHECK(std::string(s.kinds.name[2]) == "NET_RX");
		uint32_t moved = 99;
		REQUIRE(nt_softirq_col_read(&s, &moved) == 0);
		CHECK(moved == 0);
		// CPU0's counts and a count that grew by a digit: only CPU2's NET_RX and SCHED moved.
		spit(path, "                    CPU0       CPU2\n"
			   "          HI:          7          1\n"
			   "       TIMER:     100900         50\n"
			   "      NET_RX:         10      10001\n"
			   "       SCHED:          5         10\n");
		REQUIRE(nt_softirq_col_read(&s, &moved) == 0);
		CHECK(moved == ((1u << 2) | (1u << 3)));
		REQUIRE(nt_softirq_col_read(&s, &moved) == 0);
		CHECK(moved == 0);
		nt_softirq_col_close(&s);
		CHECK(s.fd == -1);
	}
	SECTION("a file of another shape: an error, no bits")
	{
		REQUIRE(nt_softirq_col_open(&s, path.c_str(), 0) == 0);
		uint32_t moved = 99;
		spit(path, "                    CPU0       CPU2\n"
			   "          HI:          0          1\n"
			   "       TIMER:     100000         50\n"
			   "      NET_TX:         10       7000\n"
			   "       SCHED:          5          9\n");
		CHECK(nt_softirq_col_read(&s, &moved) == -EIO);
		CHECK(moved == 0);
		spit(path, "                    CPU0       CPU2\n"
			   "          HI:          0          1\n");
		CHECK(nt_softirq_col_read(&s, &moved) == -EIO);
		spit(path, "                    CPU0       CPU2\n"
			   "          HI:\n"
			   "       TIMER:     100000         50\n"
			   "      NET_RX:         10       7000\n"
			   "       SCHED:          5          9\n");
		CHECK(nt_softirq_col_read(&s, &moved) == -EIO); // no count in its column
		nt_softirq_col_close(&s);
	}
	SECTION("a CPU the file has no column for, a missing file, no CPU")
	{
		CHECK(nt_softirq_col_open(&s, path.c_str(), 1) == -ENOENT);
		CHECK(s.fd == -1);
		nt_softirq_col_close(&s); // harmless after a failed open
		CHECK(nt_softirq_col_open(&s, (root / "none").c_str(), 0) == -ENOENT);
		CHECK(nt_softirq_col_open(&s, path.c_str(), -1) == -EINVAL);
		spit(path, "                    CPU0       CPU2\n");
		CHECK(nt_softirq_col_open(&s, path.c_str(), 0) == -ENOENT);
	}
	SECTION("this machine's file, when it has one")
	{
		if (access("/proc/softirqs", R_OK) != 0)
			return;
		REQUIRE(nt_softirq_col_open(&s, nullptr, 0) == 0);
		CHECK(s.kinds.n >= 8);
		uint32_t moved;
		for (int i = 0; i < 100; i++)
			REQUIRE(nt_softirq_col_read(&s, &moved) == 0);
		nt_softirq_col_close(&s);
	}
}
