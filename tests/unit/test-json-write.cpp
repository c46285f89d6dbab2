// The streaming JSON writer (libnoisetool/json-write.c): a nested document exactly, strings
// escaped and kept UTF-8, and every misuse of nesting an error.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <string>

extern "C" {
#include "json-write.h" // private to the core, without its own extern "C"
}

#include "memfile.h"

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
