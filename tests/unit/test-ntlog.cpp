// The job log: encode rank blocks (streamed through any chunk size, or in one buffer), decode
// them back exactly, read versions 1 to 3 as well, and refuse every kind of damage with a
// message that says what is wrong, from memory and from files read through any window, within
// the memory room; the report merges sites across ranks and names every loss.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool/ntlog.h>
#include <noisetool/report.h>

extern "C" {
#include "mem-log.h"
#include "ntlog-read.h" // private to the core, without its own extern "C": the window, the room
}

namespace {

// Append a rank's encoded part to a log's bytes.
void append_rank(std::vector<unsigned char> &out, const nt_log_rank &rank)
{
	unsigned char *buf;
	size_t len;
	REQUIRE(nt_log_rank_encode(&rank, &buf, &len) == 0);
	out.insert(out.end(), buf, buf + len);
	std::free(buf);
}

std::vector<unsigned char> make_log(uint32_t nranks, uint32_t flags = 0)
{
	std::vector<unsigned char> out(NT_LOG_HEADER_BYTES);
	nt_log_header(out.data(), nranks, flags, 1, 0, 16, 2.6e9, 123456789);
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
		append_rank(out, rank);
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
		std::string js = one_line(text);
		std::free(text);
		// Ranks 1 and 2 dropped 1 and 2 records: the report is partial though no flag says so.
		std::string version = "\"log_version\": " + std::to_string(NT_LOG_VERSION);
		for (const char *key : { "\"ranks\": 3", version.c_str(), "\"partial\": true",
					 "\"losses\": {\"dropped_calls\": 0,\"dropped_records\": 3,"
					 "\"untimed_instances\": 0,\"unregistered_persistent\": 0,"
					 "\"unknown_comm_records\": 0}",
					 "\"sites\"", "\"function\": \"MPI_Allreduce\"", "\"location\"",
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
	SECTION("a version this reader does not know")
	{
		// The reader's versions are 1 to NT_LOG_VERSION, the one it writes.
		const std::string known = "versions 1 to " + std::to_string(NT_LOG_VERSION);
		for (unsigned char version : { 0, NT_LOG_VERSION + 1, 99 }) {
			auto bad = good;
			bad[8] = version; // then fix the header checksum
			uint32_t crc = nt_crc32(0, bad.data(), 60);
			for (int i = 0; i < 4; i++)
				bad[60 + i] = (unsigned char)(crc >> (8 * i));
			INFO("version " << (int)version);
			CHECK(nt_log_decode(bad.data(), bad.size(), &log, err, sizeof err) == -ENOTSUP);
			CHECK(std::string(err) ==
			      (version ? "written by a newer noisetool (log version " +
						 std::to_string(version) +
						 "); this one reads " + known + ": report it with "
						 "the noisetool that wrote it, or a newer one"
				       : "log version 0 is unknown: no noisetool writes it (this one "
					 "reads " + known + ")"));
		}
	}
	SECTION("a missing file")
	{
		CHECK(nt_log_read_file("/nonexistent/x.ntlog", &log, err, sizeof err) == -ENOENT);
	}
}

namespace {

// A v3 log in which every field of every struct holds its own value (so that a field written or
// read in another's place, or truncated to 32 bits, shows): unbounded counts with the top bit
// set, times just under the reader's limit of 2^56 ns, negative clock fields.
struct fields {
	std::vector<std::vector<struct nt_log_site>> sites;
	std::vector<std::vector<struct nt_log_record>> recs;
	std::vector<struct nt_log_rank> ranks;
	std::vector<std::string> strings;
	uint64_t next = 1;

	uint64_t count() { return 0x8000000000000000ull | (next++ * 0x0001000100010001ull); }
	uint64_t ns() { return (1ull << 56) - 977 * next++; }

	explicit fields(uint32_t nranks)
	{
		strings.reserve(1000); // the sites point into it
		sites.resize(nranks);
		recs.resize(nranks);
		for (uint32_t r = 0; r < nranks; r++) {
			for (uint32_t i = 0; i < 3; i++) {
				struct nt_log_site s;
				std::memset(&s, 0, sizeof s);
				s.function = str("MPI_Fn" + std::to_string(r) + "_" + std::to_string(i));
				s.module = i == 2 ? "" : str("/lib/mod" + std::to_string(next));
				s.offset = count();
				s.calls = count();
				s.total_ns = ns();
				s.min_ns = ns();
				s.max_ns = ns();
				s.bytes = count();
				for (auto &h : s.hist)
					h = count();
				s.depth = i == 0 ? NT_LOG_MAX_DEPTH : i; // the deepest stack, 1, 2
				for (uint32_t k = 0; k < s.depth; k++)
					s.frames[k] = { str("/f/" + std::to_string(next)), count() };
				sites[r].push_back(s);
			}
			for (uint32_t i = 0; i < 4; i++) {
				struct nt_log_record x;
				std::memset(&x, 0, sizeof x);
				x.comm_id = count();
				x.seq = count();
				x.site = i % 3;
				x.flags = (i & 1 ? NT_LOG_REC_SLOW : NT_LOG_REC_SAMPLE) |
					  (i & 2 ? NT_LOG_REC_LONG_PHASE : 0) | NT_LOG_REC_WINDOW |
					  (i < 3 ? NT_LOG_REC_INTERVAL : 0);
				x.start_ns = ns();
				x.duration_ns = ns();
				x.phase_ns = ns();
				x.interval_ns = i < 3 ? ns() : 0;
				x.p2p_ns = i < 3 ? ns() : 0;
				x.win.wall_ns = ns();
				x.win.cpu_ns = ns();
				x.win.run_delay_ns = ns();
				x.win.vol_switches = count();
				x.win.invol_switches = count();
				x.win.minor_faults = count();
				x.win.major_faults = count();
				x.win.instructions = count();
				x.win.injected_ns = ns();
				x.win.valid = 0x3f - i;
				recs[r].push_back(x);
			}
		}
		for (uint32_t r = 0; r < nranks; r++) {
			struct nt_log_rank k;
			std::memset(&k, 0, sizeof k);
			k.rank = r;
			k.flags = r == 1 ? NT_LOG_FLAG_PARTIAL : 0;
			k.host = str("host-" + std::to_string(r));
			k.wall_ns = ns();
			k.mpi_ns = ns();
			k.dropped = count();
			k.init_global_ns = -(int64_t)ns();
			k.drift_ppb = r ? -10000000000ll : 10000000000ll; // the limits of the range
			k.clock_error_ns = ns();
			k.clock_test_error_ns = ns();
			k.injected_ns = ns();
			k.injected_count = count();
			k.probe_reads = count();
			k.probe_cost_ns = ns();
			k.untimed_instances = count();
			k.unregistered_persistent = count();
			k.unknown_comm_records = count();
			// The job's identity (version 4): each its own, rank 2 an MPMD rank's.
			k.command = str(r == 2 ? "./other 'a b'" : "/bin/app -n " + std::to_string(r));
			k.mpi_library = str("MPI " + std::to_string(next++));
			k.tool_version = str("0.1." + std::to_string(next++));
			// Its CPUs (version 6): rank 1's times unknown.
			k.cpus = str(r == 0 ? "0" : r == 1 ? "" : "0-3,8,10-11");
			k.cpu_ns = r == 1 ? NT_LOG_UNKNOWN : ns();
			k.run_delay_ns = r == 1 ? NT_LOG_UNKNOWN : ns();
			k.cpus_busy_ns = r == 1 ? NT_LOG_UNKNOWN : ns();
			k.cpus_steal_ns = r == 1 ? NT_LOG_UNKNOWN : ns();
			// The other tasks on its CPUs (version 7): rank 1 has none known, rank 2 the
			// most there are room for, and more than it keeps.
			k.pid = 1000 + r;
			k.scan_ns = r == 1 ? 0 : ns();
			// Who ran it and its batch job (version 8): rank 1 outside one.
			k.user = str(r == 1 ? "uid 1001" : "alice");
			k.batch_system = str(r == 1 ? "" : "slurm");
			k.batch_job = str(r == 1 ? "" : "1234." + std::to_string(r));
			k.batch_nodes = str(r == 1 ? "" : "node[01-04]");
			// The other tasks' span (version 9): rank 1's run delay in it unknown.
			k.others_from_ns = r == 1 ? 0 : ns();
			k.others_run_delay_ns = r == 1 ? NT_LOG_UNKNOWN : ns();
			if (r != 1) {
				k.others_flags = NT_LOG_OTHERS_KNOWN | (r == 2 ? NT_LOG_OTHERS_PARTIAL : 0);
				k.nothers = r == 2 ? NT_LOG_OTHERS_MAX : 1;
				k.others_count = k.nothers + (r == 2 ? 5 : 0);
				k.others_ns = ns();
				for (uint32_t t = 0; t < k.nothers; t++) {
					k.others[t].pid = 2000 + t;
					k.others[t].kind = t % NT_LOG_TASK_KIND_COUNT;
					k.others[t].run_ns = ns();
					std::snprintf(k.others[t].comm, sizeof k.others[t].comm,
						      t == 0 ? "culprit-hog" : "task %u of (x)", t);
				}
				// The interrupts and softirqs there: rank 2 the most it keeps.
				k.others_flags |= NT_LOG_IRQS_KNOWN;
				k.irq_count = count();
				k.softirq_count = count();
				k.nirqs = r == 2 ? NT_LOG_IRQS_MAX : 2;
				for (uint32_t i = 0; i < k.nirqs; i++) {
					k.irqs[i].kind = i % NT_LOG_IRQ_KIND_COUNT;
					std::snprintf(k.irqs[i].name, sizeof k.irqs[i].name,
						      i == 0 ? "LOC" : "%u", 30 + i);
					std::snprintf(k.irqs[i].desc, sizeof k.irqs[i].desc,
						      i == 0 ? "Local timer interrupts" : "virtio%u-req.0", i);
					k.irqs[i].count = count();
				}
			}
			k.nsites = (uint32_t)sites[r].size();
			k.sites = sites[r].data();
			k.dropped_records = count();
			k.nrecords = recs[r].size();
			k.records = recs[r].data();
			ranks.push_back(k);
		}
	}

	const char *str(const std::string &v)
	{
		strings.push_back(v);
		return strings.back().c_str();
	}

	std::vector<unsigned char> encode(uint32_t header_flags = 0)
	{
		std::vector<unsigned char> out(NT_LOG_HEADER_BYTES);
		nt_log_header(out.data(), (uint32_t)ranks.size(), header_flags, 2, NT_LOG_WAIT_ADAPTIVE, 64,
			      3.123456789e9, 0xfedcba9876543210ull);
		for (const auto &k : ranks)
			append_rank(out, k);
		return out;
	}
};

// Every field of a window (the list, noisetool/ntlog.h), by its name in outputs.
void check_window(const struct nt_log_window &a, const struct nt_log_window &b)
{
#define WINDOW_FIELD(id, name, kind, source, since, key)                                        \
	{                                                                                      \
		INFO("window field " key);                                                     \
		CHECK(a.NT_LOG_WINDOW_NAME(kind, name) == b.NT_LOG_WINDOW_NAME(kind, name));   \
	}
	NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
	CHECK(a.valid == b.valid);
}

void check_rank(const struct nt_log_rank &a, const struct nt_log_rank &b)
{
	INFO("rank " << b.rank);
	CHECK(a.rank == b.rank);
	CHECK(a.flags == b.flags);
	CHECK(std::string(a.host) == b.host);
	CHECK(a.wall_ns == b.wall_ns);
	CHECK(a.mpi_ns == b.mpi_ns);
	CHECK(a.dropped == b.dropped);
	CHECK(a.init_global_ns == b.init_global_ns);
	CHECK(a.drift_ppb == b.drift_ppb);
	CHECK(a.clock_error_ns == b.clock_error_ns);
	CHECK(a.clock_test_error_ns == b.clock_test_error_ns);
	CHECK(a.injected_ns == b.injected_ns);
	CHECK(a.injected_count == b.injected_count);
	CHECK(a.probe_reads == b.probe_reads);
	CHECK(a.probe_cost_ns == b.probe_cost_ns);
	CHECK(a.dropped_records == b.dropped_records);
	CHECK(a.untimed_instances == b.untimed_instances);
	CHECK(a.unregistered_persistent == b.unregistered_persistent);
	CHECK(a.unknown_comm_records == b.unknown_comm_records);
	CHECK(std::string(a.command) == (b.command ? b.command : ""));
	CHECK(std::string(a.mpi_library) == (b.mpi_library ? b.mpi_library : ""));
	CHECK(std::string(a.tool_version) == (b.tool_version ? b.tool_version : ""));
	CHECK(std::string(a.cpus) == (b.cpus ? b.cpus : ""));
	CHECK(a.cpu_ns == b.cpu_ns);
	CHECK(a.run_delay_ns == b.run_delay_ns);
	CHECK(a.cpus_busy_ns == b.cpus_busy_ns);
	CHECK(a.cpus_steal_ns == b.cpus_steal_ns);
	CHECK(a.pid == b.pid);
	CHECK(a.others_flags == b.others_flags);
	CHECK(a.others_ns == b.others_ns);
	CHECK(a.others_count == b.others_count);
	CHECK(a.scan_ns == b.scan_ns);
	CHECK(std::string(a.user) == (b.user ? b.user : ""));
	CHECK(std::string(a.batch_system) == (b.batch_system ? b.batch_system : ""));
	CHECK(std::string(a.batch_job) == (b.batch_job ? b.batch_job : ""));
	CHECK(std::string(a.batch_nodes) == (b.batch_nodes ? b.batch_nodes : ""));
	CHECK(a.irq_count == b.irq_count);
	CHECK(a.softirq_count == b.softirq_count);
	REQUIRE(a.nirqs == b.nirqs);
	for (uint32_t i = 0; i < b.nirqs; i++) {
		CHECK(a.irqs[i].kind == b.irqs[i].kind);
		CHECK(std::string(a.irqs[i].name) == b.irqs[i].name);
		CHECK(std::string(a.irqs[i].desc) == b.irqs[i].desc);
		CHECK(a.irqs[i].count == b.irqs[i].count);
	}
	REQUIRE(a.nothers == b.nothers);
	for (uint32_t t = 0; t < b.nothers; t++) {
		CHECK(a.others[t].pid == b.others[t].pid);
		CHECK(a.others[t].kind == b.others[t].kind);
		CHECK(a.others[t].run_ns == b.others[t].run_ns);
		CHECK(std::string(a.others[t].comm) == b.others[t].comm);
	}
	REQUIRE(a.nsites == b.nsites);
	for (uint32_t i = 0; i < b.nsites; i++) {
		INFO("site " << i);
		const struct nt_log_site &x = a.sites[i], &y = b.sites[i];
		CHECK(std::string(x.function) == y.function);
		CHECK(std::string(x.module) == y.module);
		CHECK(x.offset == y.offset);
		CHECK(x.calls == y.calls);
		CHECK(x.total_ns == y.total_ns);
		CHECK(x.min_ns == y.min_ns);
		CHECK(x.max_ns == y.max_ns);
		CHECK(x.bytes == y.bytes);
		for (int h = 0; h < NT_LOG_HIST_BINS; h++)
			CHECK(x.hist[h] == y.hist[h]);
		REQUIRE(x.depth == y.depth);
		for (uint32_t k = 0; k < y.depth; k++) {
			CHECK(std::string(x.frames[k].module) == y.frames[k].module);
			CHECK(x.frames[k].offset == y.frames[k].offset);
		}
	}
	REQUIRE(a.nrecords == b.nrecords);
	for (uint64_t i = 0; i < b.nrecords; i++) {
		INFO("record " << i);
		const struct nt_log_record &x = a.records[i], &y = b.records[i];
		CHECK(x.comm_id == y.comm_id);
		CHECK(x.seq == y.seq);
		CHECK(x.site == y.site);
		CHECK(x.flags == y.flags);
		CHECK(x.start_ns == y.start_ns);
		CHECK(x.duration_ns == y.duration_ns);
		CHECK(x.phase_ns == y.phase_ns);
		CHECK(x.interval_ns == y.interval_ns);
		CHECK(x.p2p_ns == y.p2p_ns);
		check_window(x.win, y.win);
	}
}

// A scratch directory for the files the reader reads, removed at exit (after Catch's end: no
// assertion there).
struct scratch {
	std::string dir;
	scratch()
	{
		char t[] = "/tmp/nt-test-ntlog-XXXXXX";
		if (mkdtemp(t))
			dir = t;
	}
	~scratch()
	{
		if (!dir.empty() && std::system(("rm -rf '" + dir + "'").c_str()) != 0)
			std::fprintf(stderr, "cannot remove %s\n", dir.c_str());
	}
};

const std::string &scratch_dir()
{
	static scratch s;
	REQUIRE_FALSE(s.dir.empty());
	return s.dir;
}

// bytes written to the file name in the scratch directory; its path.
std::string write_file(const std::string &name, const std::vector<unsigned char> &bytes)
{
	std::string path = scratch_dir() + "/" + name;
	FILE *f = std::fopen(path.c_str(), "wb");
	REQUIRE(f != nullptr);
	REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
	REQUIRE(std::fclose(f) == 0);
	return path;
}

// The windows a file is read through in the tests: a record, sizes that cut every field
// somewhere, and the reader's own.
const size_t windows[] = { NT_LOG_READ_MIN_CHUNK_BYTES, NT_LOG_READ_MIN_CHUNK_BYTES + 1, 167, 1000,
			    NT_LOG_READ_CHUNK_BYTES };

// Read path through a window of chunk bytes (room: NULL, no limit); the error, or "" on
// success (then *out holds the log, when out is given, else it is freed). rc: its status.
std::string read_error(const std::string &path, size_t chunk, int *rc = nullptr,
		       struct nt_log *out = nullptr, const struct nt_mem_headroom *room = nullptr)
{
	struct nt_log log;
	char err[512];
	int r = nt_log_read_file_with(path.c_str(), chunk, room, &log, err, sizeof err);
	if (rc)
		*rc = r;
	if (r != 0)
		return err;
	if (out)
		*out = log;
	else
		nt_log_free(&log);
	return "";
}

// Decode bytes; the error, or "" on success. The same bytes read from a file, through every
// window, give the same answer: the reader decodes files and memory alike.
std::string decode_error(const std::vector<unsigned char> &bytes)
{
	struct nt_log log;
	char err[256];
	int rc = nt_log_decode(bytes.data(), bytes.size(), &log, err, sizeof err);
	std::string want = rc == 0 ? "" : err;
	if (rc == 0)
		nt_log_free(&log);
	else
		CHECK(rc == -EINVAL);
	if (bytes.size() != NT_LOG_HEADER_BYTES) { // (a header alone is a per-rank log's file)
		std::string path = write_file("decode.ntlog", bytes);
		for (size_t chunk : windows) {
			INFO("read from a file through a window of " << chunk << " bytes");
			int file_rc;
			CHECK(read_error(path, chunk, &file_rc) == want);
			CHECK(file_rc == rc);
		}
	}
	return want;
}

} // namespace

TEST_CASE("log v4: every field of every rank, site, record and window survives", "[ntlog]")
{
	fields f(3);
	auto bytes = f.encode();
	struct nt_log log;
	char err[256];
	REQUIRE(nt_log_decode(bytes.data(), bytes.size(), &log, err, sizeof err) == 0);
	CHECK(log.version == NT_LOG_VERSION);
	CHECK(log.nranks == 3);
	CHECK(log.flags == NT_LOG_FLAG_PARTIAL); // rank 1's flag, none in the header
	CHECK(log.level == 2);
	CHECK(log.wait_mode == NT_LOG_WAIT_ADAPTIVE);
	CHECK(log.clock_hz == 3.123456789e9);
	CHECK(log.created_unix_ns == 0xfedcba9876543210ull);
	for (uint32_t r = 0; r < 3; r++)
		check_rank(log.ranks[r], f.ranks[r]);
	// The interval fields, named: what version 2 added.
	const struct nt_log_record &x = log.ranks[2].records[1];
	CHECK((x.flags & NT_LOG_REC_INTERVAL));
	CHECK(x.interval_ns == f.recs[2][1].interval_ns);
	CHECK(x.p2p_ns == f.recs[2][1].p2p_ns);
	CHECK(x.interval_ns != x.p2p_ns);
	CHECK_FALSE((log.ranks[2].records[3].flags & NT_LOG_REC_INTERVAL));
	// The loss counts, named: what version 3 added (each its own value).
	const struct nt_log_rank &k = log.ranks[1];
	CHECK(k.untimed_instances == f.ranks[1].untimed_instances);
	CHECK(k.unregistered_persistent == f.ranks[1].unregistered_persistent);
	CHECK(k.unknown_comm_records == f.ranks[1].unknown_comm_records);
	CHECK(k.untimed_instances != k.unregistered_persistent);
	CHECK(k.unregistered_persistent != k.unknown_comm_records);
	// The job's identity, named: what version 4 added.
	CHECK(std::string(log.ranks[1].command) == "/bin/app -n 1");
	CHECK(std::string(log.ranks[2].command) == "./other 'a b'");
	CHECK(std::string(log.ranks[1].mpi_library) == f.ranks[1].mpi_library);
	CHECK(std::string(log.ranks[1].tool_version) == f.ranks[1].tool_version);
	nt_log_free(&log);

	SECTION("the encoding is the documented one: records (140 bytes in version 4), then the "
		"job's strings, then the rank's CPUs, then the other tasks on them")
	{
		// The last rank's block ends with its 4 records, its three strings, its CPUs (a
		// string and 4 times), the other tasks there (24 bytes, 32 a task), the
		// interrupts (20 bytes, 60 a line), the readings' cost (8), the user and batch
		// job (four strings) and the other tasks' span (16); its payload ends 4 records and
		// those after the record count, which holds 4.
		const size_t record = NT_LOG_READ_MIN_CHUNK_BYTES; // the latest version's record
		CHECK((NT_LOG_VERSION > 4 || record == 140));
		const struct nt_log_rank &last = f.ranks[2];
		size_t strings = 12 + std::strlen(last.command) + std::strlen(last.mpi_library) +
				 std::strlen(last.tool_version) + 4 + std::strlen(last.cpus) + 4 * 8 +
				 24 + last.nothers * (16 + NT_LOG_TASK_COMM_BYTES) + 20 +
				 last.nirqs * (12 + NT_LOG_IRQ_NAME_BYTES + NT_LOG_IRQ_DESC_BYTES) + 8 +
				 16 + std::strlen(last.user) + std::strlen(last.batch_system) +
				 std::strlen(last.batch_job) + std::strlen(last.batch_nodes) + 16;
		size_t at = bytes.size() - strings - 4 * record - 8;
		uint64_t n = 0;
		for (int i = 7; i >= 0; i--)
			n = (n << 8) | bytes[at + (size_t)i];
		CHECK(n == 4);
	}
	SECTION("a header flag survives on its own")
	{
		auto b = f.encode(NT_LOG_FLAG_PARTIAL);
		REQUIRE(nt_log_decode(b.data(), b.size(), &log, err, sizeof err) == 0);
		CHECK(log.flags == NT_LOG_FLAG_PARTIAL);
		nt_log_free(&log);
	}
}

TEST_CASE("log v4: numbers out of range are refused, naming the field", "[ntlog]")
{
	const uint64_t max_ns = 1ull << 56;
	fields f(2);
	REQUIRE(decode_error(f.encode()) == "");

	SECTION("times above 2^56 ns")
	{
		struct nt_log_record &x = f.recs[1][2];
		struct nt_log_site &s = f.sites[0][1];
		struct nt_log_rank &k = f.ranks[1];
		uint64_t *fields_ns[] = { &k.wall_ns, &k.mpi_ns, &k.clock_error_ns,
					  &k.clock_test_error_ns, &k.injected_ns, &k.probe_cost_ns,
					  &s.total_ns, &s.min_ns, &s.max_ns, &x.start_ns,
					  &x.duration_ns, &x.phase_ns, &x.interval_ns, &x.p2p_ns,
					  &x.win.wall_ns, &x.win.cpu_ns, &x.win.run_delay_ns,
					  &x.win.injected_ns };
		const char *names[] = { "rank 1: wall_ns", "rank 1: mpi_ns", "rank 1: clock_error_ns",
					"rank 1: clock_test_error_ns", "rank 1: injected_ns",
					"rank 1: probe_cost_ns", "rank 0 site 1: total_ns",
					"rank 0 site 1: min_ns", "rank 0 site 1: max_ns",
					"rank 1 record 2: start_ns", "rank 1 record 2: duration_ns",
					"rank 1 record 2: phase_ns", "rank 1 record 2: interval_ns",
					"rank 1 record 2: p2p_ns", "rank 1 record 2: window wall_ns",
					"rank 1 record 2: window cpu_ns",
					"rank 1 record 2: window run_delay_ns",
					"rank 1 record 2: window injected_ns" };
		for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
			INFO(names[i]);
			uint64_t keep = *fields_ns[i];
			*fields_ns[i] = max_ns;
			CHECK(decode_error(f.encode()) == "");
			*fields_ns[i] = max_ns + 1;
			CHECK(decode_error(f.encode()) ==
			      std::string(names[i]) + " 72057594037927937 is out of range (magnitude at "
						       "most 72057594037927936)");
			*fields_ns[i] = UINT64_MAX;
			CHECK(decode_error(f.encode()).find(names[i]) == 0);
			*fields_ns[i] = keep;
		}
	}
	SECTION("the global time base and the drift")
	{
		f.ranks[0].init_global_ns = (int64_t)max_ns;
		f.ranks[1].init_global_ns = -(int64_t)max_ns;
		CHECK(decode_error(f.encode()) == "");
		f.ranks[1].init_global_ns = -(int64_t)max_ns - 1;
		CHECK(decode_error(f.encode()).find("rank 1: init_global_ns -72057594037927937 is out "
						    "of range") == 0);
		f.ranks[1].init_global_ns = 0;
		f.ranks[1].drift_ppb = INT64_MIN;
		CHECK(decode_error(f.encode()).find("rank 1: drift_ppb -9223372036854775808 is out of "
						    "range") == 0);
		f.ranks[1].drift_ppb = 10000000001ll;
		CHECK(decode_error(f.encode()).find("rank 1: drift_ppb 10000000001") == 0);
	}
	SECTION("a record's call site")
	{
		f.recs[0][3].site = 3; // the rank has 3
		CHECK(decode_error(f.encode()) ==
		      "rank 0 record 3: call site 3 is out of range (the rank has 3)");
	}
	SECTION("the header's probe level, wait mode and counter frequency")
	{
		auto set = [](std::vector<unsigned char> b, size_t at, const void *v, size_t n) {
			std::memcpy(&b[at], v, n); // little-endian host, as the CI machines are
			uint32_t crc = nt_crc32(0, b.data(), 60);
			for (int i = 0; i < 4; i++)
				b[60 + (size_t)i] = (unsigned char)(crc >> (8 * i));
			return b;
		};
		auto good = f.encode();
		uint32_t level = 3;
		CHECK(decode_error(set(good, 24, &level, 4)) ==
		      "header: probe level 3 is out of range (0 to 2)");
		uint32_t wait = 4;
		CHECK(decode_error(set(good, 28, &wait, 4)) ==
		      "header: wait mode 4 is out of range (0 to 3)");
		wait = 0; // every log before the field: the MPI's own waits
		CHECK(decode_error(set(good, 28, &wait, 4)) == "");
		for (double hz : { 0.0, -1.0, (double)NAN, (double)INFINITY, 1e12 }) {
			INFO(hz);
			CHECK(decode_error(set(good, 32, &hz, 8)).find("header: counter frequency") == 0);
		}
		double hz = 1.0;
		CHECK(decode_error(set(good, 32, &hz, 8)) == "");
	}
}

TEST_CASE("ntlog: truncated and empty inputs say so", "[ntlog]")
{
	auto good = fields(2).encode();
	CHECK(decode_error(std::vector<unsigned char>()) == "empty file");
	for (size_t cut : { (size_t)1, (size_t)8, (size_t)63 })
		CHECK(decode_error(std::vector<unsigned char>(good.begin(), good.begin() + (long)cut))
			      .find("truncated") == 0);
	CHECK(decode_error(std::vector<unsigned char>(good.begin(), good.begin() + 64 + 10)) ==
	      "header claims 2 ranks, which the file size cannot hold (truncated?)");
	CHECK(decode_error(std::vector<unsigned char>(good.begin(), good.begin() + 64 + 2 * 24 + 10))
		      .find("rank 0: block of ") == 0);
	CHECK(decode_error(std::vector<unsigned char>(good.begin(), good.end() - 1))
		      .find("runs past the end of the file (truncated?)") != std::string::npos);
}

TEST_CASE("crc32 matches the IEEE check value", "[ntlog]")
{
	CHECK(nt_crc32(0, "123456789", 9) == 0xcbf43926u);
}

namespace {

// An encoder written from doc/ntlog-format.md alone, independent of the C writer: a rank block
// of version 4, of 3 (no command line, MPI library or tool version), of 2 (no loss counts but dropped and dropped_records) or 1 (also no record
// interval fields), as older builds wrote them.
struct spec_writer {
	std::vector<unsigned char> b;

	void u32(uint32_t v)
	{
		for (int i = 0; i < 4; i++)
			b.push_back((unsigned char)(v >> (8 * i)));
	}
	void u64(uint64_t v)
	{
		for (int i = 0; i < 8; i++)
			b.push_back((unsigned char)(v >> (8 * i)));
	}
	void str(const char *s)
	{
		size_t n = s ? std::strlen(s) : 0;
		u32((uint32_t)n);
		b.insert(b.end(), s, s + n);
	}

	static std::vector<unsigned char> payload(const nt_log_rank &r, int version)
	{
		spec_writer w;
		w.u32(r.flags);
		w.u32(r.nsites);
		for (uint64_t v : { r.wall_ns, r.mpi_ns, r.dropped, (uint64_t)r.init_global_ns,
				    (uint64_t)r.drift_ppb, r.clock_error_ns, r.clock_test_error_ns,
				    r.injected_ns, r.injected_count, r.probe_reads, r.probe_cost_ns })
			w.u64(v);
		if (version >= 3) {
			w.u64(r.untimed_instances);
			w.u64(r.unregistered_persistent);
			w.u64(r.unknown_comm_records);
		}
		w.str(r.host);
		for (uint32_t i = 0; i < r.nsites; i++) {
			const nt_log_site &s = r.sites[i];
			w.str(s.function);
			w.str(s.module);
			for (uint64_t v : { s.offset, s.calls, s.total_ns, s.min_ns, s.max_ns, s.bytes })
				w.u64(v);
			for (uint64_t h : s.hist)
				w.u64(h);
			w.u32(s.depth);
			for (uint32_t k = 0; k < s.depth; k++) {
				w.str(s.frames[k].module);
				w.u64(s.frames[k].offset);
			}
		}
		w.u64(r.dropped_records);
		w.u64(r.nrecords);
		for (uint64_t i = 0; i < r.nrecords; i++) {
			const nt_log_record &x = r.records[i];
			w.u64(x.comm_id);
			w.u64(x.seq);
			w.u32(x.site);
			w.u32(x.flags);
			w.u64(x.start_ns);
			w.u64(x.duration_ns);
			w.u64(x.phase_ns);
			if (version >= 2) {
				w.u64(x.interval_ns);
				w.u64(x.p2p_ns);
			}
			// The window's fields that version has (the list is the format's definition).
			const nt_log_window &v = x.win;
#define WINDOW_FIELD(id, name, kind, source, since, key)                                        \
			if (version >= (since))                                                \
				w.u64(v.NT_LOG_WINDOW_NAME(kind, name));
			NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
			w.u32(v.valid);
		}
		if (version >= 4) {
			w.str(r.command);
			w.str(r.mpi_library);
			w.str(r.tool_version);
		}
		if (version >= 6) {
			w.str(r.cpus ? r.cpus : "");
			for (uint64_t v : { r.cpu_ns, r.run_delay_ns, r.cpus_busy_ns, r.cpus_steal_ns })
				w.u64(v);
		}
		if (version >= 7) {
			w.u32(r.pid);
			w.u32(r.others_flags);
			w.u64(r.others_ns);
			w.u32(r.others_count);
			w.u32(r.nothers);
			for (uint32_t t = 0; t < r.nothers; t++) {
				w.u32(r.others[t].pid);
				w.u32(r.others[t].kind);
				w.u64(r.others[t].run_ns);
				char comm[NT_LOG_TASK_COMM_BYTES] = {};
				std::strncpy(comm, r.others[t].comm, sizeof comm - 1);
				w.b.insert(w.b.end(), comm, comm + sizeof comm);
			}
			w.u64(r.irq_count);
			w.u64(r.softirq_count);
			w.u32(r.nirqs);
			for (uint32_t i = 0; i < r.nirqs; i++) {
				w.u32(r.irqs[i].kind);
				char name[NT_LOG_IRQ_NAME_BYTES] = {}, desc[NT_LOG_IRQ_DESC_BYTES] = {};
				std::strncpy(name, r.irqs[i].name, sizeof name - 1);
				std::strncpy(desc, r.irqs[i].desc, sizeof desc - 1);
				w.b.insert(w.b.end(), name, name + sizeof name);
				w.b.insert(w.b.end(), desc, desc + sizeof desc);
				w.u64(r.irqs[i].count);
			}
			w.u64(r.scan_ns);
		}
		if (version >= 8) {
			w.str(r.user);
			w.str(r.batch_system);
			w.str(r.batch_job);
			w.str(r.batch_nodes);
		}
		if (version >= 9) {
			w.u64(r.others_from_ns);
			w.u64(r.others_run_delay_ns);
		}
		return w.b;
	}

	static std::vector<unsigned char> block(const nt_log_rank &r, int version)
	{
		auto p = payload(r, version);
		spec_writer w;
		w.b = { 'N', 'T', 'R', 'K' };
		w.u32(r.rank);
		w.u64(p.size());
		w.u32(nt_crc32(0, p.data(), p.size()));
		w.u32(0);
		w.b.insert(w.b.end(), p.begin(), p.end());
		return w.b;
	}

	// A whole log of ranks as a build of that version wrote it.
	static std::vector<unsigned char> log(const std::vector<nt_log_rank> &ranks, int version,
					      uint32_t header_flags = 0)
	{
		std::vector<unsigned char> out(NT_LOG_HEADER_BYTES);
		// (the wait mode at offset 28: reserved, 0, in the builds before it, which read as
		// the MPI's own waits)
		nt_log_header(out.data(), (uint32_t)ranks.size(), header_flags, 2, NT_LOG_WAIT_ADAPTIVE, 64,
			      3.123456789e9, 0xfedcba9876543210ull);
		out[8] = (unsigned char)version; // then the header checksum again
		uint32_t crc = nt_crc32(0, out.data(), 60);
		for (int i = 0; i < 4; i++)
			out[60 + (size_t)i] = (unsigned char)(crc >> (8 * i));
		for (const auto &r : ranks) {
			auto b = block(r, version);
			out.insert(out.end(), b.begin(), b.end());
		}
		return out;
	}
};

// Random ranks: strings of every length around the chunk sizes, empty sections, stacks of
// every depth, values of every size.
struct random_rank {
	std::vector<struct nt_log_site> sites;
	std::vector<struct nt_log_record> recs;
	std::vector<std::string> strings;
	struct nt_log_rank rank;

	random_rank(std::mt19937_64 &rng, uint32_t max_sites, uint32_t max_records)
	{
		auto below = [&](uint64_t n) { return n ? rng() % n : 0; };
		auto value = [&]() { return rng() >> below(64); };
		strings.reserve(1 + max_sites * (2 + NT_LOG_MAX_DEPTH)); // the sites point into it
		auto str = [&]() {
			std::string v(below(300), 'x');
			for (auto &c : v)
				c = (char)('a' + below(26));
			strings.push_back(v);
			return strings.back().c_str();
		};
		std::memset(&rank, 0, sizeof rank);
		sites.resize(below(max_sites + 1));
		for (auto &s : sites) {
			std::memset(&s, 0, sizeof s);
			s.function = str();
			s.module = str();
			s.offset = value();
			s.calls = value();
			s.total_ns = value() >> 8;
			s.min_ns = value() >> 8;
			s.max_ns = value() >> 8;
			s.bytes = value();
			for (auto &h : s.hist)
				h = value();
			s.depth = (uint32_t)below(NT_LOG_MAX_DEPTH + 1);
			for (uint32_t k = 0; k < s.depth; k++)
				s.frames[k] = { str(), value() };
		}
		recs.resize(sites.empty() ? 0 : below(max_records + 1));
		for (auto &x : recs) {
			std::memset(&x, 0, sizeof x);
			x.comm_id = value();
			x.seq = value();
			x.site = (uint32_t)below(sites.size());
			x.flags = (uint32_t)below(64);
			for (uint64_t *t : { &x.start_ns, &x.duration_ns, &x.phase_ns, &x.interval_ns,
					     &x.p2p_ns, &x.win.wall_ns, &x.win.cpu_ns,
					     &x.win.run_delay_ns, &x.win.injected_ns })
				*t = value() >> 8;
			x.win.vol_switches = value();
			x.win.invol_switches = value();
			x.win.minor_faults = value();
			x.win.major_faults = value();
			x.win.instructions = value();
			x.win.valid = (uint32_t)below(64);
		}
		rank.rank = 0;
		rank.flags = (uint32_t)below(2);
		rank.host = str();
		rank.wall_ns = value() >> 8;
		rank.mpi_ns = value() >> 8;
		rank.dropped = value();
		rank.init_global_ns = (int64_t)(value() >> 8) * (below(2) ? 1 : -1);
		rank.drift_ppb = (int64_t)below(20000000001ull) - 10000000000ll;
		rank.clock_error_ns = value() >> 8;
		rank.clock_test_error_ns = value() >> 8;
		rank.injected_ns = value() >> 8;
		rank.injected_count = value();
		rank.probe_reads = value();
		rank.probe_cost_ns = value() >> 8;
		rank.untimed_instances = value();
		rank.unregistered_persistent = value();
		rank.unknown_comm_records = value();
		rank.nsites = (uint32_t)sites.size();
		rank.sites = sites.data();
		rank.dropped_records = value();
		rank.nrecords = recs.size();
		rank.records = recs.data();
	}
};

// A sink that keeps what it is handed, and the size of each piece.
struct collect {
	std::vector<unsigned char> bytes;
	std::vector<size_t> pieces;
	size_t fail_at = SIZE_MAX; // the piece that returns -ENOSPC

	static int sink(void *ctx, const unsigned char *p, size_t len)
	{
		auto *c = static_cast<collect *>(ctx);
		if (c->pieces.size() == c->fail_at)
			return -ENOSPC;
		c->bytes.insert(c->bytes.end(), p, p + len);
		c->pieces.push_back(len);
		return 0;
	}
};

// The site source of a test: site i of a vector, counting the calls.
struct site_list {
	const std::vector<struct nt_log_site> *sites;
	std::vector<uint32_t> asked;

	static int get(void *ctx, uint32_t i, struct nt_log_site *out)
	{
		auto *l = static_cast<site_list *>(ctx);
		l->asked.push_back(i);
		if (i >= l->sites->size())
			return -ERANGE;
		*out = (*l->sites)[i];
		return 0;
	}
};

// Records from a callback (nt_log_record_fn), as the wrappers give them from their arena.
struct record_list {
	const struct nt_log_rank *rank;
	std::vector<uint64_t> asked;

	static int get(void *ctx, uint64_t i, struct nt_log_record *out)
	{
		auto *l = static_cast<record_list *>(ctx);
		l->asked.push_back(i);
		if (i >= l->rank->nrecords)
			return -ERANGE;
		*out = l->rank->records[i];
		return 0;
	}
};

std::vector<unsigned char> one_buffer(const struct nt_log_rank &r)
{
	unsigned char *buf;
	size_t len;
	REQUIRE(nt_log_rank_encode(&r, &buf, &len) == 0);
	std::vector<unsigned char> v(buf, buf + len);
	std::free(buf);
	return v;
}

} // namespace

TEST_CASE("log v4: the writer's bytes are the spec's", "[ntlog]")
{
	fields f(3);
	for (const auto &r : f.ranks)
		CHECK(one_buffer(r) == spec_writer::block(r, NT_LOG_VERSION));
	CHECK(f.encode() == spec_writer::log(f.ranks, NT_LOG_VERSION));
}

TEST_CASE("log v4: streamed through any chunk, the block is the one-buffer block", "[ntlog]")
{
	std::mt19937_64 rng(20261124);
	size_t largest = 0;
	for (int round = 0; round < 40; round++) {
		// Some blocks far larger than the largest chunk, some empty of sites and records.
		random_rank rr(rng, round % 4 ? 12 : 0, round % 3 ? 1500 : 0);
		INFO("round " << round << ": " << rr.sites.size() << " sites, " << rr.recs.size()
			      << " records");
		auto whole = one_buffer(rr.rank);
		CHECK(whole == spec_writer::block(rr.rank, NT_LOG_VERSION));
		largest = std::max(largest, whole.size());
		for (bool from_callback : { false, true }) {
			site_list list{ &rr.sites, {} };
			record_list recs{ &rr.rank, {} };
			struct nt_log_rank bare = rr.rank; // what the callbacks give, not in the rank
			struct nt_log_source src = { &rr.rank, nullptr, nullptr, nullptr, nullptr };
			if (from_callback) {
				bare.sites = nullptr;
				bare.records = nullptr;
				src = { &bare, site_list::get, &list, record_list::get, &recs };
			}
			struct nt_log_block block;
			REQUIRE(nt_log_rank_measure(&src, &block) == 0);
			CHECK(block.bytes == whole.size());
			for (size_t chunk : { (size_t)1, (size_t)7, (size_t)NT_LOG_CHUNK_BYTES }) {
				INFO("chunk " << chunk << (from_callback ? ", sites from a callback" : ""));
				std::vector<unsigned char> buf(chunk);
				collect c;
				list.asked.clear();
				recs.asked.clear();
				REQUIRE(nt_log_rank_stream(&src, &block, buf.data(), chunk, collect::sink,
							   &c) == 0);
				CHECK(c.bytes == whole);
				// Full chunks, the last one possibly short.
				CHECK(c.pieces.size() == (whole.size() + chunk - 1) / chunk);
				CHECK(std::count(c.pieces.begin(), c.pieces.end() - 1, chunk) ==
				      (long)c.pieces.size() - 1);
				if (from_callback) { // each site once, in order
					std::vector<uint32_t> want(rr.sites.size());
					for (uint32_t i = 0; i < want.size(); i++)
						want[i] = i;
					CHECK(list.asked == want);
					std::vector<uint64_t> each(rr.rank.nrecords);
					for (uint64_t i = 0; i < each.size(); i++)
						each[i] = i;
					CHECK(recs.asked == each);
				}
			}
		}
	}
	CHECK(largest > 2 * NT_LOG_CHUNK_BYTES);
}

TEST_CASE("log v4: the stream stops at the first error and never writes past its block",
	  "[ntlog]")
{
	fields f(1);
	struct nt_log_rank &r = f.ranks[0];
	struct nt_log_source src = { &r, nullptr, nullptr, nullptr, nullptr };
	struct nt_log_block block;
	REQUIRE(nt_log_rank_measure(&src, &block) == 0);
	std::vector<unsigned char> chunk(7);

	SECTION("the sink's error")
	{
		collect c;
		c.fail_at = 3;
		CHECK(nt_log_rank_stream(&src, &block, chunk.data(), chunk.size(), collect::sink, &c) ==
		      -ENOSPC);
		CHECK(c.pieces.size() == 3);
	}
	SECTION("the site source's error")
	{
		std::vector<struct nt_log_site> fewer(f.sites[0].begin(), f.sites[0].end() - 1);
		site_list list{ &fewer, {} };
		struct nt_log_source short_src = { &r, site_list::get, &list, nullptr, nullptr };
		struct nt_log_block b;
		CHECK(nt_log_rank_measure(&short_src, &b) == -ERANGE);
		collect c;
		CHECK(nt_log_rank_stream(&short_src, &block, chunk.data(), chunk.size(),
					 collect::sink, &c) == -ERANGE);
	}
	SECTION("the record source's error")
	{
		struct nt_log_rank fewer = r;
		fewer.nrecords--;
		record_list recs{ &fewer, {} };
		struct nt_log_source short_src = { &r, nullptr, nullptr, record_list::get, &recs };
		struct nt_log_block b;
		CHECK(nt_log_rank_measure(&short_src, &b) == -ERANGE);
		collect c;
		CHECK(nt_log_rank_stream(&short_src, &block, chunk.data(), chunk.size(),
					 collect::sink, &c) == -ERANGE);
	}
	SECTION("a source that grew since it was measured")
	{
		r.nrecords--; // measured with one record less
		REQUIRE(nt_log_rank_measure(&src, &block) == 0);
		r.nrecords++;
		collect c;
		CHECK(nt_log_rank_stream(&src, &block, chunk.data(), chunk.size(), collect::sink, &c) ==
		      -EIO);
		CHECK(c.bytes.size() <= block.bytes);
	}
	SECTION("a source that changed since it was measured, at the same size")
	{
		r.records[1].seq++;
		collect c;
		CHECK(nt_log_rank_stream(&src, &block, chunk.data(), chunk.size(), collect::sink, &c) ==
		      -EIO);
		CHECK(c.bytes.size() == block.bytes);
	}
	SECTION("bad arguments")
	{
		collect c;
		struct nt_log_source none = { nullptr, nullptr, nullptr, nullptr, nullptr };
		CHECK(nt_log_rank_measure(&none, &block) == -EINVAL);
		CHECK(nt_log_rank_stream(&src, &block, chunk.data(), 0, collect::sink, &c) == -EINVAL);
		CHECK(nt_log_rank_stream(&src, &block, nullptr, 7, collect::sink, &c) == -EINVAL);
		CHECK(nt_log_rank_stream(&src, &block, chunk.data(), 7, nullptr, &c) == -EINVAL);
		struct nt_log_rank no_records = r;
		no_records.records = nullptr; // records neither in the rank nor from a callback
		struct nt_log_source src2 = { &no_records, nullptr, nullptr, nullptr, nullptr };
		CHECK(nt_log_rank_measure(&src2, &block) == -EINVAL);
		r.sites = nullptr; // sites neither in the rank nor from a callback
		CHECK(nt_log_rank_measure(&src, &block) == -EINVAL);
		CHECK(c.bytes.empty());
	}
}

TEST_CASE("logs of every older version are read, what they lack as 0", "[ntlog]")
{
	fields f(3);
	struct nt_log log;
	char err[256];
	for (int version = 1; version < NT_LOG_VERSION; version++) {
		INFO("version " << version);
		auto bytes = spec_writer::log(f.ranks, version);
		REQUIRE(nt_log_decode(bytes.data(), bytes.size(), &log, err, sizeof err) == 0);
		CHECK(log.version == (uint32_t)version);
		REQUIRE(log.nranks == 3);
		for (uint32_t r = 0; r < 3; r++) {
			// What the old version had is read as written ...
			struct nt_log_rank want = f.ranks[r];
			if (version < 9) { // ... the other tasks' span the whole job (from MPI_Init),
				want.others_from_ns = 0;
				want.others_run_delay_ns = version >= 7 ? want.run_delay_ns
									: NT_LOG_UNKNOWN;
			}
			if (version < 8) // ... version 8's user and batch job empty,
				want.user = want.batch_system = want.batch_job = want.batch_nodes = "";
			if (version < 7) { // ... version 7's other tasks unknown,
				want.pid = want.others_flags = want.others_count = want.nothers = 0;
				want.others_ns = want.irq_count = want.softirq_count = 0;
				want.nirqs = 0;
				want.scan_ns = 0;
			}
			if (version < 6) { // ... version 6's CPUs unknown and 0,
				want.cpus = "";
				want.cpu_ns = want.run_delay_ns = want.cpus_busy_ns = want.cpus_steal_ns = 0;
			}
			if (version < 4) // ... version 4's job strings are empty,
				want.command = want.mpi_library = want.tool_version = "";
			if (version < 3) { // ... and the loss counts of version 3 are 0,
				want.untimed_instances = 0;
				want.unregistered_persistent = 0;
				want.unknown_comm_records = 0;
			}
			std::vector<struct nt_log_record> recs = f.recs[r];
			for (auto &x : recs) { // ... the window fields of later versions are 0,
#define WINDOW_FIELD(id, name, kind, source, since, key)                                        \
				if (version < (since))                                         \
					x.win.NT_LOG_WINDOW_NAME(kind, name) = 0;
				NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
			}
			if (version == 1) {
				for (auto &x : recs) { // ... as are version 2's intervals, not trusted
					x.interval_ns = 0;
					x.p2p_ns = 0;
					x.flags &= ~NT_LOG_REC_INTERVAL;
				}
			}
			want.records = recs.data();
			check_rank(log.ranks[r], want);
		}
		CHECK(log.ranks[2].dropped == f.ranks[2].dropped);
		CHECK(log.ranks[2].dropped_records == f.ranks[2].dropped_records);
		CHECK(log.flags == NT_LOG_FLAG_PARTIAL);
		if (version >= 4) {
			nt_log_free(&log);
			continue; // what follows is of the logs without a job's identity
		}
		// The report's job is empty, not made up.
		struct nt_report rep;
		REQUIRE(nt_report_build(&log, nullptr, nullptr, &rep) == 0);
		char *text = nullptr;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);
		CHECK(nt_report_write_json(out, &rep) == 0);
		CHECK(nt_report_write_text(out, &rep, "old.ntlog", 0) == 0);
		std::fclose(out);
		std::string js = one_line(text);
		std::free(text);
		CHECK(js.find("\"job\": {\"command\": \"\",\"commands\": 0,\"mpi\": \"\","
			      "\"tool_version\": \"\",\"created_unix_ns\": 18364758544493064720,"
			      "\"hosts\": 3,\"user\": \"\",\"batch_system\": \"\",\"batch_job\": \"\","
			      "\"batch_nodes\": \"\"}") != std::string::npos);
		CHECK(js.find("command: ") == std::string::npos);
		CHECK(js.find("MPI: ") == std::string::npos);
		nt_report_free(&rep);
		nt_log_free(&log);

		// A damaged old log is refused like a new one; read as another version, it is malformed.
		auto bad = bytes;
		bad[bytes.size() - 3] ^= 1;
		size_t block2 = bytes.size() - spec_writer::block(f.ranks[2], version).size();
		CHECK(decode_error(bad) == "rank 2: checksum mismatch (corrupt block at byte " +
						   std::to_string(block2) + ")");
		auto v4 = spec_writer::log(f.ranks, 4); // version 4's bytes, read as this version
		v4[8] = (unsigned char)version;
		uint32_t crc = nt_crc32(0, v4.data(), 60);
		for (int i = 0; i < 4; i++)
			v4[60 + (size_t)i] = (unsigned char)(crc >> (8 * i));
		CHECK(decode_error(v4) ==
		      "rank 0: malformed block contents (read as version " + std::to_string(version) +
			      (version == 1 ? "; a development build before the probe windows also "
					      "wrote version 1, and its logs cannot be read)"
					    : ")"));
	}
}

TEST_CASE("log v4: a truncated or corrupted block is refused, saying so", "[ntlog]")
{
	fields f(2);
	auto good = f.encode();
	size_t block1 = NT_LOG_HEADER_BYTES + spec_writer::block(f.ranks[0], NT_LOG_VERSION).size();
	REQUIRE(decode_error(good) == "");
	// Cut in the loss counts of rank 1 (payload bytes 96 to 120), or anywhere else in it.
	for (size_t cut : { block1 + 24 + 100, block1 + 24 + 119, block1 + 24, good.size() - 140 }) {
		INFO("cut at " << cut);
		CHECK(decode_error(std::vector<unsigned char>(good.begin(), good.begin() + (long)cut)) ==
		      "rank 1: block of " + std::to_string(good.size() - block1 - 24) +
			      " bytes runs past the end of the file (truncated?)");
	}
	// A changed loss count: the checksum says so.
	auto bad = good;
	bad[block1 + 24 + 100] ^= 0x10;
	CHECK(decode_error(bad) ==
	      "rank 1: checksum mismatch (corrupt block at byte " + std::to_string(block1) + ")");
	// A block whose length and checksum agree with a payload too short for version 4 (one
	// written as version 2, or 3, in a version 4 log).
	auto mixed = spec_writer::log(f.ranks, NT_LOG_VERSION);
	auto v2 = spec_writer::block(f.ranks[1], 2);
	mixed.resize(block1);
	mixed.insert(mixed.end(), v2.begin(), v2.end());
	CHECK(decode_error(mixed) == "rank 1: malformed block contents");
	auto v3 = spec_writer::block(f.ranks[1], 3);
	mixed.resize(block1);
	mixed.insert(mixed.end(), v3.begin(), v3.end());
	CHECK(decode_error(mixed) == "rank 1: malformed block contents");
}

TEST_CASE("the report names every kind of loss with its count over all ranks", "[ntlog]")
{
	fields f(2);
	for (auto &r : f.ranks) {
		r.flags = NT_LOG_FLAG_PARTIAL;
		r.dropped = 0;
		r.dropped_records = 0;
		r.untimed_instances = 0;
		r.unregistered_persistent = 0;
		r.unknown_comm_records = 0;
	}
	f.ranks[0].dropped = 2;
	f.ranks[1].dropped = 3;
	f.ranks[1].dropped_records = 40;
	f.ranks[0].untimed_instances = 12;
	f.ranks[0].unregistered_persistent = 1;
	f.ranks[1].unknown_comm_records = 7;
	auto bytes = f.encode();
	struct nt_log log;
	char err[256];
	REQUIRE(nt_log_decode(bytes.data(), bytes.size(), &log, err, sizeof err) == 0);
	struct nt_report rep;
	REQUIRE(nt_report_build(&log, nullptr, nullptr, &rep) == 0);
	CHECK(rep.partial);
	CHECK(rep.losses[NT_LOSS_MERGED_CALLS] == 5);
	CHECK(rep.losses[NT_LOSS_RECORDS] == 40);
	CHECK(rep.losses[NT_LOSS_UNTIMED] == 12);
	CHECK(rep.losses[NT_LOSS_UNREGISTERED] == 1);
	CHECK(rep.losses[NT_LOSS_UNKNOWN_COMM] == 7);

	auto text_of = [&](int (*write)(FILE *, const struct nt_report *)) {
		char *text = nullptr;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);
		CHECK(write(out, &rep) == 0);
		std::fclose(out);
		std::string t(text);
		std::free(text);
		return t;
	};
	std::string text = text_of([](FILE *out, const struct nt_report *r) {
		return nt_report_write_text(out, r, "x.ntlog", 0);
	});
	CHECK(text.find(
		      "2 ranks, level full, waits adaptive, PARTIAL: 5 calls found the site table full "
		      "(counted at the function's merged site; raise NOISETOOL_MEM)\n"
		      "PARTIAL: 40 records were dropped (the record arena was full; raise "
		      "NOISETOOL_MEM)\n"
		      "PARTIAL: 12 nonblocking or persistent collective instances were not timed (the "
		      "table of outstanding requests was full; missing from their call sites' counts "
		      "and times; raise NOISETOOL_MEM)\n"
		      "PARTIAL: 1 persistent collective was not registered (the table of persistent "
		      "requests was full; their starts were neither timed nor counted; raise "
		      "NOISETOOL_MEM)\n"
		      "PARTIAL: 7 records were not kept (the communicator had no id: made by spawn or "
		      "connect/accept, which the tool does not see, or the communicator table was "
		      "full; raise NOISETOOL_MEM)\n\n") != std::string::npos);
	CHECK(text.find("(calls at merged sites)  (instances not timed)  (persistent collectives "
			"not registered)\n") != std::string::npos);
	CHECK(text.find("(calls at merged sites)  (records dropped)  (records on communicators "
			"without an id)\n") != std::string::npos);

	std::string js = one_line(text_of(nt_report_write_json));
	for (const char *key :
	     { "\"partial\": true,\"losses\": {\"dropped_calls\": 5,\"dropped_records\": 40,"
	       "\"untimed_instances\": 12,\"unregistered_persistent\": 1,"
	       "\"unknown_comm_records\": 7}",
	       "\"dropped_calls\": 2,\"records\": 4,\"dropped_records\": 0,"
	       "\"untimed_instances\": 12,\"unregistered_persistent\": 1,"
	       "\"unknown_comm_records\": 0,",
	       "\"dropped_calls\": 3,\"records\": 4,\"dropped_records\": 40,"
	       "\"untimed_instances\": 0,\"unregistered_persistent\": 0,"
	       "\"unknown_comm_records\": 7," }) {
		INFO(key);
		CHECK(js.find(key) != std::string::npos);
	}
	nt_report_free(&rep);
	nt_log_free(&log);

	SECTION("one of a kind, and a complete log")
	{
		char one[256];
		nt_loss_describe(NT_LOSS_RECORDS, 1, one, sizeof one);
		CHECK(std::string(one) ==
		      "1 record was dropped (the record arena was full; raise NOISETOOL_MEM)");
		for (auto &r : f.ranks) {
			r.flags = 0;
			r.dropped = r.dropped_records = r.untimed_instances = 0;
			r.unregistered_persistent = r.unknown_comm_records = 0;
		}
		auto b = f.encode();
		REQUIRE(nt_log_decode(b.data(), b.size(), &log, err, sizeof err) == 0);
		REQUIRE(nt_report_build(&log, nullptr, nullptr, &rep) == 0);
		CHECK_FALSE(rep.partial);
		std::string text = text_of([](FILE *out, const struct nt_report *r) {
			return nt_report_write_text(out, r, "x.ntlog", 0);
		});
		CHECK(text.find("2 ranks, level full, waits adaptive, complete\n\n") !=
		      std::string::npos);
		nt_report_free(&rep);
		nt_log_free(&log);
	}
	SECTION("a version 2 log marked partial for a loss it could not count")
	{
		for (auto &r : f.ranks) {
			r.dropped = r.dropped_records = 0;
		}
		auto b = spec_writer::log(f.ranks, 2);
		REQUIRE(nt_log_decode(b.data(), b.size(), &log, err, sizeof err) == 0);
		REQUIRE(nt_report_build(&log, nullptr, nullptr, &rep) == 0);
		CHECK(rep.partial);
		CHECK(text_of([](FILE *out, const struct nt_report *r) {
			      return nt_report_write_text(out, r, "x.ntlog", 0);
		      }).find("PARTIAL: a rank lost what a version 2 log does not count") !=
		      std::string::npos);
		nt_report_free(&rep);
		nt_log_free(&log);
	}
}

namespace {

void put_le(std::vector<unsigned char> &b, size_t at, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		b[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

// A one-rank log with one site of the given stack depth and one record; then the payload
// checksum is fixed after each edit, so that only the edited field is wrong.
struct one_rank {
	std::vector<unsigned char> bytes;
	size_t payload = NT_LOG_HEADER_BYTES + NT_LOG_RANK_HEADER_BYTES;

	explicit one_rank(bool with_other = false)
	{
		nt_log_site s{};
		s.function = "MPI_Allreduce";
		s.module = "/bin/app";
		s.depth = 1;
		s.frames[0] = { "/bin/app", 1 };
		nt_log_record x{};
		nt_log_rank k{};
		k.host = "h";
		k.nsites = 1;
		k.sites = &s;
		k.nrecords = 1;
		k.records = &x;
		if (with_other) { // one other task on its CPUs, and one interrupt line (version 7)
			k.others_flags = NT_LOG_OTHERS_KNOWN | NT_LOG_IRQS_KNOWN;
			k.others_count = k.nothers = 1;
			k.others[0] = { 7, NT_LOG_TASK_PROCESS, 5, "hog" };
			k.irq_count = 9;
			k.nirqs = 1;
			k.irqs[0] = { NT_LOG_IRQ_INTERRUPT, "LOC", "Local timer interrupts", 9 };
		}
		bytes.resize(NT_LOG_HEADER_BYTES);
		nt_log_header(bytes.data(), 1, 0, 1, 0, 16, 2.6e9, 0);
		append_rank(bytes, k);
	}
	// Payload offsets (doc/ntlog-format.md): flags 0, nsites 4, ..., host at 120 ("h": 5
	// bytes), the site at 125: two strings (17 and 12 bytes), 6 + 48 u64, then its depth.
	// The end of the block: the CPUs (version 6), an empty list and four times; then the other
	// tasks there (version 7): pid, flags, time, count, n (24 bytes), 32 bytes a task; then
	// the interrupts and softirqs: two counts and n (20 bytes), 60 bytes a line; then what the
	// readings cost (8 bytes); then the user and batch job (version 8), four empty strings;
	// then the other tasks' span (version 9), two times.
	static constexpr size_t CPUS = 4 + 4 * 8, OTHERS = 24, IRQS = 20, SCAN = 8, BATCH = 4 * 4,
				SPAN = 2 * 8, TAIL = CPUS + OTHERS + IRQS + SCAN + BATCH + SPAN,
				TASK = 32, IRQ = 60;
	static constexpr size_t NSITES = 4, HOST = 120, SITE = 125,
				DEPTH = SITE + 17 + 12 + 54 * 8, NRECORDS = DEPTH + 4 + 12 + 8 + 8;
	void set(size_t at, uint64_t v, int nbytes)
	{
		put_le(bytes, payload + at, v, nbytes);
		uint32_t crc = nt_crc32(0, bytes.data() + payload, bytes.size() - payload);
		put_le(bytes, payload - 8, crc, 4);
	}
};

} // namespace

// A count read from a log is never trusted for an allocation: it must fit the bytes present
// before anything is allocated for it (a calloc of 2^60 records would fail with ENOMEM, or
// succeed lazily on an overcommitting kernel; here the refusal names the malformed block).
TEST_CASE("log: counts are bounded by the bytes present", "[ntlog]")
{
	one_rank good;
	REQUIRE(decode_error(good.bytes) == "");
	// The offsets are the fields': each set to the value it holds, the log still reads.
	good.set(one_rank::NSITES, 1, 4);
	good.set(one_rank::HOST, 1, 4);
	good.set(one_rank::DEPTH, 1, 4);
	good.set(one_rank::NRECORDS, 1, 8);
	REQUIRE(decode_error(good.bytes) == "");
	good.set(one_rank::NRECORDS, 0, 8); // one record fewer: 140 bytes left over
	REQUIRE(decode_error(good.bytes) == "rank 0: malformed block contents");
	const char *malformed = "rank 0: malformed block contents";
	SECTION("sites")
	{
		for (uint64_t n : std::vector<uint64_t>{ 2, 1000, UINT32_MAX }) {
			one_rank l;
			l.set(one_rank::NSITES, n, 4);
			CHECK(decode_error(l.bytes) == malformed);
		}
	}
	SECTION("records")
	{
		for (uint64_t n : std::vector<uint64_t>{ 2, 1ull << 32, 1ull << 60, UINT64_MAX }) {
			one_rank l;
			l.set(one_rank::NRECORDS, n, 8);
			CHECK(decode_error(l.bytes) == malformed);
		}
	}
	SECTION("a string's length")
	{
		one_rank l;
		l.set(one_rank::HOST, UINT32_MAX, 4);
		CHECK(decode_error(l.bytes) == malformed);
	}
	SECTION("a stack deeper than 32 frames")
	{
		one_rank l;
		l.set(one_rank::DEPTH, NT_LOG_MAX_DEPTH + 1, 4);
		CHECK(decode_error(l.bytes) == malformed);
		l.set(one_rank::DEPTH, UINT32_MAX, 4);
		CHECK(decode_error(l.bytes) == malformed);
	}
	SECTION("ranks in the header")
	{
		for (uint32_t n : { 2u, 1000000u, UINT32_MAX }) {
			one_rank l;
			put_le(l.bytes, 16, n, 4);
			put_le(l.bytes, 60, nt_crc32(0, l.bytes.data(), 60), 4);
			std::string e = decode_error(l.bytes);
			CHECK((e == "header claims " + std::to_string(n) +
					    " ranks, which the file size cannot hold (truncated?)" ||
			       e == "rank block 1 at byte " + std::to_string(l.bytes.size()) +
					    ": missing or truncated header"));
		}
	}
	SECTION("a rank block's length")
	{
		one_rank l;
		put_le(l.bytes, NT_LOG_HEADER_BYTES + 8, UINT64_MAX, 8);
		CHECK(decode_error(l.bytes) ==
		      "rank 0: block of 18446744073709551615 bytes runs past the end of the file "
		      "(truncated?)");
	}
}

namespace {

// The report of a log: its text, and its JSON on one line in *json.
std::string report_of(const std::vector<unsigned char> &bytes, std::string *json)
{
	struct nt_log log;
	char err[256];
	REQUIRE(nt_log_decode(bytes.data(), bytes.size(), &log, err, sizeof err) == 0);
	struct nt_report rep;
	REQUIRE(nt_report_build(&log, nullptr, nullptr, &rep) == 0);
	std::string out[2];
	for (int k = 0; k < 2; k++) {
		char *buf = nullptr;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		CHECK((k ? nt_report_write_json(f, &rep) : nt_report_write_text(f, &rep, "x.ntlog", 0)) ==
		      0);
		std::fclose(f);
		out[k] = buf;
		std::free(buf);
	}
	nt_report_free(&rep);
	nt_log_free(&log);
	*json = one_line(out[1]);
	return out[0];
}

} // namespace

TEST_CASE("log v7: the other tasks on a rank's CPUs are checked", "[ntlog]")
{
	const char *malformed = "rank 0: malformed block contents";
	one_rank ok(true);
	REQUIRE(decode_error(ok.bytes) == "");
	// Offsets from the payload's end, before the span and the batch job, then the readings'
	// cost: the interrupt line (kind, name, description, count), before it the two counts and
	// n; before them the task's pid, kind, time and name, and before it the rank's pid, flags,
	// time, count and n.
	const size_t end = ok.bytes.size() - ok.payload - one_rank::BATCH - one_rank::SPAN,
		     irq = end - one_rank::SCAN - one_rank::IRQ;
	const size_t task = irq - one_rank::IRQS - one_rank::TASK;
	const size_t flags = task - 20, count = task - 8, n = task - 4, nirqs = irq - 4;
	SECTION("flags of a later version")
	{
		one_rank r(true);
		r.set(flags, 16, 4);
		CHECK(decode_error(r.bytes) == malformed);
	}
	SECTION("not read at both ends (a short job): no task, no time with it")
	{
		one_rank e(false);
		const size_t f0 = e.bytes.size() - e.payload - one_rank::BATCH - one_rank::SPAN - one_rank::SCAN -
				  one_rank::IRQS -
				  one_rank::OTHERS + 4;
		e.set(f0, NT_LOG_OTHERS_SKIPPED | NT_LOG_IRQS_KNOWN, 4);
		CHECK(decode_error(e.bytes) == "");
		e.set(f0, NT_LOG_OTHERS_SKIPPED | NT_LOG_OTHERS_KNOWN, 4);
		CHECK(decode_error(e.bytes) == malformed);
		e.set(f0, NT_LOG_OTHERS_SKIPPED | NT_LOG_OTHERS_PARTIAL, 4);
		CHECK(decode_error(e.bytes) == malformed);
		one_rank r(true);
		r.set(flags, NT_LOG_OTHERS_SKIPPED | NT_LOG_IRQS_KNOWN, 4); // a task counted
		CHECK(decode_error(r.bytes) == malformed);
	}
	SECTION("more tasks than the format keeps, or than were counted")
	{
		one_rank r(true);
		r.set(n, NT_LOG_OTHERS_MAX + 1, 4);
		CHECK(decode_error(r.bytes) == malformed);
		one_rank c(true);
		c.set(count, 0, 4);
		CHECK(decode_error(c.bytes) == malformed);
	}
	SECTION("a kind no writer writes")
	{
		one_rank r(true);
		r.set(task + 4, NT_LOG_TASK_KIND_COUNT, 4);
		CHECK(decode_error(r.bytes) == malformed);
	}
	SECTION("a name without its NUL, or with a control character")
	{
		one_rank r(true);
		for (size_t i = 0; i < NT_LOG_TASK_COMM_BYTES; i++)
			r.set(task + 16 + i, 'x', 1);
		CHECK(decode_error(r.bytes) == malformed);
		one_rank c(true);
		c.set(task + 16 + 1, '\n', 1);
		CHECK(decode_error(c.bytes) == malformed);
	}
	SECTION("more interrupt lines than the format keeps, a kind no writer writes, a name "
		"without its NUL")
	{
		one_rank r(true);
		r.set(nirqs, NT_LOG_IRQS_MAX + 1, 4);
		CHECK(decode_error(r.bytes) == malformed);
		one_rank k(true);
		k.set(irq, NT_LOG_IRQ_KIND_COUNT, 4);
		CHECK(decode_error(k.bytes) == malformed);
		one_rank c(true);
		for (size_t i = 0; i < NT_LOG_IRQ_NAME_BYTES; i++)
			c.set(irq + 4 + i, 'x', 1);
		CHECK(decode_error(c.bytes) == malformed);
		one_rank d(true);
		d.set(irq + 4 + NT_LOG_IRQ_NAME_BYTES + 2, 0x7f, 1); // in the description
		CHECK(decode_error(d.bytes) == malformed);
	}
	SECTION("read as written")
	{
		struct nt_log log;
		char err[256];
		REQUIRE(nt_log_decode(ok.bytes.data(), ok.bytes.size(), &log, err, sizeof err) == 0);
		REQUIRE(log.ranks[0].nothers == 1);
		CHECK(std::string(log.ranks[0].others[0].comm) == "hog");
		CHECK(log.ranks[0].others[0].pid == 7);
		REQUIRE(log.ranks[0].nirqs == 1);
		CHECK(std::string(log.ranks[0].irqs[0].desc) == "Local timer interrupts");
		CHECK(log.ranks[0].irq_count == 9);
		nt_log_free(&log);
	}
}

TEST_CASE("log v4: the job's strings are checked as every other", "[ntlog]")
{
	const char *malformed = "rank 0: malformed block contents";
	SECTION("a length past the block, or into the next string")
	{
		for (uint64_t n : std::vector<uint64_t>{ 1, 12, 1000, UINT32_MAX }) {
			one_rank l;
			// Three empty strings, then the CPUs' (empty) and their four times end it.
			size_t command = l.bytes.size() - l.payload - 12 - one_rank::TAIL;
			l.set(command, 0, 4);
			REQUIRE(decode_error(l.bytes) == "");
			INFO("length " << n);
			l.set(command, n, 4);
			CHECK(decode_error(l.bytes) == malformed);
			one_rank t;
			t.set(t.bytes.size() - t.payload - 4 - one_rank::TAIL, n, 4); // the tool's version
			CHECK(decode_error(t.bytes) == malformed);
			one_rank c; // the last one: the CPUs' (version 6)
			c.set(c.bytes.size() - c.payload - one_rank::TAIL, n, 4);
			CHECK(decode_error(c.bytes) == malformed);
		}
	}
	SECTION("a NUL inside one")
	{
		fields f(1);
		f.ranks[0].command = "abc";
		f.ranks[0].mpi_library = "";
		f.ranks[0].tool_version = "";
		f.ranks[0].cpus = "";
		f.ranks[0].nothers = f.ranks[0].others_count = f.ranks[0].nirqs = 0;
		f.ranks[0].user = f.ranks[0].batch_system = f.ranks[0].batch_job =
			f.ranks[0].batch_nodes = "";
		auto b = f.encode();
		REQUIRE(decode_error(b) == "");
		b[b.size() - 8 - 2 - one_rank::TAIL] = 0; // the 'b' of the command, before the two empty strings
		size_t payload = NT_LOG_HEADER_BYTES + NT_LOG_RANK_HEADER_BYTES;
		put_le(b, payload - 8, nt_crc32(0, b.data() + payload, b.size() - payload), 4);
		CHECK(decode_error(b) == malformed);
	}
	SECTION("cut inside one")
	{
		auto b = fields(1).encode();
		CHECK(decode_error(std::vector<unsigned char>(b.begin(), b.end() - 3))
			      .find("runs past the end of the file (truncated?)") != std::string::npos);
	}
}

TEST_CASE("the report names the job: its command line, MPI, tool, hosts, user and batch job",
	  "[ntlog]")
{
	fields f(3); // three command lines, three hosts; ranks 0 and 2 in Slurm job 1234
	std::string js, t = report_of(f.encode(), &js);
	CHECK(t.find("noisetool report: x.ntlog\ncommand: /bin/app -n 0 (one of 3 different command "
		     "lines: an MPMD job)\nMPI: " + std::string(f.ranks[0].mpi_library) +
		     "\nbatch job: slurm 1234.0 on node[01-04], user alice\n3 ranks, ") == 0);
	CHECK(js.find("\"job\": {\"command\": \"/bin/app -n 0\",\"commands\": 3,\"mpi\": \"" +
		      std::string(f.ranks[0].mpi_library) + "\",\"tool_version\": \"" +
		      f.ranks[0].tool_version + "\",\"created_unix_ns\": 18364758544493064720," +
		      "\"hosts\": 3,\"user\": \"alice\",\"batch_system\": \"slurm\",\"batch_job\": "
		      "\"1234.0\",\"batch_nodes\": \"node[01-04]\"}") != std::string::npos);

	SECTION("outside a batch job: the user alone; rank 0 without a batch job: the lowest's")
	{
		f.ranks[0].batch_job = "";
		t = report_of(f.encode(), &js);
		CHECK(t.find("\nbatch job: slurm 1234.2 on node[01-04], user alice\n") !=
		      std::string::npos);
		f.ranks[2].batch_job = "";
		t = report_of(f.encode(), &js);
		CHECK(t.find("batch job:") == std::string::npos);
		CHECK(t.find("\nuser: alice\n") != std::string::npos);
		CHECK(js.find("\"user\": \"alice\",\"batch_system\": \"\",\"batch_job\": \"\",") !=
		      std::string::npos);
	}

	SECTION("one command line; rank 0 without one: the lowest rank's")
	{
		f.ranks[0].command = "";
		f.ranks[2].command = f.ranks[1].command;
		f.ranks[2].host = f.ranks[1].host;
		t = report_of(f.encode(), &js);
		CHECK(t.find("\ncommand: /bin/app -n 1\nMPI: ") != std::string::npos);
		CHECK(js.find("\"command\": \"/bin/app -n 1\",\"commands\": 1,") != std::string::npos);
		CHECK(js.find("\"hosts\": 2,") != std::string::npos);
	}
	SECTION("control characters never reach the terminal; a long line is cut")
	{
		std::string long_line(300, 'y');
		f.ranks[0].command = "app \x1b[2J";
		f.ranks[0].mpi_library = long_line.c_str();
		t = report_of(f.encode(), &js);
		CHECK(t.find("\ncommand: app ?[2J (one of 3") != std::string::npos);
		CHECK(t.find("\nMPI: " + std::string(119, 'y') + " ...\n") != std::string::npos);
		CHECK(js.find("\"command\": \"app \\u001b[2J\"") != std::string::npos);
	}
}

namespace {

// The offset of rank r's block in a log's bytes (walking the blocks' lengths).
size_t block_at(const std::vector<unsigned char> &b, uint32_t r)
{
	size_t at = NT_LOG_HEADER_BYTES;
	for (uint32_t i = 0; i < r; i++) {
		uint64_t plen = 0;
		for (int k = 7; k >= 0; k--)
			plen = plen << 8 | b[at + 8 + (size_t)k];
		at += NT_LOG_RANK_HEADER_BYTES + (size_t)plen;
	}
	return at;
}

bool starts_with(const std::string &s, const std::string &p)
{
	return s.compare(0, p.size(), p) == 0;
}

bool ends_with(const std::string &s, const std::string &p)
{
	return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

} // namespace

TEST_CASE("a log read from its file through any window is the log decoded from memory",
	  "[ntlog]")
{
	fields f(3);
	// A string longer than any window, and records enough to cross windows everywhere.
	std::string long_host(3 * NT_LOG_READ_CHUNK_BYTES / 2, 'h');
	f.ranks[1].host = long_host.c_str();
	for (int i = 0; i < 5000; i++) {
		struct nt_log_record x = f.recs[2][(size_t)i % 4];
		x.seq = (uint64_t)i;
		x.start_ns = (uint64_t)i * 1000;
		f.recs[2].push_back(x);
	}
	f.ranks[2].records = f.recs[2].data();
	f.ranks[2].nrecords = f.recs[2].size();
	auto bytes = f.encode();
	std::string path = write_file("good.ntlog", bytes);
	for (size_t chunk : windows) {
		INFO("window " << chunk);
		struct nt_log log;
		REQUIRE(read_error(path, chunk, nullptr, &log) == "");
		CHECK(log.version == NT_LOG_VERSION);
		CHECK(log.level == 2);
		CHECK(log.clock_hz == 3.123456789e9);
		CHECK(log.created_unix_ns == 0xfedcba9876543210ull);
		CHECK(log.flags == NT_LOG_FLAG_PARTIAL);
		REQUIRE(log.nranks == 3);
		for (uint32_t r = 0; r < 3; r++)
			check_rank(log.ranks[r], f.ranks[r]);
		nt_log_free(&log);
	}
	SECTION("and so is a log of an older version")
	{
		for (int version : { 1, 2, 3 }) {
			INFO("version " << version);
			auto old = spec_writer::log(f.ranks, version);
			CHECK(decode_error(old) == "");
		}
	}
	SECTION("the public reader, within the memory this process can take")
	{
		struct nt_log log;
		char err[256];
		REQUIRE(nt_log_read_file(path.c_str(), &log, err, sizeof err) == 0);
		check_rank(log.ranks[2], f.ranks[2]);
		nt_log_free(&log);
	}
}

TEST_CASE("a per-rank log is its header and its parts, read through any window", "[ntlog]")
{
	fields f(3);
	auto bytes = f.encode();
	std::string path = write_file("split.ntlog", std::vector<unsigned char>(
							     bytes.begin(), bytes.begin() + NT_LOG_HEADER_BYTES));
	for (uint32_t r = 0; r < 3; r++) {
		size_t a = block_at(bytes, r), b = r < 2 ? block_at(bytes, r + 1) : bytes.size();
		write_file("split.ntlog.part" + std::to_string(r),
			   std::vector<unsigned char>(bytes.begin() + (long)a, bytes.begin() + (long)b));
	}
	// Rank 1's block split across the end of part 0 and an empty part 1: the same bytes.
	size_t b1 = block_at(bytes, 1), b2 = block_at(bytes, 2);
	write_file("moved.ntlog", std::vector<unsigned char>(bytes.begin(),
							      bytes.begin() + NT_LOG_HEADER_BYTES));
	write_file("moved.ntlog.part0", std::vector<unsigned char>(
						bytes.begin() + NT_LOG_HEADER_BYTES, bytes.begin() + (long)b1 + 100));
	write_file("moved.ntlog.part1", {});
	write_file("moved.ntlog.part2", std::vector<unsigned char>(bytes.begin() + (long)b1 + 100,
								     bytes.end()));
	(void)b2;
	for (const char *name : { "split.ntlog", "moved.ntlog" }) {
		for (size_t chunk : windows) {
			INFO(name << ", window " << chunk);
			struct nt_log log;
			REQUIRE(read_error(scratch_dir() + "/" + name, chunk, nullptr, &log) == "");
			REQUIRE(log.nranks == 3);
			for (uint32_t r = 0; r < 3; r++)
				check_rank(log.ranks[r], f.ranks[r]);
			nt_log_free(&log);
		}
	}
	SECTION("a part missing, or not a regular file")
	{
		std::string part2 = path + ".part2";
		REQUIRE(unlink(part2.c_str()) == 0);
		int rc;
		CHECK(read_error(path, 1000, &rc) ==
		      "the header alone (truncated, or a per-rank log without its parts): cannot read " +
			      part2 + ": No such file or directory");
		CHECK(rc == -ENOENT);
		REQUIRE(mkfifo(part2.c_str(), 0600) == 0);
		CHECK(read_error(path, 1000, &rc) ==
		      "the header alone (truncated, or a per-rank log without its parts): cannot read " +
			      part2 + ": not a regular file");
		CHECK(rc == -ENODEV);
		REQUIRE(unlink(part2.c_str()) == 0);
	}
}

TEST_CASE("what is not a regular file is refused without being read", "[ntlog]")
{
	int rc;
	CHECK(read_error(scratch_dir(), 1000, &rc) == "cannot read: Is a directory");
	CHECK(rc == -EISDIR);
	std::string fifo = scratch_dir() + "/fifo.ntlog"; // no writer: a read would block
	REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
	CHECK(read_error(fifo, 1000, &rc) == "cannot read: not a regular file");
	CHECK(rc == -ENODEV);
	unlink(fifo.c_str());
	CHECK(read_error("/dev/null", 1000, &rc) == "cannot read: not a regular file");
	CHECK(read_error(scratch_dir() + "/none.ntlog", 1000, &rc) ==
	      "cannot read: No such file or directory");
	CHECK(rc == -ENOENT);
	struct nt_log log;
	CHECK(nt_log_read_file_with(fifo.c_str(), NT_LOG_READ_MIN_CHUNK_BYTES - 1, nullptr, &log,
				    nullptr, 0) == -EINVAL);
}

TEST_CASE("the reader takes no more memory than its room, and says which room", "[ntlog]")
{
	fields f(3);
	auto bytes = f.encode();
	std::string path = write_file("room.ntlog", bytes);
	struct nt_mem_headroom room;
	std::memset(&room, 0, sizeof room);
	std::snprintf(room.by, sizeof room.by, "a test's room");
	std::snprintf(room.raise, sizeof room.raise, "give it more");
	int rc;
	SECTION("a file larger than the room: refused before it is read")
	{
		room.bytes = bytes.size() - 1;
		std::string e = read_error(path, 1000, &rc, nullptr, &room);
		CHECK(rc == -ENOMEM);
		CHECK(starts_with(e, "cannot read: the log is "));
		CHECK(ends_with(e, " of memory this process can take (a test's room), and reading it "
				   "takes more than its size: give it more"));
	}
	SECTION("a room that grows: refused at a later rank, then read")
	{
		uint32_t last = 0;
		bool read = false;
		for (room.bytes = bytes.size(); !read; room.bytes += 512) {
			std::string e = read_error(path, 1000, &rc, nullptr, &room);
			if (rc == 0) {
				read = true;
				break;
			}
			INFO(e);
			REQUIRE(rc == -ENOMEM);
			REQUIRE(starts_with(e, "cannot read: out of memory at rank "));
			CHECK(ends_with(e, "this process can take (a test's room): give it more"));
			uint32_t at = (uint32_t)std::stoul(e.substr(35));
			CHECK(at >= last);
			last = at;
		}
		CHECK(read);
		CHECK(last == 2); // each rank's share counted as it is decoded
	}
	SECTION("refused inside a corrupt block, the corruption is what is said")
	{
		room.bytes = bytes.size();
		std::string e;
		for (; (e = read_error(path, 1000, &rc, nullptr, &room)).find("at rank 2:") ==
		       std::string::npos;
		     room.bytes += 512)
			REQUIRE(rc == -ENOMEM);
		auto bad = bytes;
		bad[bad.size() - 20] ^= 1; // in rank 2's job strings
		std::string bad_path = write_file("room-bad.ntlog", bad);
		CHECK(read_error(bad_path, 1000, &rc, nullptr, &room) ==
		      "rank 2: checksum mismatch (corrupt block at byte " +
			      std::to_string(block_at(bytes, 2)) + ")");
		CHECK(rc == -EINVAL);
	}
}
