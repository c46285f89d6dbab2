// The split of NOISETOOL_MEM between the tables (wrappers/arena.c), with the wrapper library's
// entry sizes as they are on x86-64 (a site 664 bytes with its list slot, 186 merged sites, a
// communicator and its vote state 100 with MPICH, 112 with Open MPI, a request entry 80, a record
// 152) and made-up ones.
#include <catch2/catch.hpp>

#include <cerrno>

#include "arena.h"

namespace {

const struct nt_arena_units units = { 664, 186 * 664, 112, 80, 152 };

bool power_of_two(size_t n)
{
	return n && (n & (n - 1)) == 0;
}

void check_plan(uint64_t mem, const struct nt_arena_units &u)
{
	struct nt_arena_plan p;
	REQUIRE(nt_arena_plan(mem, &u, &p) == 0);
	struct nt_arena_layout l;
	nt_arena_layout(&p, &u, &l);
	INFO("mem " << mem << ": sites " << p.sites << ", comms " << p.comms << ", requests "
		    << p.requests << ", records " << p.records);
	CHECK(p.bytes <= mem);
	CHECK(power_of_two(p.sites));
	CHECK(power_of_two(p.comms));
	CHECK(power_of_two(p.requests));
	CHECK(u.fixed_sites + p.sites * u.site <= mem / 4);
	CHECK(p.comms * u.comm <= mem / 32);
	CHECK(2 * p.requests * u.request <= mem / 16);
	// The parts do not overlap, each starts on a cache line, and the records end the plan.
	CHECK(l.comms >= l.sites + u.fixed_sites + p.sites * u.site);
	CHECK(l.requests >= l.comms + p.comms * u.comm);
	CHECK(l.records >= l.requests + 2 * p.requests * u.request);
	CHECK(l.comms % 64 == 0);
	CHECK(l.requests % 64 == 0);
	CHECK(l.records % 64 == 0);
	CHECK(p.bytes == l.records + p.records * u.record);
	// Nothing is left that would hold one more record.
	CHECK(mem - p.bytes < u.record);
}

} // namespace

TEST_CASE("arena: every size from the smallest to the largest fits its memory")
{
	for (uint64_t mem = NT_ARENA_MIN; mem <= NT_ARENA_MAX; mem *= 2) {
		check_plan(mem, units);
		if (mem < NT_ARENA_MAX)
			check_plan(mem + 12345, units);
	}
}

TEST_CASE("arena: the default 16 MiB holds 4096 sites, 4096 communicators and 4096 requests")
{
	struct nt_arena_plan p;
	REQUIRE(nt_arena_plan(16u << 20, &units, &p) == 0);
	CHECK(p.sites == 4096);
	CHECK(p.comms == 4096);
	CHECK(p.requests == 4096);
	CHECK(p.records > 70000);
}

TEST_CASE("arena: the smallest still holds a hundred sites and thousands of records")
{
	struct nt_arena_plan p;
	REQUIRE(nt_arena_plan(NT_ARENA_MIN, &units, &p) == 0);
	CHECK(p.sites >= 64);
	CHECK(p.comms >= 64);
	CHECK(p.requests >= 64);
	CHECK(p.records >= 4000);
}

TEST_CASE("arena: tables stop growing at 65536 slots; the rest goes to records")
{
	struct nt_arena_plan p;
	REQUIRE(nt_arena_plan(NT_ARENA_MAX, &units, &p) == 0);
	CHECK(p.sites == 65536);
	CHECK(p.comms == 65536);
	CHECK(p.requests == 65536);
	CHECK(p.records > (3ull << 30) / units.record);
}

TEST_CASE("arena: sizes outside the range, or a quarter too small for the merged sites, are refused")
{
	struct nt_arena_plan p;
	CHECK(nt_arena_plan(NT_ARENA_MIN - 1, &units, &p) == -EINVAL);
	CHECK(nt_arena_plan(NT_ARENA_MAX + 1, &units, &p) == -EINVAL);
	struct nt_arena_units big = units;
	big.fixed_sites = NT_ARENA_MIN / 4;
	CHECK(nt_arena_plan(NT_ARENA_MIN, &big, &p) == -EINVAL);
	struct nt_arena_units zero = units;
	zero.record = 0;
	CHECK(nt_arena_plan(NT_ARENA_MIN, &zero, &p) == -EINVAL);
}
