/* Ping-pong clock synchronization over a binomial tree. */
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>

#include "clocksync.h"
#include "toolwait.h"

/* At most 64 round trips per pair; the child stops once PATIENCE of them and PATIENCE_NS have
 * gone by without beating the best. Measured here: between ranks on two CPUs a round trip takes
 * 0.2-1 us, so all 64 are taken (~50 us in all) and the stated error is no larger than with the
 * fixed 24 of before (paired runs, 2 ranks: median 115 ns against 115 in the VM's fast state,
 * 465-480 against 505-515 in its slow one). Between two ranks sharing a CPU (4 ranks on 2 CPUs)
 * a round trip takes 10-75 us and now and then a lost slice; stopping 8 round trips after the
 * best (the 100 us are past by then) ended pairs after 9-24 exchanges, at a best round trip
 * within 10 % of that of all 24 (the same in half of them). */
enum { EXCHANGES_MAX = 64, PATIENCE = 8 };
#define PATIENCE_NS 100000.0

static double hook_offset_ns, hook_rate; /* local = true + offset + rate * (true - origin) */
static double hook_origin_ns;

double nt_clocksync_true_ns(uint64_t cyc)
{
	return (double)cyc * (1e9 / nt_clock_hz());
}

void nt_clocksync_params(struct nt_clock_params *p)
{
	*p = (struct nt_clock_params){ nt_clock_hz(), hook_offset_ns, hook_rate, hook_origin_ns };
}

double nt_clocksync_local_ns_with(const struct nt_clock_params *p, uint64_t cyc)
{
	double t = (double)cyc * (1e9 / p->hz);
	return t + p->offset_ns + p->rate * (t - p->origin_ns);
}

double nt_clocksync_local_ns(uint64_t cyc)
{
	double t = nt_clocksync_true_ns(cyc);
	return t + hook_offset_ns + hook_rate * (t - hook_origin_ns);
}

/* The hook's bounds: a clock an hour off, or 1 % fast or slow (a hundred times a poor quartz's
 * 100 ppm), is past any pair of real nodes' clocks, and keeps every time the log holds far
 * inside its range; nan or inf there made every later time nan, written as garbage, and the
 * report refused the log. */
#define HOOK_MAX_OFFSET_NS 3.6e12
#define HOOK_MAX_DRIFT_PPM 1e4

/* One "RANK:OFFSET_NS:DRIFT_PPM" item of the hook, from s up to end. 0, or -1 when it is not
 * that or a value is out of bounds. */
static int parse_hook_item(const char *s, const char *end, int *rank, double *off, double *ppm)
{
	char buf[128];
	if (end - s <= 0 || (size_t)(end - s) >= sizeof buf)
		return -1;
	memcpy(buf, s, (size_t)(end - s));
	buf[end - s] = 0;
	char *p = buf, *q;
	long r = strtol(p, &q, 10);
	if (q == p || *q != ':' || r < 0 || r > INT_MAX || *p == '-' || *p == '+')
		return -1;
	p = q + 1;
	double v[2];
	for (int i = 0; i < 2; i++) {
		v[i] = strtod(p, &q);
		if (q == p || *q != (i ? '\0' : ':') || !isfinite(v[i]))
			return -1;
		p = q + 1;
	}
	if (fabs(v[0]) > HOOK_MAX_OFFSET_NS || fabs(v[1]) > HOOK_MAX_DRIFT_PPM)
		return -1;
	*rank = (int)r;
	*off = v[0];
	*ppm = v[1];
	return 0;
}

void nt_clocksync_hook(int rank, char *err, size_t errsz)
{
	const char *v = getenv("NOISETOOL_TEST_CLOCK");
	if (!v || !*v)
		return;
	hook_origin_ns = nt_clocksync_true_ns(nt_clock_now_cyc());
	for (const char *p = v; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
		const char *end = strchr(p, ';');
		int r;
		double off, ppm;
		if (parse_hook_item(p, end ? end : p + strlen(p), &r, &off, &ppm) != 0) {
			snprintf(err, errsz,
				 "NOISETOOL_TEST_CLOCK='%s': expected RANK:OFFSET_NS:DRIFT_PPM[;...], "
				 "finite numbers with |OFFSET_NS| <= %.1e and |DRIFT_PPM| <= %.0f",
				 v, HOOK_MAX_OFFSET_NS, HOOK_MAX_DRIFT_PPM);
			hook_offset_ns = hook_rate = 0;
			return;
		}
		if (r == rank) {
			hook_offset_ns = off;
			hook_rate = ppm * 1e-6;
		}
	}
}

static double now_ns(void)
{
	return nt_clocksync_local_ns(nt_clock_now_cyc());
}

/* One parent-child pair: the child sends a ping, the parent answers with its clock (and its own
 * offset and error to rank 0, final since its own round), up to EXCHANGES_MAX round trips; the
 * offset (parent minus child) is taken from the one with the smallest round trip, where the
 * parent's reading is closest to the middle of the child's two. The child stops early once
 * PATIENCE round trips in a row have not beaten the best, and says so in its last ping.
 *
 * The waits give the CPU away (toolwait.h): each side sends its CPU along, and a side whose
 * partner ran on its own CPU gives it away at once, since the answer cannot come before; on two
 * CPUs it spins first, so that a quiet machine's round trips stay as short as with MPICH's
 * blocking calls. A blocking receive here cost a scheduler slice each way between ranks sharing
 * a CPU: at 4 ranks on 2 CPUs the two syncs took 0.8-1.1 s, with a stated error of 4.5-6 ms
 * (now 15-28 us). */
enum { TAG = 4242, PING_LEN = 2, PONG_LEN = 4 };

struct pair_result {
	double offset_ns, error_ns;     /* to the parent */
	double parent_offset_ns, parent_error_ns;
};

static uint64_t spin_for(int my_cpu, int partner_cpu)
{
	return my_cpu >= 0 && my_cpu == partner_cpu ? 0 : NT_TOOLWAIT_SPIN_NS;
}

static void child_side(MPI_Comm comm, int parent, struct pair_result *res)
{
	double best_rtt = 1e300, best_at_ns = 0, pong[PONG_LEN] = { 0 };
	int partner_cpu = -1, since_best = 0;
	bool patient = true;
	for (int i = 0; i < EXCHANGES_MAX && patient; i++) {
		int cpu = sched_getcpu();
		double ping[PING_LEN] = { cpu, 0 };
		MPI_Request r;
		PMPI_Irecv(pong, PONG_LEN, MPI_DOUBLE, parent, TAG, comm, &r);
		double t0 = now_ns();
		PMPI_Send(ping, PING_LEN, MPI_DOUBLE, parent, TAG, comm);
		nt_toolwait(&r, MPI_STATUS_IGNORE, spin_for(cpu, partner_cpu));
		double t1 = now_ns();
		partner_cpu = (int)pong[1];
		since_best++;
		if (t1 - t0 < best_rtt) {
			best_rtt = t1 - t0;
			res->offset_ns = pong[0] - (t0 + t1) / 2;
			since_best = 0;
			best_at_ns = t1;
		}
		patient = since_best < PATIENCE || t1 - best_at_ns < PATIENCE_NS;
	}
	double last[PING_LEN] = { -1, 1 };
	PMPI_Send(last, PING_LEN, MPI_DOUBLE, parent, TAG, comm);
	res->error_ns = best_rtt / 2;
	res->parent_offset_ns = pong[2];
	res->parent_error_ns = pong[3];
}

static void parent_side(MPI_Comm comm, int child, const struct nt_clocksync_point *mine)
{
	double ping[PING_LEN];
	int partner_cpu = -1;
	MPI_Request r;
	PMPI_Irecv(ping, PING_LEN, MPI_DOUBLE, child, TAG, comm, &r);
	for (int i = 0; i <= EXCHANGES_MAX; i++) {
		int cpu = sched_getcpu();
		nt_toolwait(&r, MPI_STATUS_IGNORE, spin_for(cpu, partner_cpu));
		double tp = now_ns();
		if (ping[1] != 0)
			return; /* the child's last word */
		partner_cpu = (int)ping[0];
		double pong[PONG_LEN] = { tp, cpu, mine->offset_ns, mine->error_ns };
		PMPI_Send(pong, PONG_LEN, MPI_DOUBLE, child, TAG, comm);
		PMPI_Irecv(ping, PING_LEN, MPI_DOUBLE, child, TAG, comm, &r);
	}
	/* Not reached: the child's last ping comes after at most EXCHANGES_MAX. */
	PMPI_Cancel(&r);
	PMPI_Request_free(&r);
}

void nt_clocksync_measure(MPI_Comm comm, struct nt_clocksync_point *out)
{
	int rank, size;
	PMPI_Comm_rank(comm, &rank);
	PMPI_Comm_size(comm, &size);
	*out = (struct nt_clocksync_point){ 0 };
	/* Round k: every rank below 2^k (already synchronized) serves rank + 2^k, which adds the
	 * parent's offset and error to rank 0 to its own. No barrier first: a rank that comes
	 * late only makes its partner's first round trip long, and the shortest one counts. */
	for (int step = 1; step < size; step *= 2) {
		if (rank < step && rank + step < size) {
			parent_side(comm, rank + step, out);
		} else if (rank >= step && rank < 2 * step) {
			struct pair_result res = { 0 };
			child_side(comm, rank - step, &res);
			out->offset_ns = res.offset_ns + res.parent_offset_ns;
			out->error_ns = res.error_ns + res.parent_error_ns;
		}
	}
	out->local_ns = now_ns();
}

double nt_clocksync_global_ns(const struct nt_clocksync_point *a,
			      const struct nt_clocksync_point *b, double local_ns)
{
	double span = b->local_ns - a->local_ns;
	double drift = span > 0 ? (b->offset_ns - a->offset_ns) / span : 0;
	return local_ns + a->offset_ns + drift * (local_ns - a->local_ns);
}
