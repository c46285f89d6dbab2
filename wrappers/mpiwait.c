/* Adaptive MPI waits. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <noisetool/clock.h>
#include <noisetool/poller.h>

#include "comms.h"
#include "mpiwait.h"
#include "thread.h"
#include "votes.h"

/* One nap between tests on a shared CPU: 10 us asked, with a 1 us timer slack (with the
 * default 50 us slack a nap lasts ~60 us; a 1 us one would not sleep at all). */
#define NAP_NS 10000
#define NAP_SLACK_NS 1000
/* A trial of the other mode lasts 200 ms and ends early only after 20 ms (5 ticks at HZ=250):
 * between two MPI calls lies the application's compute, and a competitor takes the CPU in
 * whole ticks, so 8 cycles of ~0.3 ms (SOR with a hog beside the loaded rank) said nothing
 * about sleeping, and a 50 ms trial (12 ticks) chose right about half the time. */
#define TRIAL_NS 200000000
#define TRIAL_MIN_NS 20000000
/* Sleeping wins a trial when its cycles are at most 5 % longer (adapt.c). */
#define SLEEP_WIN 1.05

int nt_wait_mode_;
__thread __attribute__((tls_model("initial-exec"))) uint64_t nt_wait_spin_until_cyc_;
static struct nt_poller *poller;
static pthread_t owner;
static int prefers_sleep; /* the owner's poller prefers sleeping (atomic: votes read it) */
static bool crowded;      /* nt_mpiwait_crowded */

int nt_mpiwait_start(enum nt_wait_mode mode)
{
	if (mode == NT_WAIT_MPI)
		return 0;
	struct nt_poller_config cfg = NT_POLLER_CONFIG_DEFAULT;
	cfg.timer_slack_ns = NAP_SLACK_NS;
	cfg.trial_ns = TRIAL_NS;
	cfg.trial_min_ns = TRIAL_MIN_NS;
	cfg.sleep_win = SLEEP_WIN;
	int rc = nt_poller_create(&poller, &cfg);
	if (rc)
		return rc;
	owner = pthread_self();
	nt_wait_mode_ = mode;
	__atomic_store_n(&nt_votes_pause_, nt_mpiwait_pause, __ATOMIC_RELEASE);
	return 0;
}

void nt_mpiwait_stop(void)
{
	__atomic_store_n(&nt_votes_pause_, NULL, __ATOMIC_RELEASE);
	nt_wait_mode_ = NT_WAIT_MPI;
	nt_poller_destroy(poller);
	poller = NULL;
}

void nt_mpiwait_crowded(bool yes)
{
	crowded = yes;
	if (yes && nt_wait_mode_ == NT_WAIT_ADAPTIVE)
		__atomic_store_n(&prefers_sleep, 1, __ATOMIC_RELAXED);
}

bool nt_mpiwait_cpus_crowded(const int *cpus, int ncpus)
{
	pid_t self = getpid(), parent = getppid();
	if (ncpus <= 0 || parent <= 1)
		return false;
	cpu_set_t mine;
	CPU_ZERO(&mine);
	for (int k = 0; k < ncpus; k++)
		if (cpus[k] >= 0 && cpus[k] < CPU_SETSIZE)
			CPU_SET(cpus[k], &mine);
	DIR *d = opendir("/proc");
	if (!d)
		return false;
	int meets = 1; /* itself */
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end, path[64], buf[512];
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		const char *paren = strrchr(buf, ')'); /* then " S PPID ..." */
		cpu_set_t theirs;
		if (!paren || strtol(paren + 3, NULL, 10) != parent ||
		    sched_getaffinity((pid_t)pid, sizeof theirs, &theirs) != 0)
			continue;
		CPU_AND(&theirs, &theirs, &mine);
		meets += CPU_COUNT(&theirs) > 0;
	}
	closedir(d);
	return meets > ncpus;
}

/* The adaptive choice is to sleep (always, on a crowded CPU). */
static bool choice_sleep(void)
{
	return crowded || nt_poller_preference(poller) == NT_MODE_SLEEP;
}

static bool mine(void)
{
	return pthread_equal(pthread_self(), owner);
}

bool nt_mpiwait_blocking(uint64_t t0_cyc)
{
	/* Free CPU: the answer holds for a while (only the owner's is ever set); the blocking
	 * call runs unchanged. */
	if (t0_cyc < nt_wait_spin_until_cyc_)
		return true;
	if (!mine())
		return true;
	if (nt_wait_mode_ != NT_WAIT_ADAPTIVE || crowded)
		return false;
	uint64_t slice;
	bool spin = nt_poller_decide(poller, &slice) == NT_MODE_SPIN;
	__atomic_store_n(&prefers_sleep, nt_poller_preference(poller) == NT_MODE_SLEEP,
			 __ATOMIC_RELAXED);
	nt_wait_spin_until_cyc_ =
		spin ? t0_cyc + nt_clock_ns_to_cyc((double)(slice < 1000000 ? slice : 1000000)) : 0;
	return spin;
}

bool nt_mpiwait_coll_blocking(MPI_Comm comm, uint64_t *t0_cyc)
{
	if (mine())
		nt_mpiwait_blocking(*t0_cyc); /* keeps the decision and its measurements current */
	/* The thread's communicator cache (a lock and a lookup cost ~10 % of an
	 * 8-byte allreduce here). */
	struct nt_comm *cs = nt_thread_comm(&nt_thread_, comm);
	if (!cs || cs->vote < 0)
		return true; /* no vote: MPICH's way */
	if (cs->seq < cs->vote_at_seq) {
		nt_votes_progress(cs->vote); /* passes on what has come of other members' votes */
		return !cs->wait_nb;
	}
	/* The previous vote decides from here on; the next one starts. */
	if (nt_votes_pending(cs->vote)) {
		bool nb = nt_votes_finish(cs->vote) != 0;
		if (cs->vote_every == 0 || nb != cs->wait_nb)
			cs->vote_every = 16;
		else if (cs->vote_every < 1024)
			cs->vote_every *= 2;
		cs->wait_nb = nb;
	} else if (cs->vote_every == 0) {
		cs->vote_every = 16;
	}
	/* Vote for what this rank holds to, not for a trial it may be running. */
	nt_votes_start(cs->vote, comm,
		       nt_wait_mode_ == NT_WAIT_SLEEP ||
			       __atomic_load_n(&prefers_sleep, __ATOMIC_RELAXED));
	cs->vote_at_seq = cs->seq + cs->vote_every;
	*t0_cyc = nt_clock_now_cyc();
	return !cs->wait_nb;
}

/* Give the CPU away between two tests, while the adaptive choice is to sleep. Ranks sharing a
 * core hand it to each other best by yielding (4 ranks on 2 cores: 144 us per 8-byte allreduce
 * here, against 470 us with 10 us naps); but beside a task that does not yield, a yield often
 * lasts a whole slice (4-8 ms here). So a long yield that leaves the mean yield (a moving
 * average over the last few) over 200 us starts naps, for 50 ms, twice as long after each
 * further such yield, up to 3.2 s; short yields bring the mean down again (4 ranks on 2 cores
 * see a long yield now and then, which must not turn into seconds of naps). One 4-8 ms yield
 * every 50 ms had cost SOR with a hog beside the loaded rank 8 % of its time; with a hog about
 * half the yields are short. A trial of sleeping (while spinning is the choice) never yields
 * when yields are long: a lost slice at its start made it look worse than it was, and adaptive
 * waits never chose to sleep there. */
#define LONG_YIELD_NS 200000.0
#define NAPS_MIN_NS 50000000
#define NAPS_MAX_NS 3200000000u

static uint64_t naps, yields, long_yields; /* telemetry */
static uint64_t poll_waits; /* of them, after a program's poll (nt_mpiwait_polled) */

static void between_tests(void)
{
	static uint64_t naps_until_ns, naps_for_ns = NAPS_MIN_NS;
	static double yield_mean_ns;
	if (nt_wait_mode_ == NT_WAIT_SLEEP) {
		naps++;
		nt_poller_nap(poller, NAP_NS);
		return;
	}
	if (nt_wait_mode_ != NT_WAIT_ADAPTIVE || nt_mpiwait_blocking(nt_clock_now_cyc()))
		return; /* spin through the tests */
	uint64_t t0 = nt_clock_monotonic_ns();
	bool yields_long = yield_mean_ns > LONG_YIELD_NS;
	if (t0 < naps_until_ns || (yields_long && !choice_sleep())) {
		naps++;
		nt_poller_nap(poller, NAP_NS);
		return;
	}
	sched_yield();
	uint64_t t1 = nt_clock_monotonic_ns();
	bool long_yield = t1 - t0 > LONG_YIELD_NS;
	yield_mean_ns += ((double)(t1 - t0) - yield_mean_ns) / 4;
	yields++;
	long_yields += long_yield;
	if (long_yield && yield_mean_ns > LONG_YIELD_NS) {
		naps_until_ns = t1 + naps_for_ns;
		if (yields_long && naps_for_ns < NAPS_MAX_NS)
			naps_for_ns *= 2;
	} else if (yield_mean_ns <= LONG_YIELD_NS) {
		naps_for_ns = NAPS_MIN_NS;
	}
}

void nt_mpiwait_pause(void)
{
	between_tests();
}

int nt_mpiwait_request(int rc, MPI_Request *request, MPI_Status *status)
{
	if (rc != MPI_SUCCESS)
		return rc;
	for (;;) {
		int flag = 0;
		rc = PMPI_Test(request, &flag, status);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		between_tests();
	}
}

int nt_mpiwait_wait(MPI_Request *request, MPI_Status *status)
{
	return nt_mpiwait_request(MPI_SUCCESS, request, status);
}

int nt_mpiwait_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	/* The loop asks about each request without completing any, then PMPI_Waitall completes
	 * them all at once, as the application's call would have (statuses, errors and all). A
	 * loop of PMPI_Testall failed a correct program: MPICH 4.0.2's MPI_Testall returns
	 * MPI_ERR_IN_STATUS, with MPI_ERR_PENDING, for persistent collectives of which some have
	 * completed and some not. */
	for (int i = 0; i < count;) {
		int flag = 0;
		if (requests[i] == MPI_REQUEST_NULL ||
		    PMPI_Request_get_status(requests[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
		    flag) {
			i++;
			continue;
		}
		between_tests();
	}
	return PMPI_Waitall(count, requests, statuses);
}

void nt_mpiwait_after(void)
{
	if (poller && mine())
		nt_poller_event(poller);
}

/* A program's own polling loop waits as the wait loop does (issue 37: BAGEL polls with
 * MPI_Test, and gained nothing from waits that only blocking calls took): once the waiting
 * thread has made POLL_RUN polls in a row (test calls that found nothing), each after less than
 * POLL_GAP_NS of its own work, every further one is followed by what the wait loop does between
 * two tests (between_tests: nothing on a free CPU; on a shared one a yield or a nap as the
 * adaptive choice says; always a nap in the sleep mode; never in the busy mode). The run ends
 * at a call that is not a poll, or after a longer stretch of the program's work: a loop that
 * computes between its tests keeps its CPU. */
#define POLL_RUN 4
#define POLL_GAP_NS 20000.0

uint64_t nt_mpiwait_polled(bool polled, uint64_t phase_cyc)
{
	static uint64_t run; /* the waiting thread's polls in a row */
	if (!poller || !mine())
		return 0;
	if (!polled || phase_cyc > nt_clock_ns_to_cyc(POLL_GAP_NS)) {
		run = 0;
		return 0;
	}
	if (++run < POLL_RUN)
		return 0;
	uint64_t t0 = nt_clock_now_cyc(), n = naps + yields;
	between_tests();
	poll_waits += naps + yields != n;
	return nt_clock_now_cyc() - t0;
}

void nt_mpiwait_describe(char *buf, size_t size)
{
	if (!poller) {
		snprintf(buf, size, "%s", "");
		return;
	}
	struct nt_poller_stats s;
	nt_poller_get_stats(poller, &s);
	uint64_t world, direct, tree;
	nt_votes_counts(&world, &direct, &tree);
	snprintf(buf, size,
		 "waits %s: mode %s, %llu switches, CPU %s (competitor share %.2f), %llu trials "
		 "(%llu cut short), last cycles spin %.1f us / sleep %.1f us; %llu naps, %llu yields "
		 "(%llu long), %llu after polls; votes %llu on MPI_COMM_WORLD, %llu direct, %llu by "
		 "tree; %llu events",
		 nt_wait_mode_ == NT_WAIT_BUSY	  ? "busy"
		 : nt_wait_mode_ == NT_WAIT_SLEEP ? "sleep"
						  : "adaptive",
		 crowded && nt_wait_mode_ == NT_WAIT_ADAPTIVE ? "sleep"
		 : s.mode == NT_MODE_SPIN		      ? "spin"
							      : "sleep",
		 (unsigned long long)s.switches,
		 crowded ? "shared with this job's ranks" : s.contended ? "shared" : "free",
		 s.competitor_share, (unsigned long long)s.trials,
		 (unsigned long long)s.trials_aborted, s.trial_spin_cycle_ns / 1e3,
		 s.trial_sleep_cycle_ns / 1e3, (unsigned long long)naps, (unsigned long long)yields,
		 (unsigned long long)long_yields, (unsigned long long)poll_waits,
		 (unsigned long long)world, (unsigned long long)direct, (unsigned long long)tree,
		 (unsigned long long)s.events);
}
