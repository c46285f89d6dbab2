/* A synthetic competing load for the examples: duty percent of every 10 ms on the CPU, the
 * rest asleep (100: never sleeps). Stand-ins for the seed's grep (~15 %), gcc (~50 %) and
 * infinite loop (100 %). */
#ifndef EXAMPLES_DUTY_LOAD_H
#define EXAMPLES_DUTY_LOAD_H

#include <stdint.h>
#include <time.h>

__attribute__((noreturn)) static inline void duty_load_forever(int duty)
{
	const uint64_t period_ns = 10000000, busy_ns = period_ns * (uint64_t)duty / 100;
	for (;;) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		do
			clock_gettime(CLOCK_MONOTONIC, &b);
		while ((uint64_t)((b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec)) < busy_ns);
		if (duty < 100) {
			struct timespec ts = { 0, (long)(period_ns - busy_ns) };
			nanosleep(&ts, NULL);
		}
	}
}

#endif /* EXAMPLES_DUTY_LOAD_H */
