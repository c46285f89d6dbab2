// The memory headroom (libnoisetool/mem-headroom.c): never more than the memory available, and an
// address-space limit (ulimit -v) is named when it is the smallest.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <sys/resource.h>

extern "C" {
#include "mem-headroom.h" // private to the core, without its own extern "C"
}

namespace {

// A "Name: N kB" field of a /proc file in bytes, or 0.
uint64_t proc_kib(const char *path, const char *name)
{
	FILE *f = std::fopen(path, "r");
	REQUIRE(f != nullptr);
	char line[256];
	unsigned long long kib = 0;
	size_t n = std::strlen(name);
	while (std::fgets(line, sizeof line, f))
		if (std::strncmp(line, name, n) == 0 && line[n] == ':')
			kib = std::strtoull(line + n + 1, nullptr, 10);
	std::fclose(f);
	return kib * 1024;
}

} // namespace

TEST_CASE("the room is at most the memory available, and says what sets it", "[mem-headroom]")
{
	struct nt_mem_headroom room;
	nt_mem_headroom(&room);
	uint64_t avail = proc_kib("/proc/meminfo", "MemAvailable");
	if (avail) // (read again: the machine's other work moves it a little)
		CHECK(room.bytes <= avail + avail / 4);
	CHECK(room.bytes > 0);
	CHECK(room.by[0] != '\0');
	if (room.bytes != UINT64_MAX)
		CHECK(room.raise[0] != '\0');
}

TEST_CASE("an address-space limit below the memory available is the room", "[mem-headroom]")
{
	struct rlimit old;
	REQUIRE(getrlimit(RLIMIT_AS, &old) == 0);
	uint64_t used = proc_kib("/proc/self/status", "VmSize");
	uint64_t lim = used + (64u << 20);
	if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim)
		return; // a hard limit already below it: nothing to lower
	struct rlimit low = old;
	low.rlim_cur = lim;
	REQUIRE(setrlimit(RLIMIT_AS, &low) == 0);
	struct nt_mem_headroom room;
	nt_mem_headroom(&room);
	REQUIRE(setrlimit(RLIMIT_AS, &old) == 0);
	CHECK(room.bytes <= (64u << 20));
	CHECK(room.bytes > (32u << 20));
	CHECK(std::string(room.by) == "the headroom of its address-space limit: ulimit -v");
	CHECK(std::string(room.raise) == "raise ulimit -v");
}
