/* Busy work for the MPI test programs: spin on CLOCK_MONOTONIC for us microseconds. */
#ifndef TESTS_MPI_COMPUTE_H
#define TESTS_MPI_COMPUTE_H

#include <time.h>

static inline void compute_us(double us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3 < us);
}

#endif /* TESTS_MPI_COMPUTE_H */
