// The injector: spec parsing (every key, every error), its bounds (the period floor, the duty,
// a trace's average of both; ranks a job does not have), and real injection into this thread,
// judged by the thread's own loop: each detour the injector accounts must be a gap in that loop
// at least as long as what it says it spun plus the time it says the thread was off the CPU
// inside it, and those two together at least the detour it was asked for.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <noisetool/clock.h>
#include <noisetool/inject.h>
#include <noisetool/sysinfo.h>

static int parse(const char *s, nt_inject_spec *out, std::string *why = nullptr)
{
	char err[256] = "";
	int rc = nt_inject_parse(s, out, err, sizeof err);
	if (why)
		*why = err;
	return rc;
}

TEST_CASE("inject spec parsing")
{
	nt_inject_spec s;
	SECTION("the issue's example")
	{
		REQUIRE(parse("period=10ms,detour=100us,mode=sync,ranks=1,3,seed=42", &s) == 0);
		CHECK(s.period_ns == 10000000);
		CHECK(s.detour_ns == 100000);
		CHECK(s.mode == NT_INJECT_SYNC);
		CHECK(s.seed == 42);
		CHECK_FALSE(s.all_ranks);
		REQUIRE(s.nranks == 2);
		CHECK(nt_inject_targets(&s, 1));
		CHECK(nt_inject_targets(&s, 3));
		CHECK_FALSE(nt_inject_targets(&s, 0));
		CHECK_FALSE(nt_inject_targets(&s, 2));
	}
	SECTION("defaults, units and ranges")
	{
		REQUIRE(parse("detour=200,period=5ms", &s) == 0);
		CHECK(s.detour_ns == 200000); // a bare number is us
		CHECK(s.mode == NT_INJECT_UNSYNC);
		CHECK(s.all_ranks);
		CHECK(nt_inject_targets(&s, 77));
		REQUIRE(parse("period=1s,detour=2.5ms,ranks=8-11,0", &s) == 0);
		CHECK(s.period_ns == 1000000000);
		CHECK(s.detour_ns == 2500000);
		CHECK(s.nranks == 5);
		CHECK(nt_inject_targets(&s, 10));
		REQUIRE(parse("trace=/tmp/x.trace,ranks=1", &s) == 0);
		CHECK(std::string(s.trace) == "/tmp/x.trace");
	}
	SECTION("bad specs name the problem")
	{
		std::string why;
		CHECK(parse("period=10ms", &s, &why) == -EINVAL);
		CHECK(why.find("detour=") != std::string::npos);
		CHECK(parse("period=10ms,detour=20ms", &s, &why) == -EINVAL);
		CHECK(why.find("shorter") != std::string::npos);
		CHECK(parse("period=10xs,detour=1us", &s, &why) == -EINVAL);
		CHECK(why.find("period=10xs") != std::string::npos);
		CHECK(parse("period=10ms,detour=1us,mode=often", &s, &why) == -EINVAL);
		CHECK(why.find("sync or unsync") != std::string::npos);
		CHECK(parse("period=10ms,detour=1us,colour=red", &s, &why) == -EINVAL);
		CHECK(why.find("unknown key") != std::string::npos);
		CHECK(parse("period=10ms,detour=1us,ranks=3-1", &s, &why) == -EINVAL);
		CHECK(parse("period=10ms,detour=1us,", &s, &why) == -EINVAL);
		CHECK(parse("period=-1ms,detour=1us", &s, &why) == -EINVAL);
		CHECK(parse("period=0,detour=1us", &s, &why) == -EINVAL);
		CHECK(parse("10ms", &s, &why) == -EINVAL);
		CHECK(parse("period=10ms,detour=1us,seed=x", &s, &why) == -EINVAL);
	}
}

// A trace file of start_ns<TAB>duration_ns lines, removed at the end of the scope.
struct trace_file {
	char path[32] = "/tmp/nt-inject-XXXXXX";
	explicit trace_file(const std::vector<std::pair<uint64_t, uint64_t>> &detours)
	{
		int fd = mkstemp(path);
		REQUIRE(fd >= 0);
		FILE *f = fdopen(fd, "w");
		for (const auto &d : detours)
			std::fprintf(f, "%llu\t%llu\n", (unsigned long long)d.first,
				     (unsigned long long)d.second);
		std::fclose(f);
	}
	~trace_file() { std::remove(path); }
	std::string spec() const { return std::string("trace=") + path; }
};

// Start s; when that succeeds (it should not), stop at once: a bad spec let through must not
// hang the test, and these specs are chosen to leave the thread most of its time anyway.
static int start_refused(const nt_inject_spec &s, std::string *why)
{
	char err[512] = "";
	int rc = nt_inject_start(&s, 0, 0, err, sizeof err);
	nt_inject_stop();
	*why = err;
	return rc;
}

TEST_CASE("inject bounds: the period floor and the duty")
{
	nt_clock_init();
	nt_inject_spec s;
	std::string why;
	SECTION("a period below the floor is refused with the floor and why")
	{
		CHECK(NT_INJECT_MIN_PERIOD_NS == 1000000u);
		// The examples: the job never finished.
		CHECK(parse("period=10us,detour=9us", &s, &why) == -EINVAL);
		INFO(why);
		CHECK(why.find("'period=10us,detour=9us'") != std::string::npos);
		CHECK(why.find("at least 1 ms") != std::string::npos);
		CHECK(why.find("signal") != std::string::npos);
		CHECK(parse("period=2ns,detour=1ns", &s, &why) == -EINVAL);
		CHECK(why.find("at least 1 ms") != std::string::npos);
		CHECK(parse("period=999999ns,detour=1us", &s, &why) == -EINVAL);
		CHECK(why.find("at least 1 ms") != std::string::npos);
	}
	SECTION("the floor itself and longer periods are accepted")
	{
		REQUIRE(parse("period=1ms,detour=1us", &s, &why) == 0);
		CHECK(s.period_ns == NT_INJECT_MIN_PERIOD_NS);
		CHECK(parse("period=1000000ns,detour=1ns", &s, &why) == 0);
		CHECK(parse("detour=100,period=1000", &s, &why) == 0); // bare numbers: us
		CHECK(parse("period=1s,detour=100ms,mode=sync", &s, &why) == 0);
	}
	SECTION("a detour as long as the period or longer is refused")
	{
		CHECK(parse("period=10ms,detour=10ms", &s, &why) == -EINVAL);
		CHECK(why.find("shorter than the period") != std::string::npos);
		CHECK(parse("period=10ms,detour=20ms", &s, &why) == -EINVAL);
		CHECK(why.find("shorter than the period") != std::string::npos);
	}
	SECTION("a detour above 90 % of the period is refused, 90 % accepted")
	{
		CHECK(NT_INJECT_MAX_DUTY_PCT == 90u);
		CHECK(parse("period=10ms,detour=9001us", &s, &why) == -EINVAL);
		INFO(why);
		CHECK(why.find("at most 90 % of the period (9 ms)") != std::string::npos);
		CHECK(parse("period=1ms,detour=990us", &s, &why) == -EINVAL);
		CHECK(why.find("900 us") != std::string::npos);
		CHECK(parse("period=10ms,detour=9ms", &s, &why) == 0);
		CHECK(parse("period=1ms,detour=900us", &s, &why) == 0);
		CHECK(parse("period=1000001ns,detour=900000ns", &s, &why) == 0);
	}
	SECTION("nt_inject_start holds a spec built by hand to the same bounds")
	{
		nt_inject_spec h = {};
		h.all_ranks = true;
		h.period_ns = 500000; // below the floor (a mistake let through would cost ~4 %)
		h.detour_ns = 1000;
		CHECK(start_refused(h, &why) == -EINVAL);
		CHECK(why.find("'period=500 us,detour=1 us'") != std::string::npos);
		CHECK(why.find("at least 1 ms") != std::string::npos);
		h.period_ns = 10000000;
		h.detour_ns = 9500000; // 95 %
		CHECK(start_refused(h, &why) == -EINVAL);
		CHECK(why.find("at most 90 %") != std::string::npos);
		h.detour_ns = 0;
		CHECK(start_refused(h, &why) == -EINVAL);
		CHECK(nt_inject_start(nullptr, 0, 0, nullptr, 0) == -EINVAL);
	}
	SECTION("a trace: detours closer than the floor on average are refused")
	{
		// Ten 10 us detours 100 us apart: replayed every ~1 ms, one every ~100 us.
		std::vector<std::pair<uint64_t, uint64_t>> d;
		for (uint64_t i = 0; i < 10; i++)
			d.push_back({ 1000000 + i * 100000, 10000 });
		trace_file t(d);
		REQUIRE(parse(t.spec().c_str(), &s) == 0); // the file is read at the start
		CHECK(start_refused(s, &why) == -EINVAL);
		INFO(why);
		CHECK(why.find(t.path) != std::string::npos);
		CHECK(why.find("at least 1 ms between detours on average") != std::string::npos);
	}
	SECTION("a trace: detours over 90 % of a replay are refused")
	{
		// Ten back-to-back 10 ms detours: 100 ms busy in a 110 ms replay (91 %).
		std::vector<std::pair<uint64_t, uint64_t>> d;
		for (uint64_t i = 0; i < 10; i++)
			d.push_back({ i * 10000000, 10000000 });
		trace_file t(d);
		REQUIRE(parse(t.spec().c_str(), &s) == 0);
		CHECK(start_refused(s, &why) == -EINVAL);
		INFO(why);
		CHECK(why.find("at most 90 %") != std::string::npos);
	}
	SECTION("a trace: a burst closer than the floor is replayed when the average is not")
	{
		// Two 10 us detours 50 us apart, then one 19 ms later: one every ~8 ms on average.
		trace_file t({ { 1000000, 10000 }, { 1050000, 10000 }, { 20000000, 10000 } });
		REQUIRE(parse(t.spec().c_str(), &s) == 0);
		CHECK(start_refused(s, &why) == 0);
		CHECK(why.empty());
	}
}

TEST_CASE("inject ranks a job does not have")
{
	nt_inject_spec s;
	char why[256];
	SECTION("the issue's example: ranks=5 in a 2-rank job")
	{
		REQUIRE(parse("period=10ms,detour=100us,ranks=5", &s) == 0);
		CHECK(nt_inject_check_ranks(&s, 2, why, sizeof why) == 1);
		CHECK(std::string(why) == "ranks=5 names ranks that do not exist in this 2-rank job: 5");
		CHECK_FALSE(nt_inject_any_target(&s, 2));
		CHECK(nt_inject_check_ranks(&s, 6, why, sizeof why) == 0);
		CHECK(std::string(why).empty());
		CHECK(nt_inject_any_target(&s, 6));
	}
	SECTION("some exist, some do not: each missing rank counted once, as ranges")
	{
		REQUIRE(parse("period=10ms,detour=100us,ranks=5-7,1,0,6,9", &s) == 0);
		CHECK(nt_inject_check_ranks(&s, 2, why, sizeof why) == 4);
		CHECK(std::string(why) ==
		      "ranks=0-1,5-7,9 names ranks that do not exist in this 2-rank job: 5-7,9");
		CHECK(nt_inject_any_target(&s, 2));
		CHECK(nt_inject_check_ranks(&s, 1, why, sizeof why) == 5);
		CHECK(nt_inject_any_target(&s, 1));
		REQUIRE(parse("period=10ms,detour=100us,ranks=0-255", &s) == 0);
		CHECK(nt_inject_check_ranks(&s, 4, why, sizeof why) == 252);
		CHECK(std::string(why).find("job: 4-255") != std::string::npos);
	}
	SECTION("every rank, and no ranks= given, always exist")
	{
		REQUIRE(parse("period=10ms,detour=100us,ranks=0,1", &s) == 0);
		CHECK(nt_inject_check_ranks(&s, 2, why, sizeof why) == 0);
		CHECK(std::string(why).empty());
		REQUIRE(parse("period=10ms,detour=100us", &s) == 0);
		CHECK(nt_inject_check_ranks(&s, 1, why, sizeof why) == 0);
		CHECK(nt_inject_any_target(&s, 1));
		CHECK(nt_inject_check_ranks(&s, 1, nullptr, 0) == 0);
	}
	SECTION("bad arguments")
	{
		REQUIRE(parse("period=10ms,detour=100us,ranks=3", &s) == 0);
		CHECK(nt_inject_check_ranks(nullptr, 2, why, sizeof why) == -EINVAL);
		CHECK(nt_inject_check_ranks(&s, 0, why, sizeof why) == -EINVAL);
		CHECK_FALSE(nt_inject_any_target(nullptr, 2));
		CHECK_FALSE(nt_inject_any_target(&s, 0));
		CHECK(nt_inject_check_ranks(&s, 2, nullptr, 0) == 1); // the count without a reason
	}
}

namespace {

// One interruption of the observing loop (counter values) and what the injector accounted
// inside it: detours, spun cycles and cycles off the CPU inside them.
struct gap {
	uint64_t from_cyc, to_cyc;
	uint64_t count, spun_cyc, lost_cyc;
};

// The loop sees any interruption above this as a gap. Injected detours are 50 us or more; a
// tick or an interrupt may be a gap too, with nothing injected in it.
const double GAP_NS = 10e3;

// Read the injector's count and spun cycles at a moment the loop was not interrupted: re-read
// until the reads took no gap, so that a detour accounted between them lies inside the gap
// that ends at *cur (which moves to the end of the reads).
void clean_read(uint64_t *cur, uint64_t thr_cyc, uint64_t *count, uint64_t *spun, uint64_t *lost)
{
	for (;;) {
		*count = nt_inject_count();
		*spun = nt_inject_spun_cyc();
		*lost = nt_inject_lost_cyc();
		uint64_t t = nt_clock_now_cyc();
		bool clean = t - *cur <= thr_cyc;
		*cur = t;
		if (clean)
			return;
	}
}

// What the thread's own loop saw.
struct observation {
	std::vector<gap> gaps;
	uint64_t begin_cyc, end_cyc;
	uint64_t count0; // the injector's count at the beginning
};

// Spin reading the counter for wall_ns, recording every gap with the injector's accounting
// inside it. The injector's handler runs on this thread, so whatever it spins falls in a gap.
void observe(uint64_t wall_ns, observation *o)
{
	const uint64_t thr = nt_clock_ns_to_cyc(GAP_NS);
	o->gaps.reserve(200000); // no allocation inside the loop (a gap every ~1 us at worst)
	uint64_t cur = nt_clock_now_cyc(), n_last, s_last, l_last;
	clean_read(&cur, thr, &n_last, &s_last, &l_last);
	o->count0 = n_last;
	o->begin_cyc = cur;
	const uint64_t end = cur + nt_clock_ns_to_cyc((double)wall_ns);
	while (cur < end && o->gaps.size() < o->gaps.capacity()) {
		uint64_t prev = cur;
		cur = nt_clock_now_cyc();
		if (cur - prev <= thr)
			continue;
		uint64_t n, sp, lo;
		clean_read(&cur, thr, &n, &sp, &lo);
		o->gaps.push_back({ prev, cur, n - n_last, sp - s_last, lo - l_last });
		n_last = n;
		s_last = sp;
		l_last = lo;
	}
	o->end_cyc = cur;
}

// The run on one CPU of the affinity mask (the loop and the timer on one counter), restored at
// the end.
struct pinned {
	cpu_set_t old;
	pinned()
	{
		REQUIRE(sched_getaffinity(0, sizeof old, &old) == 0);
		int cpus[256];
		int n = nt_allowed_cpus(cpus, 256);
		REQUIRE(n >= 1);
		REQUIRE(nt_pin_self(cpus[n - 1]) == 0);
	}
	~pinned() { sched_setaffinity(0, sizeof old, &old); }
};

// What every injection must satisfy, whatever else ran: its gap holds its whole wall time (the
// handler spins on this thread), which is what it spun plus the time the thread was off the CPU
// inside it, and that wall time is at least the detour lengths it was due (len_cyc(k) for the
// k-th detour since the start; k0 of them came before the observation). Returns the detours
// seen in gaps.
template <typename Len>
uint64_t check_gaps(const std::vector<gap> &gaps, uint64_t k0, Len len_cyc)
{
	uint64_t k = k0, bad_gap = 0, bad_len = 0;
	std::ostringstream notes;
	for (const gap &g : gaps) {
		if (g.count == 0) {
			if (g.spun_cyc != 0 || g.lost_cyc != 0)
				bad_len++; // spun without a detour
			continue;
		}
		const uint64_t wall = g.spun_cyc + g.lost_cyc;
		uint64_t due = 0;
		for (uint64_t j = 0; j < g.count; j++)
			due += len_cyc(k + j);
		k += g.count;
		if (g.to_cyc - g.from_cyc < wall) {
			if (bad_gap++ < 5)
				notes << "gap of " << nt_clock_cyc_to_ns(g.to_cyc - g.from_cyc) / 1e3
							<< " us holds " << g.count << " detours said to last "
							<< nt_clock_cyc_to_ns(wall) / 1e3 << " us\n";
		}
		if (wall < due) {
			if (bad_len++ < 5)
				notes << g.count << " detours due " << nt_clock_cyc_to_ns(due) / 1e3
						      << " us said to spin " << nt_clock_cyc_to_ns(g.spun_cyc) / 1e3
						      << " us and lose " << nt_clock_cyc_to_ns(g.lost_cyc) / 1e3
						      << " us\n";
		}
	}
	INFO(notes.str());
	CHECK(bad_gap == 0);
	CHECK(bad_len == 0);
	return k - k0;
}

} // namespace

TEST_CASE("injection into this thread")
{
	nt_clock_init();
	pinned pin;
	const uint64_t period_ns = 2000000, detour_ns = 200000;
	nt_inject_spec s;
	REQUIRE(parse("period=2ms,detour=200us,mode=unsync,seed=7", &s) == 0);
	char err[256] = "";
	const uint64_t n0 = nt_inject_count(), d0 = nt_inject_delivery_cyc();
	const uint64_t t_start = nt_clock_monotonic_ns();
	REQUIRE(nt_inject_start(&s, 0, 0, err, sizeof err) == 0);
	CHECK(nt_inject_start(&s, 0, 0, err, sizeof err) == -EBUSY);
	observation o;
	observe(200000000, &o); // 200 ms: ~100 detours
	nt_inject_stop();
	// The signals' delivery is counted up to its bound a detour; what the injection took is
	// the spin and that.
	CHECK(nt_inject_delivery_cyc() - d0 <=
	      (nt_inject_count() - n0) * nt_clock_ns_to_cyc(NT_INJECT_DELIVERY_MAX_NS));
	CHECK(nt_inject_taken_cyc() == nt_inject_spun_cyc() + nt_inject_delivery_cyc());
	const uint64_t t_stop = nt_clock_monotonic_ns();
	const uint64_t n = nt_inject_count() - n0;

	const uint64_t len = nt_clock_ns_to_cyc((double)detour_ns);
	const uint64_t seen = check_gaps(o.gaps, o.count0 - n0, [len](uint64_t) { return len; });
	// The timer cannot expire more often than its period (expirations while a signal is
	// pending merge, so under load there are fewer, never more).
	CHECK(n <= (t_stop - t_start) / period_ns + 1);
	CHECK(seen <= n);
	// The timer expires every period (the first within two of the start); an expiration while
	// the loop runs interrupts it at once (the timer is on this CPU), one while the thread is
	// off the CPU at its return, inside that gap. So between a gap with a detour and the next
	// there is at most a period, whatever the load (plus the signal's delivery, some us: a
	// quarter period of slack); the observation's two ends likewise.
	double longest_ns = 0;
	uint64_t from = o.begin_cyc + nt_clock_ns_to_cyc((double)period_ns); // the first comes later
	for (const gap &g : o.gaps) {
		if (g.count == 0)
			continue;
		double d = g.from_cyc > from ? nt_clock_cyc_to_ns(g.from_cyc - from) : 0;
		longest_ns = d > longest_ns ? d : longest_ns;
		from = g.to_cyc;
	}
	double d = nt_clock_cyc_to_ns(o.end_cyc - from);
	longest_ns = d > longest_ns ? d : longest_ns;
	INFO("detours " << n << " (" << seen << " inside the loop), gaps " << o.gaps.size()
			<< ", longest stretch without a detour " << longest_ns / 1e6 << " ms");
	CHECK(seen >= 1);
	CHECK(longest_ns <= 1.25 * (double)period_ns);
	// Stopped: nothing more.
	uint64_t after = nt_inject_count();
	uint64_t end = nt_clock_monotonic_ns() + 10000000;
	while (nt_clock_monotonic_ns() < end)
		;
	CHECK(nt_inject_count() == after);
}

TEST_CASE("trace replay")
{
	nt_clock_init();
	pinned pin;
	char path[] = "/tmp/nt-inject-XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	FILE *f = fdopen(fd, "w");
	// Three detours of 100, 300 and 50 us over ~8 ms, replayed in a loop.
	const uint64_t trace_ns[3] = { 100000, 300000, 50000 };
	const double extent_ns = 8050000; // first start to last end: one replay at least this long
	std::fprintf(f, "1000000\t100000\n4000000\t300000\n9000000\t50000\n");
	std::fclose(f);
	nt_inject_spec s;
	REQUIRE(parse((std::string("trace=") + path).c_str(), &s) == 0);
	char err[256] = "";
	const uint64_t n0 = nt_inject_count();
	const uint64_t t_start = nt_clock_monotonic_ns();
	REQUIRE(nt_inject_start(&s, 0, 0, err, sizeof err) == 0);
	observation o;
	observe(100000000, &o); // ~9 replays
	nt_inject_stop();
	const uint64_t t_stop = nt_clock_monotonic_ns();
	std::remove(path);
	const uint64_t n = nt_inject_count() - n0;
	INFO("detours " << n << ", gaps " << o.gaps.size());

	// Each gap lasted at least the trace's lengths in order, and held what it spun and lost.
	const uint64_t seen = check_gaps(o.gaps, o.count0 - n0, [&trace_ns](uint64_t k) {
		return nt_clock_ns_to_cyc((double)trace_ns[k % 3]);
	});
	CHECK(seen <= n);
	// Detours are due at fixed times from the start (1 ms on); one due while the thread was
	// off the CPU fires as soon as it is back. The second replay's first is due ~12 ms after
	// the start, so by the end of the 100 ms loop, which ran at its end, four have run.
	CHECK(n >= 4);
	// Never more than three per replay, and replays do not overlap.
	CHECK((double)n <= 3.0 * ((double)(t_stop - t_start) / extent_ns + 1.0));

	SECTION("a missing trace is a clear error")
	{
		REQUIRE(parse("trace=/nonexistent/t", &s) == 0);
		CHECK(nt_inject_start(&s, 0, 0, err, sizeof err) == -ENOENT);
		CHECK(std::string(err).find("/nonexistent/t") != std::string::npos);
	}
}

namespace {

// Removes a path at the end of a test section.
struct removed_at_end {
	std::string path;
	~removed_at_end() { std::remove(path.c_str()); }
};

} // namespace

TEST_CASE("a trace that is no regular file, or too large, is refused unread")
{
	// A regression blocks inside open() or reads forever: SIGALRM then kills the test (fails
	// it) instead of hanging the suite. Each refusal takes no time at all.
	alarm(30);
	nt_clock_init();
	char dir[] = "/tmp/nt-inject-XXXXXX";
	REQUIRE(mkdtemp(dir));
	std::string fifo = std::string(dir) + "/fifo", big = std::string(dir) + "/big";
	removed_at_end r3{ dir }, r1{ fifo }, r2{ big }; // files first, then the folder
	REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
	// Past the limit by one byte, sparse: a large trace is refused before it is read.
	int fd = open(big.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, (off_t)NT_INJECT_MAX_TRACE_BYTES + 1) == 0);
	close(fd);
	const struct {
		std::string path;
		int rc;
		const char *why;
	} cases[] = {
		{ fifo, -EINVAL, "not a regular file" },   // no writer: open() waited forever
		{ "/dev/zero", -EINVAL, "not a regular file" }, // never ends
		{ dir, -EINVAL, "not a regular file" },
		{ big, -EFBIG, "larger than the 16 MiB" },
	};
	for (const auto &c : cases) {
		nt_inject_spec s;
		REQUIRE(parse(("trace=" + c.path).c_str(), &s) == 0);
		char err[512] = "";
		int rc = nt_inject_start(&s, 0, 0, err, sizeof err);
		if (rc == 0)
			nt_inject_stop();
		INFO(c.path << ": " << err);
		CHECK(rc == c.rc);
		CHECK(std::string(err).find("trace '" + c.path + "'") != std::string::npos);
		CHECK(std::string(err).find(c.why) != std::string::npos);
		CHECK(std::strchr(err, '\n') == nullptr);
	}
	alarm(0);
}

namespace {

volatile sig_atomic_t app_signals;
void app_handler(int) { app_signals++; }

// The handler of sig now.
void (*handler_of(int sig))(int)
{
	struct sigaction cur;
	REQUIRE(sigaction(sig, nullptr, &cur) == 0);
	return (cur.sa_flags & SA_SIGINFO) ? nullptr : cur.sa_handler;
}

void install_app_handler(int sig)
{
	struct sigaction sa = {};
	sa.sa_handler = app_handler;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(sig, &sa, nullptr) == 0);
}

// Spin for ns on this thread (the injector's signals come while it runs).
void spin_ns(uint64_t ns)
{
	uint64_t end = nt_clock_monotonic_ns() + ns;
	while (nt_clock_monotonic_ns() < end)
		;
}

} // namespace

TEST_CASE("the injector never takes or resets an application's signal handler")
{
	nt_clock_init();
	nt_inject_spec s;
	REQUIRE(parse("period=2ms,detour=100us", &s) == 0);
	char err[256] = "";
	const int first = SIGRTMIN + NT_INJECT_SIGNAL_FIRST;
	REQUIRE(handler_of(first) == SIG_DFL);
	SECTION("a handler installed before: another signal is taken, the handler stays")
	{
		install_app_handler(first);
		app_signals = 0;
		REQUIRE(nt_inject_start(&s, 0, 0, err, sizeof err) == 0);
		const int sig = nt_inject_signal();
		CHECK(sig > first);
		CHECK(sig <= SIGRTMAX);
		CHECK(handler_of(first) == app_handler);
		const uint64_t n0 = nt_inject_count();
		raise(first);
		spin_ns(20000000); // ~10 periods
		CHECK(app_signals == 1); // its own signal, and only that
		CHECK(nt_inject_count() > n0);
		nt_inject_stop();
		CHECK(!nt_inject_displaced());
		CHECK(handler_of(first) == app_handler);
		CHECK(handler_of(sig) == SIG_DFL); // given back
		raise(first);
		CHECK(app_signals == 2);
		signal(first, SIG_DFL);
	}
	SECTION("a blocked signal is not taken")
	{
		sigset_t set, old;
		sigemptyset(&set);
		sigaddset(&set, first);
		REQUIRE(pthread_sigmask(SIG_BLOCK, &set, &old) == 0);
		REQUIRE(nt_inject_start(&s, 0, 0, err, sizeof err) == 0);
		CHECK(nt_inject_signal() > first);
		nt_inject_stop();
		REQUIRE(pthread_sigmask(SIG_SETMASK, &old, nullptr) == 0);
	}
	SECTION("a handler installed after: injection stops, the handler stays")
	{
		REQUIRE(nt_inject_start(&s, 0, 0, err, sizeof err) == 0);
		const int sig = nt_inject_signal();
		CHECK(sig == first);
		spin_ns(10000000);
		app_signals = 0;
		install_app_handler(sig);
		spin_ns(20000000); // ~10 periods: at most one of the injector's reaches the handler
		const uint64_t n = nt_inject_count();
		CHECK(app_signals <= 1);
		spin_ns(10000000);
		CHECK(nt_inject_count() == n); // stopped
		raise(sig);
		nt_inject_stop();
		CHECK(nt_inject_displaced());
		CHECK(handler_of(sig) == app_handler); // not reset to the default
		raise(sig); // once killed the process
		CHECK(app_signals >= 2);
		signal(sig, SIG_DFL);
	}
	SECTION("no free signal: refused in one line")
	{
		std::vector<int> taken;
		for (int sig = first; sig <= SIGRTMAX; sig++)
			if (handler_of(sig) == SIG_DFL) {
				install_app_handler(sig);
				taken.push_back(sig);
			}
		CHECK(nt_inject_start(&s, 0, 0, err, sizeof err) == -EBUSY);
		CHECK(std::string(err).find("no real-time signal") != std::string::npos);
		CHECK(nt_inject_signal() == -EBUSY);
		for (int sig : taken)
			CHECK(handler_of(sig) == app_handler);
		for (int sig : taken)
			signal(sig, SIG_DFL);
	}
}
