/* The tool's own waits: a test loop that gives the CPU away (toolwait.h). */
#include <sched.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <time.h>

#include <noisetool/clock.h>

#include "toolwait.h"

/* Ranks of one job that share a CPU hand it to each other best by yielding; but beside a task
 * that does not yield (another job's busy MPI rank, a hog) a yield lasts a whole slice (4-8 ms
 * here). So when the mean of the last few yields is over 200 us, the waits nap instead for the
 * next 20 ms, then try a yield again. A nap asks for 10 us with 1 us of timer slack (with the
 * default 50 us of slack a nap lasts ~60 us; the numbers of wrappers/mpiwait.c). Measured with
 * the clock sync's ping-pong between two ranks sharing a CPU, 4 ranks on 2 CPUs beside other
 * jobs' busy MPI ranks: round trips of median 0.6-2.2 ms with yields only, 50-60 us with naps
 * only, 50-58 us with this rule. */
#define LONG_YIELD_NS 200000.0
#define NAPS_NS 20000000u
#define NAP_NS 10000
#define NAP_SLACK_NS 1000

static double yield_mean_ns;
static uint64_t naps_until_ns;

struct giving {
	int old_slack; /* the thread's timer slack before the first nap, -1 while unchanged */
};

static void give_cpu(struct giving *g)
{
	uint64_t t0 = nt_clock_monotonic_ns();
	if (t0 < naps_until_ns) {
		if (g->old_slack < 0) {
			g->old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
			prctl(PR_SET_TIMERSLACK, NAP_SLACK_NS, 0, 0, 0);
		}
		struct timespec ts = { 0, NAP_NS };
		nanosleep(&ts, NULL);
		return;
	}
	sched_yield();
	uint64_t t1 = nt_clock_monotonic_ns();
	yield_mean_ns += ((double)(t1 - t0) - yield_mean_ns) / 4;
	if (yield_mean_ns > LONG_YIELD_NS) {
		naps_until_ns = t1 + NAPS_NS;
		yield_mean_ns = 0; /* judged afresh when the naps end */
	}
}

static void given_back(const struct giving *g)
{
	if (g->old_slack >= 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)g->old_slack, 0, 0, 0);
}

/* Spinning: the clock is read every SPIN_CHECK tests only (a read in every test delayed the
 * clock sync's notice of a pong: its best round trips came out 10 ns longer, 1 %). */
enum { SPIN_CHECK = 16 };

static bool spun_out(unsigned i, bool giving, uint64_t until_cyc)
{
	return giving || (i % SPIN_CHECK == 0 && nt_clock_now_cyc() >= until_cyc);
}

int nt_toolwait_all(int count, MPI_Request requests[], MPI_Status *statuses, uint64_t spin_ns)
{
	uint64_t until_cyc = nt_clock_now_cyc() + nt_clock_ns_to_cyc((double)spin_ns);
	bool giving = spin_ns == 0;
	struct giving g = { -1 };
	int rc;
	for (unsigned i = 1;; i++) {
		int flag = 0;
		rc = PMPI_Testall(count, requests, &flag, statuses);
		if (rc != MPI_SUCCESS || flag)
			break;
		if ((giving = spun_out(i, giving, until_cyc)))
			give_cpu(&g);
	}
	given_back(&g);
	return rc;
}

int nt_toolwait(MPI_Request *request, MPI_Status *status, uint64_t spin_ns)
{
	return nt_toolwait_all(1, request, status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status,
			       spin_ns);
}
