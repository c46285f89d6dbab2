/* Ping-pong clock synchronization over a binomial tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>

#include "clocksync.h"

enum { EXCHANGES = 24, TAG = 4242 };

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

void nt_clocksync_hook(int rank, char *err, size_t errsz)
{
	const char *v = getenv("NOISETOOL_TEST_CLOCK");
	if (!v || !*v)
		return;
	hook_origin_ns = nt_clocksync_true_ns(nt_clock_now_cyc());
	for (const char *p = v; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
		int r;
		double off, ppm;
		if (sscanf(p, "%d:%lf:%lf", &r, &off, &ppm) != 3) {
			snprintf(err, errsz, "NOISETOOL_TEST_CLOCK='%s': expected RANK:OFFSET_NS:DRIFT_PPM[;...]", v);
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

/* The child side of one parent-child exchange: EXCHANGES round trips; the offset (parent minus
 * child) from the one with the smallest round trip, where the parent's reading is closest to
 * the middle of the child's two. */
static void child_side(MPI_Comm comm, int parent, double *offset, double *error)
{
	double best_rtt = 1e300;
	for (int i = 0; i < EXCHANGES; i++) {
		double t0 = now_ns(), tp;
		PMPI_Send(&t0, 1, MPI_DOUBLE, parent, TAG, comm);
		PMPI_Recv(&tp, 1, MPI_DOUBLE, parent, TAG, comm, MPI_STATUS_IGNORE);
		double t1 = now_ns();
		if (t1 - t0 < best_rtt) {
			best_rtt = t1 - t0;
			*offset = tp - (t0 + t1) / 2;
		}
	}
	*error = best_rtt / 2;
}

static void parent_side(MPI_Comm comm, int child)
{
	for (int i = 0; i < EXCHANGES; i++) {
		double t0, tp;
		PMPI_Recv(&t0, 1, MPI_DOUBLE, child, TAG, comm, MPI_STATUS_IGNORE);
		tp = now_ns();
		PMPI_Send(&tp, 1, MPI_DOUBLE, child, TAG, comm);
	}
}

void nt_clocksync_measure(MPI_Comm comm, struct nt_clocksync_point *out)
{
	int rank, size;
	PMPI_Comm_rank(comm, &rank);
	PMPI_Comm_size(comm, &size);
	*out = (struct nt_clocksync_point){ 0 };
	PMPI_Barrier(comm);
	/* Round k: every rank below 2^k (already synchronized) serves rank + 2^k, then sends it
	 * its own offset and error to rank 0, which the child adds to its own. */
	for (int step = 1; step < size; step *= 2) {
		if (rank < step && rank + step < size) {
			parent_side(comm, rank + step);
			double mine[2] = { out->offset_ns, out->error_ns };
			PMPI_Send(mine, 2, MPI_DOUBLE, rank + step, TAG, comm);
		} else if (rank >= step && rank < 2 * step) {
			double off = 0, err = 0, parent[2];
			child_side(comm, rank - step, &off, &err);
			PMPI_Recv(parent, 2, MPI_DOUBLE, rank - step, TAG, comm, MPI_STATUS_IGNORE);
			out->offset_ns = off + parent[0];
			out->error_ns = err + parent[1];
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
