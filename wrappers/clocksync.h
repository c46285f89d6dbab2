/* The job's global time base: rank 0's clock. Each rank measures its offset to rank 0 by
 * ping-pong over a binomial tree (O(log P) rounds; the offset to a parent taken at the
 * exchange with the smallest round trip, errors adding up along the path), once after MPI_Init
 * and once before MPI_Finalize; the two give offset and drift. The waits give the CPU away
 * (toolwait.h), so ranks sharing a CPU pass the pings without losing scheduler slices.
 *
 * Test hook: NOISETOOL_TEST_CLOCK=RANK:OFFSET_NS:DRIFT_PPM[;...] makes the named ranks' local
 * clock run off by that offset and rate, so that a test can prove the correction. */
#ifndef WRAPPERS_CLOCKSYNC_H
#define WRAPPERS_CLOCKSYNC_H

#include <stdint.h>

#include <mpi.h>

struct nt_clocksync_point {
	double local_ns;  /* this rank's clock at the measurement */
	double offset_ns; /* rank 0's clock minus this rank's, then */
	double error_ns;  /* bound: half the round trips along the path to rank 0 */
};

/* A rank's local clock: local_ns = true + offset_ns + rate * (true - origin_ns), where
 * true = counter / hz. offset and rate are 0 unless the test hook names the rank. */
struct nt_clock_params {
	double hz, offset_ns, rate, origin_ns;
};

/* This rank's clock parameters. */
void nt_clocksync_params(struct nt_clock_params *p);

/* The local clock of a rank with parameters p, of a counter value (one node: one counter). */
double nt_clocksync_local_ns_with(const struct nt_clock_params *p, uint64_t cyc);

/* Read the test hook for this rank. A malformed hook, or one with a value that is not finite or
 * out of its bounds (an hour's offset, 10^4 ppm), is ignored whole and reported in err. */
void nt_clocksync_hook(int rank, char *err, size_t errsz);

/* This rank's local clock, in ns, of a counter value (the test hook applied). */
double nt_clocksync_local_ns(uint64_t cyc);

/* The true clock (no hook) of a counter value, for the hook's error measurement. */
double nt_clocksync_true_ns(uint64_t cyc);

/* Measure this rank's offset to rank 0 (collective over comm; point-to-point messages with tag
 * 4242 only, every one received before it returns). */
void nt_clocksync_measure(MPI_Comm comm, struct nt_clocksync_point *out);

/* Global time of a local time from the two measurements (drift from their offsets). */
double nt_clocksync_global_ns(const struct nt_clocksync_point *a,
			      const struct nt_clocksync_point *b, double local_ns);

#endif /* WRAPPERS_CLOCKSYNC_H */
