// Unit tests of the writers: json-write.c (the streaming JSON writer), noise.c's JSON document,
// and trace.c (the TSV trace, both ways); outfile.c has its own (test-outfile.cpp).
#include <catch2/catch.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool/noise.h>
#include <noisetool/outfile.h>

extern "C" {
#include "json-write.h"
}

namespace {

// An in-memory FILE whose text is available after close().
class memfile {
public:
	memfile() { f_ = open_memstream(&buf_, &len_); }
	~memfile()
	{
		if (f_)
			fclose(f_);
		free(buf_);
	}
	memfile(const memfile &) = delete;
	memfile &operator=(const memfile &) = delete;
	FILE *f() { return f_; }
	std::string text()
	{
		fflush(f_);
		return std::string(buf_, len_);
	}

private:
	char *buf_ = nullptr;
	size_t len_ = 0;
	FILE *f_ = nullptr;
};

// A FILE reading from a string (fmemopen needs a mutable buffer that outlives it).
class strfile {
public:
	explicit strfile(const std::string &s) : data_(s)
	{
		f_ = fmemopen(&data_[0], data_.size(), "r");
	}
	~strfile()
	{
		if (f_)
			fclose(f_);
	}
	strfile(const strfile &) = delete;
	strfile &operator=(const strfile &) = delete;
	FILE *f() { return f_; }

private:
	std::string data_;
	FILE *f_ = nullptr;
};

bool has_key(const std::string &doc, const char *key)
{
	return doc.find(std::string("\"") + key + "\": ") != std::string::npos;
}

} // namespace

TEST_CASE("JSON writer", "[json]")
{
	memfile m;
	REQUIRE(m.f() != nullptr);
	struct nt_json j;
	nt_json_init(&j, m.f());

	SECTION("a nested document, exactly")
	{
		nt_json_object_begin(&j, nullptr);
		nt_json_string(&j, "s", "q\"b\\s\nn\tt\rr\x01" "c\x1f" "e");
		nt_json_array_begin(&j, "arr");
		nt_json_int(&j, nullptr, -3);
		nt_json_uint(&j, nullptr, UINT64_MAX);
		nt_json_double(&j, nullptr, NAN);
		nt_json_double(&j, nullptr, 1.5);
		nt_json_double(&j, nullptr, INFINITY);
		nt_json_object_begin(&j, nullptr);
		nt_json_bool(&j, "f", false);
		nt_json_object_end(&j);
		nt_json_array_end(&j);
		nt_json_object_begin(&j, "empty");
		nt_json_object_end(&j);
		nt_json_array_begin(&j, "none");
		nt_json_array_end(&j);
		nt_json_string(&j, "k\"ey", nullptr);
		nt_json_double(&j, "nan", NAN);
		nt_json_bool(&j, "t", true);
		nt_json_object_end(&j);
		CHECK(nt_json_finish(&j) == 0);

		const char *expected = "{\n"
				       "  \"s\": \"q\\\"b\\\\s\\nn\\tt\\rr\\u0001c\\u001fe\",\n"
				       "  \"arr\": [\n"
				       "    -3,\n"
				       "    18446744073709551615,\n"
				       "    null,\n"
				       "    1.5,\n"
				       "    null,\n"
				       "    {\n"
				       "      \"f\": false\n"
				       "    }\n"
				       "  ],\n"
				       "  \"empty\": {},\n"
				       "  \"none\": [],\n"
				       "  \"k\\\"ey\": \"\",\n"
				       "  \"nan\": null,\n"
				       "  \"t\": true\n"
				       "}\n";
		CHECK(m.text() == expected);
	}

	SECTION("strings stay UTF-8: each byte that starts no UTF-8 sequence is U+FFFD")
	{
		nt_json_array_begin(&j, nullptr);
		// Valid sequences of 1 to 4 bytes pass as they are.
		nt_json_string(&j, nullptr, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z");
		// Latin-1 é, a lone continuation byte, a sequence cut by the end, an overlong '/',
		// a surrogate, a code point past U+10FFFF, bytes 0xf8-0xff.
		nt_json_string(&j, nullptr, "\xe9|\x80|\xe2\x82|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xff");
		nt_json_array_end(&j);
		CHECK(nt_json_finish(&j) == 0);
		const char *expected = "[\n"
				       "  \"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z\",\n"
				       "  \"\\ufffd|\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd|"
				       "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\"\n"
				       "]\n";
		CHECK(m.text() == expected);
	}

	SECTION("an unclosed object is an error")
	{
		nt_json_object_begin(&j, nullptr);
		nt_json_array_begin(&j, "a");
		nt_json_array_end(&j);
		CHECK(nt_json_finish(&j) == -EIO);
	}

	SECTION("one end too many is an error")
	{
		nt_json_array_begin(&j, nullptr);
		nt_json_array_end(&j);
		nt_json_array_end(&j);
		CHECK(nt_json_finish(&j) == -EIO);
	}

	SECTION("nesting deeper than NT_JSON_MAX_DEPTH is an error")
	{
		for (int i = 0; i < NT_JSON_MAX_DEPTH + 1; i++)
			nt_json_array_begin(&j, nullptr);
		for (int i = 0; i < NT_JSON_MAX_DEPTH + 1; i++)
			nt_json_array_end(&j);
		CHECK(nt_json_finish(&j) == -EIO);
	}
}

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

	SECTION("NULL arguments give -EINVAL")
	{
		CHECK(nt_node_noise_write_json(nullptr, &node) == -EINVAL);
		CHECK(nt_node_noise_write_json(m.f(), nullptr) == -EINVAL);
	}
}

TEST_CASE("TSV trace", "[trace]")
{
	char err[128];

	SECTION("write then read round-trips exactly")
	{
		std::vector<struct nt_detour> d = {
			{ 0, 1, 0 }, { 1000, 2500, 0 }, { 123456789012ull, 5000000, 0 },
			{ 1ull << 56, 3600000000000ull, 0 }, // the reader's limits
		};
		memfile m;
		REQUIRE(nt_trace_write(m.f(), d.data(), d.size()) == 0);
		std::string text = m.text();
		CHECK(text.substr(0, 13) == "0\t1\n1000\t2500");

		strfile in(text);
		struct nt_detour *out = nullptr;
		size_t n = 99;
		REQUIRE(nt_trace_read(in.f(), &out, &n, err, sizeof err) == 0);
		REQUIRE(n == d.size());
		for (size_t i = 0; i < n; i++) {
			CHECK(out[i].start_ns == d[i].start_ns);
			CHECK(out[i].duration_ns == d[i].duration_ns);
			CHECK(out[i].flags == 0);
		}
		free(out);
	}

	SECTION("a start past 2^56 ns or a detour over an hour is refused, naming the line")
	{
		for (const char *bad : { "1\t2\n72057594037927937\t1\n", "1\t2\n5\t3600000000001\n",
					 "1\t2\n18446744073709551614\t18446744073709551615\n" }) {
			INFO(bad);
			strfile in(bad);
			struct nt_detour *out = nullptr;
			size_t n = 99;
			CHECK(nt_trace_read(in.f(), &out, &n, err, sizeof err) == -EINVAL);
			CHECK(std::string(err).find("line 2: ") == 0);
			CHECK(std::string(err).find("out of range") != std::string::npos);
		}
	}

	SECTION("an empty trace reads as none")
	{
		memfile m;
		REQUIRE(nt_trace_write(m.f(), nullptr, 0) == 0);
		strfile in(m.text() + "\n");
		struct nt_detour *out = nullptr;
		size_t n = 99;
		REQUIRE(nt_trace_read(in.f(), &out, &n, err, sizeof err) == 0);
		CHECK(n == 0);
		free(out);
	}

	SECTION("comments and blank lines are skipped")
	{
		strfile in("# noise trace\n\n10\t20\n   \n  # indented comment\n30 40\r\n\t50\t60\n");
		struct nt_detour *out = nullptr;
		size_t n = 0;
		REQUIRE(nt_trace_read(in.f(), &out, &n, err, sizeof err) == 0);
		REQUIRE(n == 3);
		CHECK(out[0].start_ns == 10);
		CHECK(out[0].duration_ns == 20);
		CHECK(out[1].start_ns == 30);
		CHECK(out[1].duration_ns == 40);
		CHECK(out[2].start_ns == 50);
		CHECK(out[2].duration_ns == 60);
		CHECK(std::string(err).empty());
		free(out);
	}

	SECTION("malformed lines are rejected with their line number")
	{
		for (const char *bad : { "12 x", "abc", "1\t2\t3" }) {
			std::string text = std::string("# header\n\n1\t2\n") + bad + "\n5\t6\n";
			strfile in(text);
			struct nt_detour sentinel = { 7, 7, 7 };
			struct nt_detour *out = &sentinel;
			size_t n = 99;
			INFO("line: " << bad);
			CHECK(nt_trace_read(in.f(), &out, &n, err, sizeof err) == -EINVAL);
			CHECK(out == nullptr);
			CHECK(n == 0);
			CHECK(std::string(err).find("line 4") != std::string::npos);
		}
	}

	SECTION("a number beyond 64 bits is rejected")
	{
		strfile in("1\t2\n18446744073709551616\t1\n");
		struct nt_detour *out = nullptr;
		size_t n = 99;
		CHECK(nt_trace_read(in.f(), &out, &n, err, sizeof err) == -EINVAL);
		CHECK(out == nullptr);
		CHECK(std::string(err).find("line 2") != std::string::npos);
	}

	SECTION("NULL arguments give -EINVAL")
	{
		struct nt_detour *out = nullptr;
		size_t n = 0;
		CHECK(nt_trace_read(nullptr, &out, &n, err, sizeof err) == -EINVAL);
		CHECK(nt_trace_write(nullptr, nullptr, 0) == -EINVAL);
		memfile m;
		CHECK(nt_trace_write(m.f(), nullptr, 1) == -EINVAL);
	}
}
