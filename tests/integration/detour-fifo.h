// A real periodic preemption for the detour loop: a SCHED_FIFO child on the measured CPU spins
// 100 us every 10 ms and records, for each burst, its own timestamps and what the kernel says
// the measuring thread waited, so that the loop's detours can be judged on ground truth.
#ifndef TESTS_INTEGRATION_DETOUR_FIFO_H
#define TESTS_INTEGRATION_DETOUR_FIFO_H

#include <catch2/catch.hpp>

#include <cinttypes>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <fcntl.h>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#include <noisetool/clock.h>
#include <noisetool/detour.h>
#include <noisetool/noise.h>
#include <noisetool/sysinfo.h>

#include "test-main.h"

namespace fifo {

const long PERIOD_NS = 10 * 1000 * 1000;
const long BURST_NS = 100 * 1000;
const int MAX_BURSTS = 1024;

// One burst, on the shared counter (an invariant TSC: the same in both processes).
struct burst {
	uint64_t due_cyc;        // when its timer expired: the CPU is taken from here on
	uint64_t t0_cyc, t1_cyc; // the child's own spin
	// The measuring thread's schedstat when the burst began: waits completed so far (run
	// delay, ns) and times it was put on the CPU.
	uint64_t delay_ns, arrivals;
	bool stat_ok;
};

// Written by the child, read by the parent after the child has exited.
struct shared {
	volatile int n;
	burst b[MAX_BURSTS];
};

inline long mono_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

inline bool read_schedstat(int fd, uint64_t *delay, uint64_t *arrivals)
{
	char buf[128];
	ssize_t k = pread(fd, buf, sizeof buf - 1, 0);
	if (k <= 0)
		return false;
	buf[k] = 0;
	unsigned long long run, d, c;
	if (std::sscanf(buf, "%llu %llu %llu", &run, &d, &c) != 3)
		return false;
	*delay = d;
	*arrivals = c;
	return true;
}

// Child: SCHED_FIFO on cpu, a 100 us burst every 10 ms for `seconds`, each recorded in sh;
// watches thread `tid` of its parent. Bounded by alarm().
[[noreturn]] inline void child(int cpu, double seconds, int ready_fd, shared *sh, pid_t tid)
{
	alarm((unsigned)seconds + 5);
	char status = 'F';
	sched_param sp{};
	sp.sched_priority = 1;
	char path[64];
	std::snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)tid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (nt_pin_self(cpu) == 0 && sched_setscheduler(0, SCHED_FIFO, &sp) == 0)
		status = 'O';
	if (write(ready_fd, &status, 1) != 1 || status != 'O')
		_exit(1);
	const uint64_t burst_cyc = nt_clock_ns_to_cyc((double)BURST_NS);
	long start = mono_ns(), next = start + PERIOD_NS;
	while (next - start < (long)(seconds * 1e9)) {
		timespec ts{ next / 1000000000L, next % 1000000000L };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
		uint64_t t0 = nt_clock_now_cyc();
		long late_ns = mono_ns() - next;
		burst b{};
		b.t0_cyc = t0;
		b.due_cyc = t0 - nt_clock_ns_to_cyc((double)(late_ns > 0 ? late_ns : 0));
		b.stat_ok = fd >= 0 && read_schedstat(fd, &b.delay_ns, &b.arrivals);
		uint64_t t;
		do
			t = nt_clock_now_cyc();
		while (t - t0 < burst_cyc);
		b.t1_cyc = t;
		int i = sh->n;
		if (i < MAX_BURSTS) {
			sh->b[i] = b;
			sh->n = i + 1;
		}
		next += PERIOD_NS;
	}
	_exit(0);
}

// What one measurement gave, burst by burst.
struct judged {
	std::string notes;      // the first bursts that broke a rule
	size_t bursts = 0;      // bursts wholly inside the loop's run
	size_t contained = 0;   // inside one detour
	size_t long_enough = 0; // in a detour at least as long as the burst
	size_t flagged = 0;     // in a detour flagged preempted
	size_t stat_ok = 0;     // with the thread's schedstat read at their start and the next's
	std::vector<double> alone_err; // seen alone: |detour - CPU time taken| / CPU time taken
	std::vector<double> held_ns;   // the length of the detour that holds each contained burst
	double median_err = 0;
	size_t within = 0;      // seen alone and measured within 10 %
};

struct run {
	nt_detour_result res{};
	shared *sh = nullptr;
	judged j;
	~run()
	{
		nt_detour_result_free(&res);
		if (sh)
			munmap(sh, sizeof *sh);
	}
};

// Measure measure_s seconds on the last CPU of the affinity mask with the child bursting there.
// Exits 77 when a SCHED_FIFO child cannot run here.
inline void measure(double measure_s, run *r)
{
	int cpus[256];
	int n = nt_allowed_cpus(cpus, 256);
	if (n < 1)
		nt_test_skip("no CPU in the affinity mask");
	const int cpu = cpus[n - 1];
	nt_clock_init(); // before the fork: the child reads the same calibrated counter
	void *m = mmap(nullptr, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	REQUIRE(m != MAP_FAILED);
	r->sh = static_cast<shared *>(m);
	r->sh->n = 0;
	const pid_t tid = (pid_t)syscall(SYS_gettid); // the measuring thread is this one

	int pfd[2];
	REQUIRE(pipe(pfd) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		child(cpu, measure_s + 1.0, pfd[1], r->sh, tid);
	}
	child_guard guard(pid);
	close(pfd[1]);
	char status = 0;
	REQUIRE(read(pfd[0], &status, 1) == 1);
	close(pfd[0]);
	if (status != 'O')
		nt_test_skip("cannot run a SCHED_FIFO child here (needs CAP_SYS_NICE)");
	usleep(50 * 1000); // let the child settle into its period

	nt_detour_config cfg{};
	cfg.seconds = measure_s;
	cfg.threshold_ns = 1000;
	cfg.cpu = cpu;
	REQUIRE(nt_detour_measure(&cfg, &r->res) == 0);
	guard.reap();
	REQUIRE(r->res.classified); // the preemption flags are part of what is judged

	// NT_TEST_DUMP=FILE keeps the raw detours for a look when the test fails.
	if (const char *dump = getenv("NT_TEST_DUMP")) {
		if (FILE *f = fopen(dump, "w")) {
			nt_trace_write(f, r->res.detours, r->res.count);
			fclose(f);
		}
	}
}

// A note on a burst that broke a rule, kept for the failure message.
#define FIFO_NOTE(what)                                                                        \
	do {                                                                                   \
		std::ostringstream os_;                                                        \
		os_ << what << "\n";                                                           \
		j.notes += os_.str();                                                          \
	} while (0)

// Judge every burst inside the run against the detour that holds it. A SCHED_FIFO burst always
// takes the CPU from the loop, so each lies whole inside one detour, at least as long, flagged
// preempted, however loaded the CPU.
// A burst was seen alone when the kernel says the thread was put back on the CPU once before
// the next burst, after waiting at most 20 % longer than the burst (the switches around it:
// 7-14 us here): the detour then holds the CPU time the burst took, from its timer's expiry to
// its end (113-135 us here, measured 3-5 us longer: the switch back). Interrupt work and host
// stalls are invisible to the run delay and may still lengthen a few of those (up to 35 %
// seen, ~1 in 15), so their median is what is judged.
inline void judge(run *r)
{
	const nt_detour_result &res = r->res;
	const shared &sh = *r->sh;
	const uint64_t end_cyc = res.start_cyc + nt_clock_ns_to_cyc((double)res.elapsed_ns);
	const uint64_t slack = nt_clock_ns_to_cyc(2000); // ns rounding of the detour bounds
	judged &j = r->j;
	size_t d = 0;
	int reported = 0;
	auto start_of = [&](size_t i) {
		return res.start_cyc + nt_clock_ns_to_cyc((double)res.detours[i].start_ns);
	};
	for (int k = 0; k + 1 < sh.n; k++) {
		const burst &b = sh.b[k], &nb = sh.b[k + 1];
		if (b.t0_cyc < res.start_cyc || b.t1_cyc > end_cyc)
			continue;
		j.bursts++;
		// Detours are sorted by start: the last one starting before the burst.
		while (d + 1 < res.count && start_of(d + 1) <= b.t0_cyc + slack)
			d++;
		if (res.count == 0 || start_of(d) > b.t0_cyc + slack) {
			if (reported++ < 8)
				FIFO_NOTE("burst " << k << " precedes every detour");
			continue;
		}
		const nt_detour &det = res.detours[d];
		const uint64_t e = start_of(d) + nt_clock_ns_to_cyc((double)det.duration_ns);
		const double burst_ns = nt_clock_cyc_to_ns(b.t1_cyc - b.t0_cyc);
		const double dur_ns = (double)det.duration_ns;
		if (e + slack < b.t1_cyc) {
			if (reported++ < 8)
				FIFO_NOTE("burst " << k << " at " << nt_clock_cyc_to_ns(b.t0_cyc - res.start_cyc) / 1e3
							<< " us (" << burst_ns / 1e3 << " us) is not inside the detour at "
							<< det.start_ns / 1e3 << " us of " << dur_ns / 1e3 << " us");
			continue;
		}
		j.contained++;
		j.held_ns.push_back((double)det.duration_ns);
		if (dur_ns + 1000 >= burst_ns)
			j.long_enough++;
		if (det.flags & NT_DETOUR_PREEMPTED)
			j.flagged++;
		if (!b.stat_ok || !nb.stat_ok)
			continue;
		j.stat_ok++;
		const double waited_ns = (double)(nb.delay_ns - b.delay_ns);
		if (nb.arrivals - b.arrivals != 1 || waited_ns > 1.2 * burst_ns)
			continue;
		const double taken_ns = nt_clock_cyc_to_ns(b.t1_cyc - b.due_cyc);
		const double err = std::fabs(dur_ns - taken_ns) / taken_ns;
		j.alone_err.push_back(err);
		if (err <= 0.10)
			j.within++;
		else if (reported++ < 8)
			FIFO_NOTE("burst " << k << " seen alone (the thread waited " << waited_ns / 1e3
					   << " us) took " << taken_ns / 1e3 << " us from its timer, measured "
					   << dur_ns / 1e3 << " us");
	}
	std::vector<double> sorted = j.alone_err;
	std::sort(sorted.begin(), sorted.end());
	j.median_err = sorted.empty() ? 0 : sorted[sorted.size() / 2];
	std::printf("SCHED_FIFO 100 us every 10 ms: %zu bursts in the run, %zu inside a detour, %zu "
		    "flagged preempted; %zu seen alone, median error %.1f %%, %zu within 10 %%; run "
		    "delay %.1f ms of %.1f ms\n",
		    j.bursts, j.contained, j.flagged, j.alone_err.size(), j.median_err * 100,
		    j.within, (double)res.os.run_delay_ns / 1e6, (double)res.elapsed_ns / 1e6);
}

#define FIFO_CHECK(ok, expr)                                                                   \
	do {                                                                                   \
		(ok) = (ok) && static_cast<bool>(expr);                                        \
		CHECK(expr);                                                                   \
	} while (0)

// Fewer bursts seen alone than this and their accuracy is not judged.
const size_t MIN_ALONE = 10;

// The checks that hold however loaded the CPU. True when all passed.
inline bool check_bursts(const run &r)
{
	const judged &j = r.j;
	INFO("bursts " << j.bursts << ", contained " << j.contained << ", at least as long "
		       << j.long_enough << ", flagged " << j.flagged << ", schedstat read "
		       << j.stat_ok << ", seen alone " << j.alone_err.size() << ", within 10 % "
		       << j.within << "\n"
		       << j.notes);
	const double expected = (double)r.res.elapsed_ns / (double)PERIOD_NS;
	bool ok = true;
	// The child kept its period through the loop (a late wake-up runs the missed bursts at
	// once, so only the two ends of the run can lose one): not a vacuous pass.
	FIFO_CHECK(ok, (double)j.bursts >= expected - 3);
	FIFO_CHECK(ok, j.contained == j.bursts);
	FIFO_CHECK(ok, j.long_enough == j.bursts);
	FIFO_CHECK(ok, j.flagged == j.bursts);
	// Each detour flagged preempted needs the thread put back on the CPU once more.
	size_t flagged_all = 0;
	for (size_t i = 0; i < r.res.count; i++)
		flagged_all += (r.res.detours[i].flags & NT_DETOUR_PREEMPTED) != 0;
	FIFO_CHECK(ok, flagged_all <= r.res.os.run_count_delta);
	FIFO_CHECK(ok, j.stat_ok == j.bursts);
	if (j.alone_err.size() >= MIN_ALONE)
		FIFO_CHECK(ok, j.median_err <= 0.10);
	else
		std::printf("accuracy not judged: %zu bursts seen alone\n", j.alone_err.size());
	return ok;
}

} // namespace fifo

#endif
