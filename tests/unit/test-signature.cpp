// Unit tests of signature.c: periodic components and rare long detours found in synthetic
// traces made with a seeded RNG (timer ticks, two interleaved trains, Poisson noise).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <noisetool/signature.h>

namespace {

const uint64_t MS = 1000 * 1000;
const uint64_t S = 1000 * MS;

struct train {
	double period_ns;
	double phase_ns;
	double dur_ns;       // mean duration
	double dur_jitter;   // +- uniform
	double arrival_jitter; // +- uniform
};

// One periodic train over [0, span_ns), skipping arrivals inside any of the blockers.
void add_train(std::vector<struct nt_detour> &out, std::mt19937 &rng, const train &t,
	       uint64_t span_ns, const std::vector<struct nt_detour> &blockers = {})
{
	std::uniform_real_distribution<double> dj(-t.dur_jitter, t.dur_jitter);
	std::uniform_real_distribution<double> aj(-t.arrival_jitter, t.arrival_jitter);
	for (double slot = t.phase_ns; slot < (double)span_ns; slot += t.period_ns) {
		double a = slot + aj(rng);
		if (a < 0)
			continue;
		uint64_t start = (uint64_t)a;
		bool blocked = false;
		for (const auto &b : blockers)
			if (start >= b.start_ns && start < b.start_ns + b.duration_ns)
				blocked = true;
		if (blocked)
			continue;
		struct nt_detour d = { start, (uint64_t)std::llround(t.dur_ns + dj(rng)), 0 };
		out.push_back(d);
	}
}

bool within(double actual, double expected, double rel)
{
	return std::fabs(actual - expected) <= rel * std::fabs(expected);
}

} // namespace

TEST_CASE("nt_signature_analyze: timer tick plus rare long detours", "[signature]")
{
	std::mt19937 rng(20240611);
	const uint64_t span = 10 * S;

	// Ten non-overlapping 5 ms (+ up to 0.1 ms) detours at random times.
	std::vector<struct nt_detour> rare;
	std::uniform_int_distribution<uint64_t> at(0, span - 6 * MS);
	std::uniform_int_distribution<uint64_t> extra(0, 100000);
	while (rare.size() < 10) {
		struct nt_detour r = { at(rng), 5 * MS + extra(rng), NT_DETOUR_PREEMPTED };
		bool overlap = false;
		for (const auto &o : rare)
			if (r.start_ns < o.start_ns + o.duration_ns + MS &&
			    o.start_ns < r.start_ns + r.duration_ns + MS)
				overlap = true;
		if (!overlap)
			rare.push_back(r);
	}

	std::vector<struct nt_detour> d;
	add_train(d, rng, { 4.0 * MS, 1.3 * MS, 2000, 300, 20000 }, span, rare);
	const size_t ticks = d.size();
	REQUIRE(ticks > 2400); // 2500 slots, a few dropped under the rare detours
	REQUIRE(ticks < 2500);
	d.insert(d.end(), rare.begin(), rare.end());
	std::shuffle(d.begin(), d.end(), rng); // the input need not be sorted

	struct nt_signature sig;
	std::memset(&sig, 0xa5, sizeof sig);
	REQUIRE(nt_signature_analyze(d.data(), d.size(), span, &sig) == 0);

	SECTION("one periodic component: the 250 Hz tick")
	{
		REQUIRE(sig.nperiodic == 1);
		const struct nt_periodic &p = sig.periodic[0];
		CHECK(within(p.freq_hz, 250.0, 0.01));
		CHECK(within(p.typical_ns, 2000.0, 0.20));
		CHECK((double)p.count >= 0.9 * (double)ticks);
		CHECK(p.count <= ticks);
		CHECK(sig.periodic_detours == p.count);
		// Arrival jitter is uniform in +-20 us: its median distance is about 10 us.
		CHECK(p.jitter_ns > 1000);
		CHECK(p.jitter_ns < 20000);
		// Teeth at 1.3 ms modulo 4 ms.
		CHECK(std::fabs(p.phase_ns - 1.3e6) < 50000);
	}

	SECTION("the ten 5 ms detours are rare long, longest first")
	{
		CHECK(sig.rare_count == 10);
		REQUIRE(sig.nrare == 10);
		CHECK(within((double)sig.rare[0].duration_ns, 5e6, 0.05));
		CHECK(sig.rare_threshold_ns >= 10000);
		CHECK(sig.rare_threshold_ns < 5 * MS);
		uint64_t longest = 0;
		for (const auto &r : rare)
			longest = std::max(longest, r.duration_ns);
		CHECK(sig.rare[0].duration_ns == longest);
		for (size_t i = 0; i + 1 < sig.nrare; i++)
			CHECK(sig.rare[i].duration_ns >= sig.rare[i + 1].duration_ns);
		for (size_t i = 0; i < sig.nrare; i++) {
			CHECK(sig.rare[i].duration_ns >= 5 * MS);
			CHECK(sig.rare[i].flags == NT_DETOUR_PREEMPTED); // copied whole from the input
		}
	}
}

// The 250 Hz ticks between the 100 Hz bursts, plus the bursts.
void two_trains(unsigned seed, std::vector<struct nt_detour> &d, size_t &nfast, size_t &nslow)
{
	std::mt19937 rng(seed);
	std::vector<struct nt_detour> slow;
	add_train(slow, rng, { 10.0 * MS, 0.7 * MS, 100000, 10000, 20000 }, 10 * S);
	add_train(d, rng, { 4.0 * MS, 2.9 * MS, 2000, 300, 20000 }, 10 * S, slow);
	nfast = d.size();
	nslow = slow.size();
	d.insert(d.end(), slow.begin(), slow.end());
}

// The component within 1 % of freq_hz with the most members, or nullptr.
const struct nt_periodic *find_freq(const struct nt_signature &sig, double freq_hz)
{
	const struct nt_periodic *best = nullptr;
	for (size_t i = 0; i < sig.nperiodic; i++)
		if (within(sig.periodic[i].freq_hz, freq_hz, 0.01) &&
		    (!best || sig.periodic[i].count > best->count))
			best = &sig.periodic[i];
	return best;
}

TEST_CASE("nt_signature_analyze: two interleaved trains", "[signature]")
{
	std::vector<struct nt_detour> d;
	size_t nfast = 0, nslow = 0;
	two_trains(7, d, nfast, nslow);
	REQUIRE(nfast == 2500);
	REQUIRE(nslow == 1000);

	struct nt_signature sig;
	REQUIRE(nt_signature_analyze(d.data(), d.size(), 10 * S, &sig) == 0);

	SECTION("both trains are found with their frequencies and lengths")
	{
		const struct nt_periodic *fast = find_freq(sig, 250.0);
		const struct nt_periodic *slw = find_freq(sig, 100.0);
		REQUIRE(fast != nullptr);
		REQUIRE(slw != nullptr);
		CHECK(within(fast->typical_ns, 2000.0, 0.20));
		CHECK(within(slw->typical_ns, 100000.0, 0.20));
		CHECK((double)slw->count >= 0.9 * (double)nslow);
		CHECK(slw->count <= nslow);
		CHECK(fast->count <= nfast);
		// The largest component is the train with the most detours.
		CHECK(&sig.periodic[0] == fast);
	}

	SECTION("periodic detours are never rare")
	{
		CHECK(sig.rare_count == 0);
		CHECK(sig.nrare == 0);
	}
}

// A train found in fragments (one per duration octave, or cut where the walk met a gap of more
// than 8 periods) must come back as one component.
TEST_CASE("nt_signature_analyze: one train is one component", "[signature]")
{
	SECTION("the interleaved trains give exactly two components")
	{
		std::vector<struct nt_detour> d;
		size_t nfast = 0, nslow = 0;
		two_trains(7, d, nfast, nslow);
		struct nt_signature sig;
		REQUIRE(nt_signature_analyze(d.data(), d.size(), 10 * S, &sig) == 0);
		CHECK(sig.nperiodic == 2);
		const struct nt_periodic *fast = find_freq(sig, 250.0);
		REQUIRE(fast != nullptr);
		CHECK((double)fast->count >= 0.9 * (double)nfast);
	}

	SECTION("a jittered 250 Hz tick alone is one component, whatever the seed")
	{
		for (unsigned seed = 1; seed <= 10; seed++) {
			std::mt19937 rng(seed);
			std::vector<struct nt_detour> d;
			add_train(d, rng, { 4.0 * MS, 2.9 * MS, 2000, 300, 20000 }, 10 * S);
			struct nt_signature sig;
			REQUIRE(nt_signature_analyze(d.data(), d.size(), 10 * S, &sig) == 0);
			INFO("seed " << seed);
			CHECK(sig.nperiodic == 1);
			CHECK(sig.periodic[0].count == d.size());
		}
	}
}

TEST_CASE("nt_signature_analyze: Poisson arrivals are not periodic", "[signature]")
{
	// 40 seeds: chance coincidences must not pass for a periodic source.
	for (unsigned seed = 1; seed <= 40; seed++) {
		std::mt19937 rng(seed);
		std::exponential_distribution<double> gap(1.0 / 3e6); // mean 3 ms
		std::uniform_int_distribution<uint64_t> dur(1500, 3000);
		std::vector<struct nt_detour> d;
		double t = 0;
		for (int i = 0; i < 3000; i++) {
			t += gap(rng);
			struct nt_detour x = { (uint64_t)t, dur(rng), 0 };
			d.push_back(x);
		}

		struct nt_signature sig;
		REQUIRE(nt_signature_analyze(d.data(), d.size(), (uint64_t)t + 10000, &sig) == 0);
		INFO("seed " << seed);
		CHECK(sig.nperiodic == 0);
		CHECK(sig.periodic_detours == 0);
		CHECK(sig.rare_count == 0); // all of them are short
	}
}

TEST_CASE("nt_signature_analyze: degenerate inputs", "[signature]")
{
	struct nt_signature sig, zero;
	std::memset(&zero, 0, sizeof zero);

	SECTION("n = 0 gives zeros")
	{
		std::memset(&sig, 0xa5, sizeof sig);
		REQUIRE(nt_signature_analyze(nullptr, 0, 1000, &sig) == 0);
		CHECK(std::memcmp(&sig, &zero, sizeof sig) == 0);
	}

	SECTION("n = 1 gives zeros")
	{
		struct nt_detour one = { 5000, 2000, 0 };
		std::memset(&sig, 0xa5, sizeof sig);
		REQUIRE(nt_signature_analyze(&one, 1, 1000000, &sig) == 0);
		CHECK(sig.nperiodic == 0);
		CHECK(sig.periodic_detours == 0);
		CHECK(sig.rare_count == 0);
		CHECK(sig.nrare == 0);
	}

	SECTION("NULL arguments give -EINVAL")
	{
		struct nt_detour one = { 5000, 2000, 0 };
		CHECK(nt_signature_analyze(&one, 1, 0, nullptr) == -EINVAL);
		CHECK(nt_signature_analyze(nullptr, 1, 0, &sig) == -EINVAL);
	}
}

TEST_CASE("nt_signature_analyze: the softirq time of components and of the rest", "[signature]")
{
	// A 1 kHz train whose detours all saw NET_RX (bit 3), one in four read after a skipped
	// read (no bits), and Poisson detours: some preempted with NET_RX bits (another task's
	// time, not a softirq's), some with RCU and TIMER, some unread, some with nothing.
	std::mt19937 rng(7);
	const uint64_t span = 2 * S;
	std::vector<struct nt_detour> d;
	add_train(d, rng, { 1e6, 3e5, 5000, 0, 100 }, span);
	const uint32_t rd = NT_DETOUR_SOFTIRQS_READ, sh = NT_DETOUR_SOFTIRQ_SHIFT;
	uint64_t comp_softirq = 0;
	for (size_t i = 0; i < d.size(); i++) {
		if (i % 4 == 3) {
			d[i].flags = 0;
		} else {
			d[i].flags = rd | (1u << 3) << sh;
			comp_softirq += d[i].duration_ns;
		}
	}
	size_t read = d.size() - d.size() / 4;
	std::exponential_distribution<double> gap(1.0 / 7e6);
	uint64_t pre = 0, rcu = 0, timer = 0;
	int k = 0;
	for (double t = 1e5; t < (double)span; t += gap(rng), k++) {
		struct nt_detour x = { (uint64_t)t, 3000 + (uint64_t)(k % 7) * 100, 0 };
		switch (k % 4) {
		case 0: x.flags = NT_DETOUR_PREEMPTED | rd | (1u << 3) << sh; pre += x.duration_ns; break;
		case 1: x.flags = rd | ((1u << 9) | (1u << 1)) << sh; rcu += x.duration_ns;
			timer += x.duration_ns; break;
		case 2: x.flags = (1u << 9) << sh; break; // bits without the read flag: none
		default: x.flags = rd; break;
		}
		read += (x.flags & rd) != 0;
		d.push_back(x);
	}
	struct nt_signature sig;
	REQUIRE(nt_signature_analyze(d.data(), d.size(), span, &sig) == 0);
	REQUIRE(sig.nperiodic >= 1);
	const struct nt_periodic *p = &sig.periodic[0];
	CHECK(within(p->freq_hz, 1000, 0.001));
	CHECK(p->softirq_ns == comp_softirq);
	CHECK(p->softirq_kind_ns[3] == comp_softirq);
	CHECK(sig.other_preempted_ns == pre);
	CHECK(sig.other_softirq_ns == rcu);
	CHECK(sig.other_softirq_kind_ns[9] == rcu);
	CHECK(sig.other_softirq_kind_ns[1] == timer);
	CHECK(sig.other_softirq_kind_ns[3] == 0); // only preempted detours saw NET_RX there
	CHECK(sig.softirqs_read == read);
}

// A 500 Hz task whose every fifth detour is longer (in another duration octave: something else
// at 100 Hz ran in it too), as a SCHED_FIFO ticker beside 2,000 datagrams a second was once
// seen: in the short octave each arrival's fourth successor is one 10 ms period away, a gap
// more common than the 2 ms one, and the train came out as four 100 Hz components (and the
// long octave's a fifth) with no 500 Hz one.
TEST_CASE("nt_signature_analyze: a train missing every fifth tooth keeps its frequency",
	  "[signature]")
{
	for (unsigned seed = 1; seed <= 5; seed++) {
		std::mt19937 rng(seed);
		std::uniform_real_distribution<double> dj(-3000, 3000), aj(-150, 150);
		std::vector<struct nt_detour> d;
		for (int k = 0; k < 1000; k++) { // 2 s
			double dur = (k % 5 == 0 ? 358000 : 232000) + dj(rng);
			d.push_back({ (uint64_t)(1 * MS + 2.0 * MS * k + aj(rng)),
				      (uint64_t)std::llround(dur), 0 });
		}
		struct nt_signature sig;
		REQUIRE(nt_signature_analyze(d.data(), d.size(), 2 * S + 2 * MS, &sig) == 0);
		INFO("seed " << seed);
		const struct nt_periodic *p = find_freq(sig, 500.0);
		REQUIRE(p != nullptr);
		CHECK(p->count >= 800); // the short octave's four in five, at least
		const struct nt_periodic *slow = find_freq(sig, 100.0); // the long octave's fifth
		CHECK((slow == nullptr || slow->count <= 200));
	}
}

TEST_CASE("nt_signature_analyze: a train whose every k-th burst falls in another octave is one "
	  "component, whatever k",
	  "[signature]")
{
	// Seen on the SCHED_FIFO burst train: its bursts straddled the 128 us octave boundary, and
	// the long octave's pieces came out as 10 Hz components beside a 100 Hz one.
	for (int k : { 2, 5, 10, 12, 25 }) {
		for (unsigned seed = 1; seed <= 3; seed++) {
			std::mt19937 rng(seed);
			std::uniform_real_distribution<double> dj(-3000, 3000), aj(-150, 150);
			std::vector<struct nt_detour> d;
			for (int i = 0; i < 300; i++) { // 3 s of 100 Hz
				double dur = (i % k == 3 ? 152000 : 118000) + dj(rng);
				d.push_back({ (uint64_t)(9.5 * MS + 10.0 * MS * i + aj(rng)),
					      (uint64_t)std::llround(dur), 0 });
			}
			// A 250 Hz tick beside it, as on a real CPU.
			add_train(d, rng, { 4.0 * MS, 0.7 * MS, 2000, 300, 200 }, 3 * S + 10 * MS);
			std::sort(d.begin(), d.end(), [](const nt_detour &a, const nt_detour &b) {
				return a.start_ns < b.start_ns;
			});
			struct nt_signature sig;
			REQUIRE(nt_signature_analyze(d.data(), d.size(), 3 * S + 10 * MS, &sig) == 0);
			INFO("every " << k << "th burst longer, seed " << seed);
			std::string comps;
			for (size_t c = 0; c < sig.nperiodic; c++)
				comps += std::to_string(sig.periodic[c].freq_hz) + " Hz x " +
					 std::to_string(sig.periodic[c].count) + "; ";
			INFO("components: " << comps);
			const struct nt_periodic *p = find_freq(sig, 100.0);
			REQUIRE(p != nullptr);
			CHECK(p->count == 300);
			CHECK(sig.nperiodic == 2); // the train and the tick
		}
	}
}
