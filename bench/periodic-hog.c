/* A real periodic noise source for bench/bench-sim-real.sh: pinned to one CPU at SCHED_FIFO, it
 * wakes every period at multiples of the period on CLOCK_MONOTONIC (plus an offset, so that two
 * hogs with one period stay in phase) and spins for the detour's length, for a bounded time. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"Usage: periodic-hog --cpu C --period-us P --spin-us D [--offset-us O] --seconds S\n"
	"                    [--priority N]\n"
	"\n"
	"Pinned to CPU C at SCHED_FIFO priority N (default 50), wake at k*P + O us of\n"
	"CLOCK_MONOTONIC and spin D us, for S seconds (killed by SIGALRM 5 s after that in any\n"
	"case). If SCHED_FIFO is refused, run at nice -20 and say so on stderr. Prints 'ready'\n"
	"on stdout once pinned and scheduled.\n";

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double arg_double(const char *v, double min, double max, const char *what)
{
	char *end;
	double x = v ? strtod(v, &end) : 0;
	if (!v || *end || !(x >= min && x <= max)) {
		fprintf(stderr, "periodic-hog: %s: expected %g to %g\n", what, min, max);
		exit(2);
	}
	return x;
}

int main(int argc, char **argv)
{
	double cpu = -1, period_us = 0, spin_us = -1, offset_us = 0, seconds = 0, prio = 50;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--cpu")) {
			cpu = arg_double(v, 0, CPU_SETSIZE - 1, "--cpu");
		} else if (!strcmp(argv[i], "--period-us")) {
			period_us = arg_double(v, 10, 1e7, "--period-us");
		} else if (!strcmp(argv[i], "--spin-us")) {
			spin_us = arg_double(v, 0, 1e7, "--spin-us");
		} else if (!strcmp(argv[i], "--offset-us")) {
			offset_us = arg_double(v, 0, 1e7, "--offset-us");
		} else if (!strcmp(argv[i], "--seconds")) {
			seconds = arg_double(v, 0.001, 3600, "--seconds");
		} else if (!strcmp(argv[i], "--priority")) {
			prio = arg_double(v, 1, 99, "--priority");
		} else {
			fprintf(stderr, "periodic-hog: unknown option or missing value: %s\n%s",
				argv[i], usage);
			return 2;
		}
		i++;
	}
	if (cpu < 0 || period_us == 0 || spin_us < 0 || seconds == 0) {
		fprintf(stderr, "periodic-hog: --cpu, --period-us, --spin-us and --seconds are "
				"required\n");
		return 2;
	}
	if (spin_us >= period_us || offset_us >= period_us) {
		fprintf(stderr, "periodic-hog: a %g us %s is not shorter than the %g us period\n",
			spin_us >= period_us ? spin_us : offset_us,
			spin_us >= period_us ? "spin" : "offset", period_us);
		return 2;
	}
	alarm((unsigned)seconds + 5); /* default action: terminate, whatever the loop does */

	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set)) {
		fprintf(stderr, "periodic-hog: cannot pin to CPU %g: %s\n", cpu, strerror(errno));
		return 1;
	}
	struct sched_param sp = { .sched_priority = (int)prio };
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		int e = errno;
		if (setpriority(PRIO_PROCESS, 0, -20))
			fprintf(stderr, "periodic-hog: SCHED_FIFO refused (%s) and nice -20 too "
				"(%s): default priority\n", strerror(e), strerror(errno));
		else
			fprintf(stderr, "periodic-hog: SCHED_FIFO refused (%s): nice -20 instead\n",
				strerror(e));
	}
	printf("ready\n");
	fflush(stdout);

	const uint64_t period_ns = (uint64_t)(period_us * 1e3), spin_ns = (uint64_t)(spin_us * 1e3);
	const uint64_t offset_ns = (uint64_t)(offset_us * 1e3);
	uint64_t t = now_ns(), end_ns = t + (uint64_t)(seconds * 1e9);
	uint64_t next_ns = (t / period_ns + 1) * period_ns + offset_ns;
	while (next_ns < end_ns) {
		struct timespec ts = { (time_t)(next_ns / 1000000000u),
				       (long)(next_ns % 1000000000u) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		while (now_ns() < next_ns + spin_ns)
			;
		next_ns += period_ns;
		t = now_ns();
		if (t > next_ns) /* late (throttled or preempted): the next tooth on the grid */
			next_ns += (t - next_ns) / period_ns * period_ns + period_ns;
	}
	return 0;
}
