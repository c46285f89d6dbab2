// When a rank makes its first reading of the node's tasks (wrappers/cpushare.h,
// nt_cpushare_due): not before both readings fit the read budget, then at an instance that
// every member of the communicator picks alike although their clocks since MPI_Init differ a
// little, and soon after it is affordable.
#include <catch2/catch.hpp>

#include <cstdint>

#include "cpushare.h"

namespace {

const uint64_t est_ns = 2048000; // 111 threads here: 1.53 ms, rounded up to 2.048
const double ms = 1e6;

// The first instance at which a rank whose instances come every per_ns, its clock skew_ns
// ahead, finds the reading due; its elapsed time there in *at_ns.
uint64_t first_due(double per_ns, double skew_ns, double *at_ns)
{
	for (uint64_t seq = 0;; seq++) {
		double elapsed = (double)(seq + 1) * per_ns + skew_ns;
		if (nt_cpushare_due(elapsed, seq, est_ns)) {
			*at_ns = elapsed;
			return seq;
		}
	}
}

} // namespace

TEST_CASE("cpushare: the first reading waits until both fit the budget", "[cpushare]")
{
	// 2.5 x 2.048 ms within 1 % of the time so far: 0.512 s.
	CHECK_FALSE(nt_cpushare_due(0, 0, est_ns));
	CHECK_FALSE(nt_cpushare_due(-5 * ms, 0, est_ns));
	CHECK_FALSE(nt_cpushare_due(511 * ms, 511, est_ns));
	CHECK(nt_cpushare_due(513 * ms, 511, est_ns)); // 512 instances, 8 x 64 ms
	// At 1 ms an instance, 64 instances last 64 ms: due at a multiple of 64 only.
	CHECK_FALSE(nt_cpushare_due(601 * ms, 600, est_ns));
	CHECK(nt_cpushare_due(640 * ms, 639, est_ns));
	// A costlier node waits longer: 8.192 ms, 2.05 s.
	CHECK_FALSE(nt_cpushare_due(1024 * ms, 1023, 4 * est_ns));
	CHECK(nt_cpushare_due(2048 * ms, 2047, 4 * est_ns));
}

TEST_CASE("cpushare: members a millisecond apart read at the same instance, soon after it is "
	  "affordable", "[cpushare]")
{
	// Instances from 2 us to 20 ms apart; one member's clock 1 ms ahead of the other's (more
	// than they were seen apart here). They disagree only where the threshold falls between
	// their clocks at a candidate instance: about 1 ms in 64, whatever the rate.
	int disagree = 0, n = 0;
	for (double per = 2000; per < 20 * ms; per *= 1.013, n++) {
		double a_ns, b_ns;
		uint64_t a = first_due(per, 0, &a_ns), b = first_due(per, 1 * ms, &b_ns);
		disagree += a != b;
		INFO("an instance every " << per << " ns: due at " << a << " (" << a_ns << " ns) and "
					  << b << " (" << b_ns << " ns)");
		// Never before it is affordable, at most two candidate spans (and an instance)
		// after.
		CHECK(a_ns >= 512 * ms);
		CHECK(a_ns <= 512 * ms + 2 * NT_CPUSHARE_DUE_NS + per);
	}
	INFO(disagree << " of " << n << " rates disagreed");
	CHECK(disagree <= n / 20);
}
