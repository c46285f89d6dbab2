// Two made-up runs compared, with changes whose size and noise are known by construction: a log
// against itself changes nothing; a rank late at 200 evenly spread instances is a significant
// change and so is the time of the site the others waited in, while an untouched site is
// within noise; one long burst alone is within noise; sites match by location whatever their
// offset, and what one run lacks is named; the JSON and CSV say the same.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <noisetool/compare.h>
#include <noisetool/outfile.h>

extern "C" {
#include "json-read.h" // private to the core, without its own extern "C"
}

namespace {

const uint64_t WIN_VALID = 1 | 2 | 4 | 8;

unsigned bin_of(uint64_t cyc)
{
	unsigned b = 0;
	while (b + 1 < NT_LOG_HIST_BINS && (cyc >> (b + 1)))
		b++;
	return b;
}

// A run of `ranks` ranks of a loop of `calls` MPI_Allreduce (base_ns each) and as many
// MPI_Bcast, plus one MPI_Barrier; rank 1 arrives late at each (at_ns, delay_ns) of `late`, and
// rank 0 waits for it in the allreduce. Clock: 1 GHz (cycles are ns).
struct run {
	uint32_t nranks;
	uint64_t calls = 1000, base_ns = 2000, wall_ns = 1000000000;
	uint64_t allreduce_offset = 0x100;
	bool reduce = false; // one more site, MPI_Reduce, 100 calls a rank
	std::vector<std::pair<uint64_t, uint64_t>> late;

	nt_log log{};
	std::vector<nt_log_rank> ranks;
	std::vector<std::vector<nt_log_site>> sites;
	std::vector<std::vector<nt_log_record>> records;

	explicit run(uint32_t n = 2) : nranks(n) {}

	static nt_log_site site(const char *fn, uint64_t offset, uint64_t calls, uint64_t each_ns)
	{
		nt_log_site s{};
		s.function = fn;
		s.module = "/opt/app/bin/loop";
		s.offset = offset;
		s.calls = calls;
		s.total_ns = calls * each_ns;
		s.min_ns = s.max_ns = each_ns;
		s.hist[bin_of(each_ns)] = calls;
		return s;
	}

	const nt_log *get()
	{
		ranks.assign(nranks, nt_log_rank{});
		sites.assign(nranks, {});
		records.assign(nranks, {});
		for (uint32_t r = 0; r < nranks; r++) {
			sites[r].push_back(site("MPI_Allreduce", allreduce_offset, calls, base_ns));
			sites[r].push_back(site("MPI_Bcast", 0x200, calls, 3000));
			sites[r].push_back(site("MPI_Barrier", 0x80, 1, 50000));
			if (reduce)
				sites[r].push_back(site("MPI_Reduce", 0x300, 100, 4000));
		}
		uint64_t seq = 1;
		for (auto &l : late) {
			for (uint32_t r = 0; r < nranks; r++) {
				nt_log_record x{};
				x.seq = seq;
				x.site = 0;
				x.flags = NT_LOG_REC_WINDOW;
				x.phase_ns = 100000;
				x.win.valid = WIN_VALID;
				if (r == 1) { // late: preempted for the delay
					x.start_ns = l.first + l.second;
					x.duration_ns = base_ns;
					x.win.wall_ns = x.phase_ns + l.second;
					x.win.cpu_ns = x.phase_ns;
					x.win.run_delay_ns = l.second;
				} else { // waits for rank 1 in the call: a slow call
					x.start_ns = l.first;
					x.duration_ns = base_ns + l.second;
					x.flags |= NT_LOG_REC_SLOW;
					x.win.wall_ns = x.win.cpu_ns = x.phase_ns;
					nt_log_site &s = sites[r][0];
					s.total_ns += l.second;
					s.hist[bin_of(base_ns)]--;
					s.hist[bin_of(x.duration_ns)]++;
					s.max_ns = std::max(s.max_ns, x.duration_ns);
				}
				records[r].push_back(x);
			}
			seq++;
		}
		for (uint32_t r = 0; r < nranks; r++) {
			nt_log_rank &k = ranks[r];
			k.rank = r;
			k.host = "node";
			k.wall_ns = wall_ns;
			k.nsites = (uint32_t)sites[r].size();
			k.sites = sites[r].data();
			for (uint32_t i = 0; i < k.nsites; i++)
				k.mpi_ns += sites[r][i].total_ns;
			k.nrecords = records[r].size();
			k.records = records[r].data();
		}
		log = nt_log{};
		log.version = NT_LOG_VERSION;
		log.nranks = nranks;
		log.level = 1;
		log.clock_hz = 1e9;
		log.ranks = ranks.data();
		return &log;
	}
};

// n instances of delay_ns, evenly spread over the run (one in the middle of each n-th of it).
std::vector<std::pair<uint64_t, uint64_t>> spread(size_t n, uint64_t delay_ns, uint64_t wall_ns)
{
	std::vector<std::pair<uint64_t, uint64_t>> v;
	for (size_t i = 0; i < n; i++)
		v.emplace_back(wall_ns / n / 2 + i * (wall_ns / n), delay_ns);
	return v;
}

// Names "loop.c:19" for both allreduce offsets (a rebuilt program), else nothing.
int symbolize(void *, const char *, uint64_t offset, char *out, size_t size)
{
	if (offset != 0x100 && offset != 0x180)
		return -1;
	snprintf(out, size, "loop.c:19");
	return 0;
}

struct compared {
	nt_report ra{}, rb{};
	nt_compare *c = nullptr;
	compared(const nt_log *a, const nt_log *b, nt_symbolize_fn sym = nullptr)
	{
		REQUIRE(nt_report_build(a, sym, nullptr, &ra) == 0);
		REQUIRE(nt_report_build(b, sym, nullptr, &rb) == 0);
		REQUIRE(nt_compare_build(&ra, &rb, &c) == 0);
		REQUIRE(c);
	}
	~compared()
	{
		nt_compare_free(c);
		nt_report_free(&ra);
		nt_report_free(&rb);
	}
	const nt_compare_site &site(const char *fn) const
	{
		for (size_t i = 0; i < c->nsites; i++)
			if (!strcmp(c->sites[i].function, fn))
				return c->sites[i];
		FAIL("no site " << fn);
		return c->sites[0];
	}
	const nt_compare_rank &rank(uint32_t r) const
	{
		for (size_t i = 0; i < c->nranks; i++)
			if (c->ranks[i].rank == r)
				return c->ranks[i];
		FAIL("no rank " << r);
		return c->ranks[0];
	}
	std::string text() const
	{
		char *buf = nullptr;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		REQUIRE(f);
		CHECK(nt_compare_write_text(f, c, "a.ntlog", "b.ntlog", 0) == 0);
		fclose(f);
		std::string s(buf, len);
		free(buf);
		return s;
	}
	std::string json() const
	{
		char *buf = nullptr;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		REQUIRE(f);
		CHECK(nt_compare_write_json(f, c, "a.ntlog", "b.ntlog") == 0);
		fclose(f);
		std::string s(buf, len);
		free(buf);
		return s;
	}
};

} // namespace

TEST_CASE("compare: a log against itself changes nothing")
{
	run a;
	a.late = spread(5, 30000, a.wall_ns);
	const nt_log *la = a.get();
	compared k(la, la);
	REQUIRE(k.c->nsites == 3);
	REQUIRE(k.c->nranks == 2);
	CHECK(k.c->sites_only_a + k.c->sites_only_b + k.c->ranks_only_a + k.c->ranks_only_b == 0);
	for (size_t i = 0; i < k.c->nsites; i++) {
		CHECK(k.c->sites[i].mean_ns.change == 0);
		CHECK(k.c->sites[i].mean_ns.verdict != NT_COMPARE_SIGNIFICANT);
	}
	for (size_t i = 0; i < k.c->nranks; i++) {
		CHECK(k.c->ranks[i].delay_ns.change == 0);
		CHECK(k.c->ranks[i].delay_ns.verdict == NT_COMPARE_WITHIN_NOISE);
	}
	CHECK(k.site("MPI_Barrier").mean_ns.verdict == NT_COMPARE_FEW_CALLS);
	CHECK(k.rank(1).delay_ns.a == 5 * 30000.0);
	CHECK(k.text().find("no significant change") != std::string::npos);
}

TEST_CASE("compare: a rank late all along is significant, and so is the site waited in")
{
	run a, b;
	a.late = spread(3, 20000, a.wall_ns);
	b.late = spread(200, 2000000, b.wall_ns);
	compared k(a.get(), b.get());
	const nt_compare_rank &r1 = k.rank(1);
	CHECK(r1.delay_ns.a == 3 * 20000.0);
	CHECK(r1.delay_ns.b == 200 * 2e6);
	CHECK(r1.late_b == 200);
	CHECK(r1.delay_ns.verdict == NT_COMPARE_SIGNIFICANT);
	// 20 in each block: the noise is the compound-Poisson floor, sqrt(200) x 2 ms.
	CHECK(r1.delay_ns.noise_b == Approx(std::sqrt(200.0) * 2e6).epsilon(1e-6));
	CHECK(r1.causes_b.ns[NT_CAUSE_PREEMPTION] > 0);
	CHECK(k.rank(0).delay_ns.verdict == NT_COMPARE_WITHIN_NOISE);
	CHECK(k.c->ranks[0].rank == 1); // significant first

	const nt_compare_site &ar = k.site("MPI_Allreduce");
	CHECK(ar.calls_a == 2000);
	CHECK(ar.calls_b == 2000);
	CHECK(ar.mean_ns.b == Approx(2000 + 200 * 2e6 / 2000));
	CHECK(ar.mean_ns.verdict == NT_COMPARE_SIGNIFICANT);
	CHECK(ar.culprit_ns_b == 200 * 2000000u);
	CHECK(k.site("MPI_Bcast").mean_ns.change == 0);
	CHECK(k.site("MPI_Bcast").mean_ns.verdict == NT_COMPARE_WITHIN_NOISE);
	CHECK(k.site("MPI_Barrier").mean_ns.verdict == NT_COMPARE_FEW_CALLS);
	CHECK(!strcmp(k.c->sites[0].function, "MPI_Allreduce"));
	CHECK(k.c->delay_ns.verdict == NT_COMPARE_SIGNIFICANT);

	std::string t = k.text();
	INFO(t);
	CHECK(t.find("B is 100x slower in MPI_Allreduce at loop+0x100 (significant: +200 us/call") !=
	      std::string::npos);
	CHECK(t.find("rank 1 makes the others wait") != std::string::npos);
	CHECK(t.find("mostly preemption") != std::string::npos);
}

TEST_CASE("compare: one burst alone is within noise")
{
	run a, b;
	a.late = spread(3, 20000, a.wall_ns);
	b.late = a.late;
	b.late.emplace_back(500000000, 50000000); // one 50 ms stall
	compared k(a.get(), b.get());
	const nt_compare_rank &r1 = k.rank(1);
	CHECK(r1.delay_ns.change == 50000000.0);
	// One event's noise is its own size: never 3 x above it.
	CHECK(r1.delay_ns.noise_b >= 50000000.0);
	CHECK(r1.delay_ns.verdict == NT_COMPARE_WITHIN_NOISE);
	CHECK(k.site("MPI_Allreduce").mean_ns.change == Approx(50000000.0 / 2000));
	CHECK(k.site("MPI_Allreduce").mean_ns.verdict == NT_COMPARE_WITHIN_NOISE);
	CHECK(k.text().find("no significant change") != std::string::npos);
}

TEST_CASE("compare: sites match by location, and what one run lacks is named")
{
	SECTION("a rebuilt program: same line, another offset")
	{
		run a, b;
		b.allreduce_offset = 0x180;
		a.reduce = true;
		compared k(a.get(), b.get(), symbolize);
		CHECK(k.c->nsites == 4);
		CHECK(k.site("MPI_Allreduce").calls_a == 2000);
		CHECK(k.site("MPI_Allreduce").calls_b == 2000);
		CHECK(!strcmp(k.site("MPI_Allreduce").location, "loop.c:19"));
		CHECK(k.site("MPI_Reduce").mean_ns.verdict == NT_COMPARE_ONLY_A);
		CHECK(k.c->sites_only_a == 1);
		CHECK(k.c->sites_only_b == 0);
		CHECK(k.text().find("1 call site only in A, 0 only in B") != std::string::npos);
	}
	SECTION("without symbols the offsets differ: two sites, each in one run")
	{
		run a, b;
		b.allreduce_offset = 0x180;
		compared k(a.get(), b.get());
		CHECK(k.c->sites_only_a == 1);
		CHECK(k.c->sites_only_b == 1);
	}
	SECTION("runs of different rank counts: the common ranks compared")
	{
		run a(2), b(3);
		compared k(a.get(), b.get());
		CHECK(k.c->nranks == 3);
		CHECK(k.rank(2).delay_ns.verdict == NT_COMPARE_ONLY_B);
		CHECK(k.c->ranks_only_b == 1);
		CHECK(k.rank(0).delay_ns.verdict == NT_COMPARE_WITHIN_NOISE);
		CHECK(k.text().find("the runs have 2 and 3 ranks") != std::string::npos);
	}
}

TEST_CASE("compare: the rule")
{
	CHECK(nt_compare_judge(100, 200, 10, 5) == NT_COMPARE_SIGNIFICANT);
	CHECK(nt_compare_judge(200, 100, 10, 5) == NT_COMPARE_SIGNIFICANT);
	CHECK(nt_compare_judge(100, 200, 34, 5) == NT_COMPARE_WITHIN_NOISE); // 100 < 3 x 34
	CHECK(nt_compare_judge(100, 105, 0.1, 20) == NT_COMPARE_WITHIN_NOISE); // under the floor
	CHECK(nt_compare_judge(0, 0, 0, 0) == NT_COMPARE_WITHIN_NOISE);
	CHECK(std::string(nt_compare_verdict_name(NT_COMPARE_SIGNIFICANT)) == "significant");
	CHECK(std::string(nt_compare_verdict_name(NT_COMPARE_WITHIN_NOISE)) == "within noise");
	nt_compare *c = (nt_compare *)1;
	CHECK(nt_compare_build(nullptr, nullptr, &c) == -EINVAL);
	CHECK(c == nullptr);
	nt_compare_free(nullptr);
}

TEST_CASE("compare: the JSON and the CSV say what the tables say")
{
	run a, b;
	a.late = spread(3, 20000, a.wall_ns);
	b.late = spread(200, 2000000, b.wall_ns);
	compared k(a.get(), b.get());
	std::string doc = k.json();
	nt_jvalue v{};
	char err[128];
	REQUIRE(nt_json_parse(doc.data(), doc.size(), &v, err, sizeof err) == 0);
	CHECK(std::string(nt_jvalue_get(&v, "schema")->string) == "noisetool-compare/1");
	CHECK(std::string(nt_jvalue_get(nt_jvalue_get(&v, "a"), "log")->string) == "a.ntlog");
	const nt_jvalue *sites = nt_jvalue_get(&v, "sites"), *ranks = nt_jvalue_get(&v, "ranks");
	REQUIRE(sites->n == 3);
	REQUIRE(ranks->n == 2);
	const nt_jvalue *first = &sites->items[0];
	CHECK(std::string(nt_jvalue_get(first, "function")->string) == "MPI_Allreduce");
	const nt_jvalue *mean = nt_jvalue_get(first, "mean_ns");
	CHECK(std::string(nt_jvalue_get(mean, "verdict")->string) == "significant");
	CHECK(nt_jvalue_get(mean, "change")->number == Approx(k.site("MPI_Allreduce").mean_ns.change));
	CHECK(nt_jvalue_get(&ranks->items[0], "rank")->number == 1);
	CHECK(std::string(nt_jvalue_get(&ranks->items[0], "top_cause_b")->string) == "preemption");
	CHECK(nt_jvalue_get(&v, "summary")->n == 3);
	nt_jvalue_free(&v);

	char dir[] = "/tmp/nt-compare-XXXXXX";
	REQUIRE(mkdtemp(dir));
	char why[NT_OUTFILE_WHY_MAX];
	REQUIRE(nt_compare_write_csv(k.c, dir, why, sizeof why) == 0);
	for (auto name : { "compare-sites.csv", "compare-ranks.csv" }) {
		std::string path = std::string(dir) + "/" + name;
		std::ifstream in(path);
		std::vector<std::string> lines;
		for (std::string line; std::getline(in, line);)
			lines.push_back(line);
		size_t want = std::string(name) == "compare-sites.csv" ? 4 : 3;
		CHECK(lines.size() == want);
		if (lines.size() > 1 && want == 4)
			CHECK(lines[1].rfind("MPI_Allreduce,loop+0x100,,significant,", 0) == 0);
		if (lines.size() > 1 && want == 3)
			CHECK(lines[1].rfind("1,significant,", 0) == 0);
		unlink(path.c_str());
	}
	rmdir(dir);
	CHECK(nt_compare_write_csv(k.c, "/nonexistent/dir", why, sizeof why) < 0);
}
