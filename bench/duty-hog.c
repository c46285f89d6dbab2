/* A real shared-CPU noise source for bench/bench-sim-real.sh: examples/common/duty-load.h's
 * duty-cycle load (busy DUTY % of every 10 ms, asleep the rest) at the caller's priority, so
 * the scheduler shares the CPU between it and a rank; bounded by SIGALRM. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../examples/common/duty-load.h"

int main(int argc, char **argv)
{
	char *e1, *e2;
	long duty = argc == 3 ? strtol(argv[1], &e1, 10) : -1;
	long seconds = argc == 3 ? strtol(argv[2], &e2, 10) : -1;
	if (argc != 3 || *e1 || *e2 || duty < 1 || duty > 100 || seconds < 1 || seconds > 3600) {
		fprintf(stderr, "usage: duty-hog DUTY SECONDS (DUTY 1 to 100 %%, SECONDS 1 to "
				"3600); pin it with taskset\n");
		return 2;
	}
	alarm((unsigned)seconds); /* default action: terminate */
	duty_load_forever((int)duty);
}
