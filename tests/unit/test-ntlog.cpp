// The job log: encode rank blocks, decode them back exactly, and refuse every kind of damage
// with a message that says what is wrong; the report merges sites across ranks.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <noisetool/ntlog.h>
#include <noisetool/report.h>

namespace {

std::vector<unsigned char> make_log(uint32_t nranks, uint32_t flags = 0)
{
	std::vector<unsigned char> out(NT_LOG_HEADER_BYTES);
	nt_log_header(out.data(), nranks, flags, 1, 2.6e9, 123456789);
	for (uint32_t r = 0; r < nranks; r++) {
		struct nt_log_site sites[2];
		std::memset(sites, 0, sizeof sites);
		sites[0].function = "MPI_Allreduce";
		sites[0].module = "/usr/bin/prog";
		sites[0].offset = 0x1234;
		sites[0].calls = 1000 + r;
		sites[0].total_ns = 500000 * (r + 1);
		sites[0].min_ns = 300;
		sites[0].max_ns = 9000 + r;
		sites[0].hist[8] = 1000 + r;
		sites[0].depth = 2;
		sites[0].frames[0] = { "/usr/lib/libnoisetool-mpi.so", 0x99 };
		sites[0].frames[1] = { "/usr/bin/prog", 0x1234 };
		sites[1].function = "MPI_Barrier";
		sites[1].module = "/other/path/prog"; // same module name, another path
		sites[1].offset = 0x2000;
		sites[1].calls = 1;
		sites[1].total_ns = 100;
		struct nt_log_rank rank;
		std::memset(&rank, 0, sizeof rank);
		rank.rank = r;
		rank.host = "node-a";
		rank.wall_ns = 1000000000;
		rank.mpi_ns = 500000 * (r + 1) + 100;
		rank.nsites = r == 0 ? 2 : 1; // only rank 0 calls the barrier site
		rank.sites = sites;
		struct nt_log_record rec;
		std::memset(&rec, 0, sizeof rec);
		rec.comm_id = 0x100000001ull;
		rec.seq = 42 + r;
		rec.flags = NT_LOG_REC_SLOW | NT_LOG_REC_WINDOW;
		rec.start_ns = 1000;
		rec.duration_ns = 2000;
		rec.phase_ns = 3000;
		rec.win.wall_ns = 5000;
		rec.win.run_delay_ns = 700 + r;
		rec.win.injected_ns = 900;
		rec.win.valid = 6;
		rank.init_global_ns = -1234 * (int64_t)r;
		rank.drift_ppb = -100000;
		rank.clock_error_ns = 150;
		rank.injected_ns = 77;
		rank.records = &rec;
		rank.nrecords = 1;
		rank.dropped_records = r;
		unsigned char *buf;
		size_t len;
		REQUIRE(nt_log_rank_encode(&rank, &buf, &len) == 0);
		out.insert(out.end(), buf, buf + len);
		std::free(buf);
	}
	return out;
}

} // namespace

TEST_CASE("ntlog round trip", "[ntlog]")
{
	auto bytes = make_log(3);
	struct nt_log log;
	char err[256];
	REQUIRE(nt_log_decode(bytes.data(), bytes.size(), &log, err, sizeof err) == 0);
	CHECK(log.version == NT_LOG_VERSION);
	CHECK(log.nranks == 3);
	CHECK(log.level == 1);
	CHECK(log.clock_hz == 2.6e9);
	CHECK(log.created_unix_ns == 123456789);
	CHECK_FALSE(log.flags & NT_LOG_FLAG_PARTIAL);
	CHECK(log.ranks[0].nsites == 2);
	CHECK(log.ranks[2].nsites == 1);
	CHECK(std::string(log.ranks[1].host) == "node-a");
	const struct nt_log_site &s = log.ranks[2].sites[0];
	CHECK(std::string(s.function) == "MPI_Allreduce");
	CHECK(std::string(s.module) == "/usr/bin/prog");
	CHECK(s.offset == 0x1234);
	CHECK(s.calls == 1002);
	CHECK(s.max_ns == 9002);
	CHECK(s.hist[8] == 1002);
	CHECK(s.depth == 2);
	CHECK(std::string(s.frames[0].module) == "/usr/lib/libnoisetool-mpi.so");
	CHECK(s.frames[1].offset == 0x1234);
	CHECK(log.ranks[2].nrecords == 1);
	CHECK(log.ranks[2].dropped_records == 2);
	CHECK(log.ranks[2].records[0].seq == 44);
	CHECK(log.ranks[2].records[0].comm_id == 0x100000001ull);
	CHECK(log.ranks[2].records[0].phase_ns == 3000);
	CHECK(log.ranks[2].records[0].win.wall_ns == 5000);
	CHECK(log.ranks[2].records[0].win.run_delay_ns == 702);
	CHECK(log.ranks[2].records[0].win.injected_ns == 900);
	CHECK(log.ranks[2].records[0].win.valid == 6);
	CHECK(log.ranks[2].init_global_ns == -2468);
	CHECK(log.ranks[2].drift_ppb == -100000);
	CHECK(log.ranks[2].clock_error_ns == 150);
	CHECK(log.ranks[2].injected_ns == 77);

	SECTION("the report merges a site across ranks and computes its spread")
	{
		struct nt_report rep;
		REQUIRE(nt_report_build(&log, nullptr, nullptr, &rep) == 0);
		REQUIRE(rep.nsites == 2);
		const struct nt_report_site &a = rep.sites[0];
		CHECK(std::string(a.function) == "MPI_Allreduce");
		CHECK(a.calls == 1000 + 1001 + 1002);
		CHECK(a.time_ns_total == 500000 * 6);
		CHECK(a.time_ns_max == 9002);
		CHECK(a.time_ns_max_rank == 1500000);
		CHECK(a.max_rank == 2);
		CHECK(a.ranks == 3);
		// per-rank 0.5, 1.0, 1.5 ms: mean 1.0, population sd sqrt(1/6)
		CHECK(a.cov == Approx(0.408248).epsilon(1e-4));
		CHECK(std::string(a.location) == "prog+0x1234");
		const struct nt_report_site &b = rep.sites[1];
		CHECK(b.ranks == 1);
		CHECK(b.cov == Approx(std::sqrt(2.0)).epsilon(1e-6)); // one rank of three
		char *text = nullptr;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		CHECK(nt_report_write_json(f, &rep) == 0);
		std::fclose(f);
		std::string js(text);
		std::free(text);
		for (const char *key : { "\"ranks\": 3", "\"partial\": false", "\"sites\"",
					 "\"function\": \"MPI_Allreduce\"", "\"location\"",
					 "\"calls\": 3003", "\"time_ns_total\"", "\"time_ns_max\"",
					 "\"cov\"" })
			CHECK(js.find(key) != std::string::npos);
		nt_report_free(&rep);
	}
	nt_log_free(&log);
}

TEST_CASE("ntlog refuses damaged files with a clear message", "[ntlog]")
{
	auto good = make_log(2);
	struct nt_log log;
	char err[256];

	SECTION("not a log")
	{
		const unsigned char junk[100] = { 'h', 'e', 'l', 'l', 'o' };
		CHECK(nt_log_decode(junk, sizeof junk, &log, err, sizeof err) == -EINVAL);
		CHECK(std::string(err).find("not a noisetool log") != std::string::npos);
	}
	SECTION("truncated anywhere")
	{
		for (size_t cut : { (size_t)10, (size_t)NT_LOG_HEADER_BYTES, good.size() / 2,
				    good.size() - 1 }) {
			INFO("cut at " << cut);
			CHECK(nt_log_decode(good.data(), cut, &log, err, sizeof err) == -EINVAL);
			CHECK(std::strlen(err) > 5);
		}
	}
	SECTION("any flipped byte is caught")
	{
		for (size_t at = 0; at < good.size(); at += 7) {
			auto bad = good;
			bad[at] ^= 0x5a;
			INFO("byte " << at);
			int rc = nt_log_decode(bad.data(), bad.size(), &log, err, sizeof err);
			CHECK(rc != 0);
			if (rc == 0)
				nt_log_free(&log);
		}
	}
	SECTION("trailing garbage")
	{
		auto bad = good;
		bad.push_back(0);
		CHECK(nt_log_decode(bad.data(), bad.size(), &log, err, sizeof err) == -EINVAL);
		CHECK(std::string(err).find("unexpected bytes") != std::string::npos);
	}
	SECTION("a newer version")
	{
		auto bad = good;
		bad[8] = 99; // version, then fix the header checksum
		uint32_t crc = nt_crc32(0, bad.data(), 60);
		for (int i = 0; i < 4; i++)
			bad[60 + i] = (unsigned char)(crc >> (8 * i));
		CHECK(nt_log_decode(bad.data(), bad.size(), &log, err, sizeof err) == -ENOTSUP);
	}
	SECTION("a missing file")
	{
		CHECK(nt_log_read_file("/nonexistent/x.ntlog", &log, err, sizeof err) == -ENOENT);
	}
}

TEST_CASE("crc32 matches the IEEE check value", "[ntlog]")
{
	CHECK(nt_crc32(0, "123456789", 9) == 0xcbf43926u);
}
