// The wrappers' two per-call paths keep the same books (wrappers/call.h): one sequence of
// made-up calls -- collectives with and without a buffer, sends, receives, waits, tests that
// found nothing (polls) or something, refused calls, short and long durations and phases,
// several sites and both predefined communicators -- booked once by the fast path where it
// applies (the generic path filling the caches before) and once by the generic path alone, must
// leave the same sites (calls, total, minimum, maximum, histogram, bytes, spans), the same
// instance numbers, the same thread state (interval, point-to-point time, last exit) and the
// same records (flags, interval, point-to-point time, phase); a poll counts and adds its time
// but stays out of its site's histogram. Made-up times, no MPI job: a singleton MPI_Init for
// the datatypes' sizes and the communicators' handles; the library's internals linked
// statically.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include <ftw.h>
#include <sys/stat.h>

#include <mpi.h>

extern "C" {
#include <noisetool/clock.h>

#include "call.h"
}

namespace {

struct made_up_call {
	unsigned fn;
	uintptr_t ret;
	MPI_Comm comm; // MPI_COMM_NULL: not a collective
	int count;
	MPI_Datatype type; // MPI_DATATYPE_NULL: no buffer
	uint64_t gap_cyc, d_cyc;
	int rc;
	int flag = 1; // MPI_Test's: 0 a poll
};

struct site_books {
	uintptr_t ret;
	unsigned fn;
	uint64_t calls, total, bytes, phase, min, max;
	std::vector<uint64_t> hist;
	bool operator==(const site_books &o) const
	{
		return ret == o.ret && fn == o.fn && calls == o.calls && total == o.total &&
		       bytes == o.bytes && phase == o.phase && min == o.min && max == o.max &&
		       hist == o.hist;
	}
};

struct record_books {
	uint64_t comm_id, seq;
	uint32_t site, flags;
	uint64_t t0, d, phase, interval, p2p;
	bool operator==(const record_books &o) const
	{
		return comm_id == o.comm_id && seq == o.seq && site == o.site && flags == o.flags &&
		       t0 == o.t0 && d == o.d && phase == o.phase && interval == o.interval &&
		       p2p == o.p2p;
	}
};

struct books {
	std::vector<site_books> sites;
	std::vector<record_books> records;
	uint64_t world_seq, self_seq, last_exit, coll_exit, p2p;
	int fast_calls, untimed_calls;
	int untimed_after; // of them, those after the program gave MPI a callback
};

// Fresh tables and thread state, as at MPI_Init (level timing: no probe windows).
std::vector<unsigned char> memory;

void start_fresh()
{
	const size_t sites = 64, comms = 16, requests = 16, records = 4096;
	size_t s = nt_sites_table_bytes(sites), c = nt_comms_bytes(comms),
	       q = nt_requests_bytes(requests), r = records * sizeof(struct nt_record);
	memory.assign(s + c + q + r + 4 * 64, 0);
	unsigned char *p = memory.data();
	auto take = [&p](size_t n) {
		p = (unsigned char *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
		unsigned char *at = p;
		p += n;
		return at;
	};
	nt_sites_init(take(s), sites, false, (uint64_t)nt_clock_ns_to_cyc(NT_REC_ABS_FLOOR_NS),
		      NULL);
	nt_comms_init(take(c), comms, 0, false);
	nt_requests_init(take(q), requests);
	nt_records_init(take(r), records);
	std::memset(&nt_thread_, 0, sizeof nt_thread_);
	for (auto &slot : nt_thread_.comms)
		slot = &nt_comm_none_;
	nt_recpolicy_thread_init(&nt_thread_.rec);
	nt_thread_.last_exit_cyc = 1000;
	nt_active_ = 1;
	nt_callbacks_ = 0;
}

// Book the calls, by the fast path where it applies (fast) or by the generic path alone; the
// fast path's test calls sampled one in poll_sample (NOISETOOL_POLL_SAMPLE; 1: all timed); the
// program gives MPI a callback (MPI_Grequest_start) before call callback_at.
books run(const std::vector<made_up_call> &calls, bool fast, unsigned poll_sample = 1,
	  size_t callback_at = SIZE_MAX)
{
	start_fresh();
	nt_poll_span_ = 2 * poll_sample - 1;
	nt_gate_.g.b.generic = fast ? 0 : 1;
	books b{};
	uint64_t now = 1000;
	for (size_t k = 0; k < calls.size(); k++) {
		const made_up_call &x = calls[k];
		if (k == callback_at)
			nt_callbacks_registered();
		uint64_t t0 = now + x.gap_cyc, t1 = t0 + x.d_cyc;
		now = t1;
		struct nt_thread *t = &nt_thread_;
		bool collective = x.comm != MPI_COMM_NULL, typed = x.type != MPI_DATATYPE_NULL;
		void *ret = (void *)x.ret;
		bool test = x.fn == NT_FN_MPI_Test;
		if (nt_fast_open(t, nt_fn_kind[x.fn] == NT_KIND_WAIT)) {
			struct nt_site *s = nt_fast_find(t, (unsigned)nt_fn_fast[x.fn], collective, typed,
							 x.fn, ret, x.comm, (uint64_t)x.count,
							 x.type);
			if (s) {
				unsigned fast_at = (unsigned)nt_fn_fast[x.fn];
				if (test && nt_fast_untimed(s)) { // the wrapper's untimed call: books, then
					nt_fast_untimed_books(t, s); // the real call with no guard
					REQUIRE(t->depth == 0);
					b.fast_calls++;
					b.untimed_calls++;
					b.untimed_after += k >= callback_at;
					continue;
				}
				t->depth = 1;
				// what nt_fast_entry keeps for the books, with the made-up entry
				t->t0_cyc = t0;
				t->poll_at = &x.flag;
				int rc = collective ? nt_fast_coll_end(t, s, typed, t1, x.rc)
					 : test	    ? nt_fast_poll_end(t, fast_at, t1, x.rc)
						    : nt_fast_p2p_end(t, s, typed, t0, t1, x.rc);
				REQUIRE(rc == x.rc);
				REQUIRE(t->depth == 0);
				b.fast_calls++;
				continue;
			}
		}
		struct nt_call c;
		REQUIRE(nt_call_begin(&c));
		c.t0_cyc = t0;
		c.t1_cyc = t1;
		nt_call_end(&c, x.fn, ret, x.comm, NULL, NULL, (uint64_t)x.count, x.type, x.rc,
			    test && x.rc == MPI_SUCCESS && x.flag == 0);
		REQUIRE(nt_thread_.depth == 0);
	}
	nt_sites_settle_all_polls(); // as MPI_Finalize does
	size_t i = 0;
	for (struct nt_site *s; (s = nt_sites_next(&i));)
		b.sites.push_back({ s->ret, s->fn, s->calls, s->total_cyc, s->bytes, s->phase_cyc,
				    s->min_cyc, s->max_cyc,
				    std::vector<uint64_t>(s->hist, s->hist + NT_SITE_HIST) });
	for (size_t k = 0; k < nt_records_count(); k++) {
		const struct nt_record *r = nt_records_get(k);
		b.records.push_back({ r->comm_id, r->seq, r->site, r->flags, r->t0_cyc, r->d_cyc,
				      r->phase_cyc, r->interval_cyc, r->p2p_cyc });
	}
	b.world_seq = nt_comms_find(MPI_COMM_WORLD)->seq;
	b.self_seq = nt_comms_find(MPI_COMM_SELF)->seq;
	b.last_exit = nt_thread_.last_exit_cyc;
	b.coll_exit = nt_thread_.coll_exit_cyc;
	b.p2p = nt_thread_.p2p_cyc;
	return b;
}

// sampled: the fast path's test calls were sampled, and its test sites' minimum, maximum and
// histogram hold only the timed ones (a subset of the generic path's).
void check_same(const books &fast, const books &generic, bool sampled = false)
{
	REQUIRE(fast.sites.size() == generic.sites.size());
	for (size_t i = 0; i < fast.sites.size(); i++) {
		INFO("site " << i << " (" << nt_fn_name[fast.sites[i].fn] << ")");
		CHECK(fast.sites[i].calls == generic.sites[i].calls);
		CHECK(fast.sites[i].total == generic.sites[i].total);
		CHECK(fast.sites[i].bytes == generic.sites[i].bytes);
		CHECK(fast.sites[i].phase == generic.sites[i].phase);
		if (sampled && fast.sites[i].fn == NT_FN_MPI_Test) {
			CHECK(fast.sites[i].min >= generic.sites[i].min);
			CHECK(fast.sites[i].max <= generic.sites[i].max);
			for (size_t b = 0; b < fast.sites[i].hist.size(); b++)
				CHECK(fast.sites[i].hist[b] <= generic.sites[i].hist[b]);
			continue;
		}
		CHECK(fast.sites[i].min == generic.sites[i].min);
		CHECK(fast.sites[i].max == generic.sites[i].max);
		CHECK(fast.sites[i] == generic.sites[i]);
	}
	REQUIRE(fast.records.size() == generic.records.size());
	for (size_t i = 0; i < fast.records.size(); i++) {
		INFO("record " << i << " (seq " << generic.records[i].seq << ")");
		CHECK(fast.records[i].flags == generic.records[i].flags);
		CHECK(fast.records[i].interval == generic.records[i].interval);
		CHECK(fast.records[i].p2p == generic.records[i].p2p);
		CHECK(fast.records[i].phase == generic.records[i].phase);
		CHECK(fast.records[i] == generic.records[i]);
	}
	CHECK(fast.world_seq == generic.world_seq);
	CHECK(fast.self_seq == generic.self_seq);
	CHECK(fast.last_exit == generic.last_exit);
	CHECK(fast.coll_exit == generic.coll_exit);
	CHECK(fast.p2p == generic.p2p);
}

// A halo exchange with collectives: per step, sends, receives and waits at their sites, an
// allreduce, and a barrier every fourth step; made-up durations with rare long ones (a late
// partner, a slow collective) and long phases, so that records are kept; refused calls now
// and then.
// How the polling loops' tests go: as the other calls; tight, following the wait and each
// other without a gap, each site's taking one duration (what makes sampled test calls' books
// exact: nt_fast_untimed); steady, 40-79 cycles each and never a few ms more.
enum class polls { as_others, tight, steady };
std::vector<made_up_call> halo_exchange(int steps, uint64_t seed, polls how = polls::as_others)
{
	std::mt19937_64 rng(seed);
	auto dur = [&rng](uint64_t base) {
		uint64_t d = base + rng() % base;
		if (rng() % 50 == 0)
			d += 5000000 + rng() % 5000000; // ~2-4 ms: over the absolute floor
		return d;
	};
	auto gap = [&rng]() { return rng() % 8 == 0 ? 3000000 + rng() % 3000000 : rng() % 4000; };
	std::vector<made_up_call> v;
	for (int i = 0; i < steps; i++) {
		int refused = rng() % 40 == 0 ? MPI_ERR_RANK : MPI_SUCCESS;
		v.push_back({ NT_FN_MPI_Send, 0x401000, MPI_COMM_NULL, 128, MPI_DOUBLE, gap(),
			      dur(900), refused });
		v.push_back({ NT_FN_MPI_Recv, 0x401040, MPI_COMM_NULL, 128, MPI_DOUBLE, gap(),
			      dur(2000), MPI_SUCCESS });
		v.push_back({ NT_FN_MPI_Send, 0x401080, MPI_COMM_NULL, 64, MPI_INT, gap(),
			      dur(900), MPI_SUCCESS });
		v.push_back({ NT_FN_MPI_Wait, 0x4010c0, MPI_COMM_NULL, 0, MPI_DATATYPE_NULL,
			      gap(), dur(1500), MPI_SUCCESS });
		// a polling loop: tests that find nothing, then one that completes; now and then a
		// refused one. Every third step polls at another site: the fast path finds it in the
		// thread's cache, not its memo, and its books must find it again after the call.
		uint64_t test_site = i % 3 == 2 ? 0x4011c0 : 0x401180;
		for (int k = 0, polls = (int)(rng() % 6); k <= polls; k++) {
			int test_rc = rng() % 50 == 0 ? MPI_ERR_REQUEST : MPI_SUCCESS;
			uint64_t test_gap = gap(), test_d = dur(40);
			if (how == polls::tight) {
				test_gap = 0;
				test_d = test_site == 0x401180 ? 40 : 55;
			} else if (how == polls::steady) {
				test_d = 40 + rng() % 40;
			}
			v.push_back({ NT_FN_MPI_Test, test_site, MPI_COMM_NULL, 0, MPI_DATATYPE_NULL,
				      test_gap, test_d, test_rc, k == polls });
		}
		int bad_op = rng() % 60 == 0 ? MPI_ERR_OP : MPI_SUCCESS;
		v.push_back({ NT_FN_MPI_Allreduce, 0x401100, MPI_COMM_WORLD, 1, MPI_DOUBLE, gap(),
			      dur(1200), bad_op });
		if (i % 4 == 0)
			v.push_back({ NT_FN_MPI_Barrier, 0x401140, MPI_COMM_WORLD, 0,
				      MPI_DATATYPE_NULL, gap(), dur(800), MPI_SUCCESS });
		if (i % 7 == 0) // the same site on another communicator: its cache misses
			v.push_back({ NT_FN_MPI_Allreduce, 0x401100, MPI_COMM_SELF, 2, MPI_DOUBLE,
				      gap(), dur(300), MPI_SUCCESS });
		if (i % 11 == 0) // the same site with another datatype
			v.push_back({ NT_FN_MPI_Send, 0x401000, MPI_COMM_NULL, 16, MPI_INT, gap(),
				      dur(900), MPI_SUCCESS });
	}
	return v;
}

int remove_entry(const char *path, const struct stat *, int, struct FTW *)
{
	return remove(path);
}

// A singleton MPI job through the wrappers' MPI_Init: its log and live files go to a scratch
// directory, removed after MPI_Finalize (the test leaves nothing behind).
struct mpi_singleton {
	char out[64] = "/tmp/nt-call-paths-XXXXXX";
	mpi_singleton()
	{
		REQUIRE(mkdtemp(out) != NULL);
		setenv("NOISETOOL_OUT", out, 1);
		setenv("NOISETOOL_SUMMARY", "0", 1);
		int done = 0;
		MPI_Initialized(&done);
		if (!done)
			MPI_Init(NULL, NULL);
		nt_clock_init();
	}
	~mpi_singleton()
	{
		MPI_Finalize();
		nftw(out, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	}
};

// One singleton job for every test case (MPI_Init once, MPI_Finalize at exit).
void start_mpi()
{
	static mpi_singleton mpi;
}

} // namespace

TEST_CASE("the fast and the generic path keep the same books")
{
	start_mpi();
	for (uint64_t seed : { 1u, 2u, 3u }) {
		INFO("seed " << seed);
		std::vector<made_up_call> calls = halo_exchange(3000, seed);
		books fast = run(calls, true), generic = run(calls, false);
		// The fast path took most calls (the test tests it), the generic path none.
		CHECK(fast.fast_calls > (int)calls.size() / 2);
		CHECK(generic.fast_calls == 0);
		// Records were kept, with intervals and point-to-point time (what is compared).
		CHECK(generic.records.size() > 20);
		size_t with_p2p = 0;
		for (const record_books &r : generic.records)
			with_p2p += r.p2p > 0;
		CHECK(with_p2p > 10);
		check_same(fast, generic);
		// Polls (tests that MPI accepted and that found nothing) are out of the histogram,
		// at each of the two sites of test calls.
		std::map<uint64_t, std::pair<uint64_t, uint64_t>> tests; // site: tests, polls
		for (const made_up_call &x : calls)
			if (x.fn == NT_FN_MPI_Test) {
				tests[x.ret].first++;
				tests[x.ret].second += x.rc == MPI_SUCCESS && x.flag == 0;
			}
		REQUIRE(tests.size() == 2);
		size_t test_sites = 0;
		for (const site_books &sb : generic.sites)
			if (sb.fn == NT_FN_MPI_Test) {
				INFO("site " << sb.ret);
				REQUIRE(tests.count(sb.ret) == 1);
				uint64_t in_hist = 0;
				for (uint64_t n : sb.hist)
					in_hist += n;
				REQUIRE(tests[sb.ret].second > 0);
				CHECK(sb.calls == tests[sb.ret].first);
				CHECK(in_hist == tests[sb.ret].first - tests[sb.ret].second);
				test_sites++;
			}
		CHECK(test_sites == 2);
	}
}

TEST_CASE("sampled test calls keep the same counts, and exact books when a site's tests take one time")
{
	start_mpi();
	for (uint64_t seed : { 1u, 2u, 3u }) {
		INFO("seed " << seed);
		// Tight polling loops whose tests at a site all take one duration: the untimed calls'
		// estimates are exact, so every book matches the generic path's but the test sites'
		// extremes and histograms, which hold the timed calls only.
		std::vector<made_up_call> calls = halo_exchange(3000, seed, polls::tight);
		books sampled = run(calls, true, 16), generic = run(calls, false);
		uint64_t tests = 0;
		for (const made_up_call &x : calls)
			tests += x.fn == NT_FN_MPI_Test;
		// Most test calls went untimed (one in ~16 timed, and the first at a site after
		// the memo moved to it: a third of the steps poll at the other site).
		CHECK(sampled.untimed_calls > (int)(tests / 2));
		check_same(sampled, generic, true);
		// Durations that vary, 40-79 cycles (the tests' polls::steady), between gaps:
		// every call still counted, the test sites' totals estimated without bias (within
		// 5 %: ~1,000 timed tests a site; a few ms in one of them would be given to the
		// untimed calls that follow, an estimate's error that the steady durations leave
		// out). The phases before collectives now hold the gaps before untimed calls.
		calls = halo_exchange(3000, seed, polls::steady);
		sampled = run(calls, true, 16);
		generic = run(calls, false);
		CHECK(sampled.untimed_calls > (int)(tests / 2));
		REQUIRE(sampled.sites.size() == generic.sites.size());
		for (size_t i = 0; i < sampled.sites.size(); i++) {
			INFO("site " << i << " (" << nt_fn_name[sampled.sites[i].fn] << ")");
			CHECK(sampled.sites[i].calls == generic.sites[i].calls);
			CHECK(sampled.sites[i].bytes == generic.sites[i].bytes);
			if (sampled.sites[i].fn == NT_FN_MPI_Test)
				CHECK(sampled.sites[i].total ==
				      Approx(generic.sites[i].total).epsilon(0.05));
			else
				CHECK(sampled.sites[i].total == generic.sites[i].total);
		}
		// NOISETOOL_POLL_SAMPLE=1 times every call: the books are the generic path's.
		books all = run(calls, true, 1);
		CHECK(all.untimed_calls == 0);
		check_same(all, generic);
	}
}

// A loop that polls two requests in turn (two sites of MPI_Test, the thread's memo moving on
// every call; one duration a site), then an allreduce; 200 steps of 100 tests.
std::vector<made_up_call> two_site_polling()
{
	std::vector<made_up_call> calls;
	for (int step = 0; step < 200; step++) {
		for (int k = 0; k < 50; k++) {
			calls.push_back({ NT_FN_MPI_Test, 0x402000, MPI_COMM_NULL, 0, MPI_DATATYPE_NULL,
					  0, 40, MPI_SUCCESS, k == 49 });
			calls.push_back({ NT_FN_MPI_Test, 0x402040, MPI_COMM_NULL, 0, MPI_DATATYPE_NULL,
					  0, 55, MPI_SUCCESS, k == 49 });
		}
		calls.push_back({ NT_FN_MPI_Allreduce, 0x402080, MPI_COMM_WORLD, 1, MPI_DOUBLE,
				  3000000, 1200 + (uint64_t)step * 7, MPI_SUCCESS });
	}
	return calls;
}

TEST_CASE("test calls that alternate between sites are each sampled")
{
	// A loop that polls two requests in turn (two sites of MPI_Test, the thread's memo moving
	// on every call), then an allreduce: each site keeps its own countdown and sample
	// (nt_fast_untimed), so most calls go untimed, and with one duration a site the books are
	// the generic path's.
	start_mpi();
	std::vector<made_up_call> calls = two_site_polling();
	books sampled = run(calls, true, 16), generic = run(calls, false);
	// one call in ~16 timed at each site (the first there, then gaps uniform in 0 .. 30)
	CHECK(sampled.untimed_calls > 20000 * 8 / 10);
	check_same(sampled, generic, true);
}

TEST_CASE("a callback given to MPI has every test call timed from then on, every call counted")
{
	// The loop above; a third of the way in, the program gives MPI a callback that MPI may run
	// inside a test call (call.h: nt_callbacks_registered): the untimed calls so far are
	// counted at once, and no test call after it goes untimed (it would run with no reentry
	// guard). With one duration a site the books are the generic path's.
	start_mpi();
	std::vector<made_up_call> calls = two_site_polling();
	size_t at = calls.size() / 3 + 17; // inside a polling loop, countdowns under way
	books sampled = run(calls, true, 64, at), generic = run(calls, false);
	CHECK(sampled.untimed_calls > (int)(at * 8 / 10));
	CHECK(sampled.untimed_after == 0);
	CHECK(nt_poll_span_ == 1);
	check_same(sampled, generic, true);
}

