/* Coverage of a job's MPI time by the attribution (coverage.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/coverage.h>

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t nt_coverage_own_ns(const struct nt_log_site *s, double clock_hz)
{
	uint64_t n = 0;
	for (int b = 0; b < NT_LOG_HIST_BINS; b++)
		n = add_sat(n, s->hist[b]);
	if (!n || !(clock_hz > 0))
		return 0;
	double target = (double)n / 4, seen = 0, cyc = 0;
	for (int b = 0; b < NT_LOG_HIST_BINS; b++) {
		double here = (double)s->hist[b];
		if (here > 0 && seen + here >= target) {
			double lo = b ? ldexp(1, b) : 0, hi = ldexp(1, b + 1);
			cyc = lo + (hi - lo) * ((target - seen) / here);
			break;
		}
		seen += here;
	}
	double ns = cyc * 1e9 / clock_hz;
	if (ns < (double)s->min_ns)
		ns = (double)s->min_ns;
	if (s->max_ns && ns > (double)s->max_ns)
		ns = (double)s->max_ns;
	return ns >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)ns;
}

int nt_coverage_build(const struct nt_log *log, const struct nt_attrib *a,
		      struct nt_coverage *out)
{
	memset(out, 0, sizeof *out);
	if (!log)
		return -EINVAL;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		out->mpi_ns = add_sat(out->mpi_ns, k->mpi_ns);
		if (!k->nsites || !k->sites)
			continue;
		/* The collective sites: those the rank's records name with a communicator. */
		bool *coll = calloc(k->nsites, sizeof *coll);
		if (!coll)
			return -ENOMEM;
		for (uint64_t q = 0; q < k->nrecords && k->records; q++)
			if (k->records[q].comm_id != UINT64_MAX && k->records[q].site < k->nsites)
				coll[k->records[q].site] = true;
		for (uint32_t i = 0; i < k->nsites; i++) {
			const struct nt_log_site *s = &k->sites[i];
			if (!coll[i])
				continue;
			uint64_t own = nt_coverage_own_ns(s, log->clock_hz);
			double own_all = (double)own * (double)s->calls;
			uint64_t own_total = own_all >= (double)s->total_ns ? s->total_ns
									    : (uint64_t)own_all;
			out->coll_ns = add_sat(out->coll_ns, s->total_ns);
			out->own_ns = add_sat(out->own_ns, own_total);
			out->over_ns = add_sat(out->over_ns, s->total_ns - own_total);
		}
		free(coll);
	}
	if (!a)
		return 0;
	for (int list = 0; list < 2; list++) {
		const struct nt_late *l = list ? a->held : a->late;
		size_t n = list ? a->nheld : a->nlate;
		for (size_t i = 0; i < n; i++, l++) {
			uint64_t w = l->waited_ns;
			uint64_t *sum = list ? &out->held_ns : &out->waited_ns;
			*sum = add_sat(*sum, w);
			if (!l->os_data) {
				out->no_data_ns = add_sat(out->no_data_ns, w);
				continue;
			}
			double f = l->delay_ns ? (double)l->causes.ns[NT_CAUSE_UNEXPLAINED] /
							 (double)l->delay_ns
					       : 1;
			uint64_t un = (uint64_t)((double)w * (f < 1 ? f : 1));
			out->unexplained_ns = add_sat(out->unexplained_ns, un);
			out->cause_ns = add_sat(out->cause_ns, w - un);
		}
	}
	/* The waits and holds are part of the time over the calls' own cost: where the
	 * estimate of that cost puts them beyond it, they are scaled down to fit. */
	uint64_t both = add_sat(out->waited_ns, out->held_ns);
	if (both > out->over_ns) {
		double f = (double)out->over_ns / (double)both;
		out->cause_ns = (uint64_t)((double)out->cause_ns * f);
		out->unexplained_ns = (uint64_t)((double)out->unexplained_ns * f);
		out->no_data_ns = out->over_ns - out->cause_ns - out->unexplained_ns;
		out->held_ns = (uint64_t)((double)out->held_ns * f);
		out->waited_ns = out->over_ns - out->held_ns;
	}
	return 0;
}
