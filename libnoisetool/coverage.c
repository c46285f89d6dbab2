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

/* A count of ns computed in double: NaN and negatives 0, past 2^64 - 1 saturated (converting an
 * out-of-range double is undefined; a caller may hand any numbers: the fuzzer found 2^64). */
static uint64_t to_ns(double ns)
{
	if (!(ns > 0))
		return 0;
	return ns < 0x1p64 ? (uint64_t)ns : UINT64_MAX;
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
	return to_ns(ns);
}

void nt_coverage_part_add(struct nt_coverage_part *part, const struct nt_coverage_part *x)
{
	part->mpi_ns = add_sat(part->mpi_ns, x->mpi_ns);
	part->coll_ns = add_sat(part->coll_ns, x->coll_ns);
	part->own_ns = add_sat(part->own_ns, x->own_ns);
	part->over_ns = add_sat(part->over_ns, x->over_ns);
	part->waited_ns = add_sat(part->waited_ns, x->waited_ns);
	part->held_ns = add_sat(part->held_ns, x->held_ns);
	part->cause_ns = add_sat(part->cause_ns, x->cause_ns);
	part->unexplained_ns = add_sat(part->unexplained_ns, x->unexplained_ns);
	part->no_data_ns = add_sat(part->no_data_ns, x->no_data_ns);
}

/* What a rank lost at a site (l, NULL: nothing) is part of the site's time over its calls' own
 * cost: where the estimate of that cost puts it beyond, it is scaled down to fit. */
static void site_losses(struct nt_coverage_part *p, const struct nt_rank_loss *l)
{
	if (!l)
		return;
	p->waited_ns = l->waited_ns;
	p->held_ns = l->held_ns;
	p->cause_ns = l->cause_ns;
	p->unexplained_ns = l->unexplained_ns;
	p->no_data_ns = l->no_data_ns;
	uint64_t lost = add_sat(p->waited_ns, p->held_ns);
	if (lost <= p->over_ns)
		return;
	double f = (double)p->over_ns / (double)lost;
	/* Each part at most what is left of over_ns, so that they add up to it whatever the
	 * rounding. */
	p->cause_ns = to_ns((double)p->cause_ns * f);
	p->cause_ns = p->cause_ns < p->over_ns ? p->cause_ns : p->over_ns;
	p->unexplained_ns = to_ns((double)p->unexplained_ns * f);
	if (p->unexplained_ns > p->over_ns - p->cause_ns)
		p->unexplained_ns = p->over_ns - p->cause_ns;
	p->no_data_ns = p->over_ns - p->cause_ns - p->unexplained_ns;
	p->held_ns = to_ns((double)p->held_ns * f);
	p->held_ns = p->held_ns < p->over_ns ? p->held_ns : p->over_ns;
	p->waited_ns = p->over_ns - p->held_ns;
}

/* Rank r's sites into parts[0..nsites): every site's time, and for its collective sites (those
 * its records name with a communicator) their own cost, the time over it and what the rank
 * lost there (losses[i], NULL: none); their sums, but the MPI time, into p. */
static int rank_sites(const struct nt_log *log, const struct nt_log_rank *k,
		      const struct nt_rank_loss *losses, struct nt_coverage_part *parts,
		      struct nt_coverage_part *p)
{
	if (!k->nsites || !k->sites)
		return 0;
	bool *coll = calloc(k->nsites, sizeof *coll);
	if (!coll)
		return -ENOMEM;
	for (uint64_t q = 0; q < k->nrecords && k->records; q++)
		if (k->records[q].comm_id != UINT64_MAX && k->records[q].site < k->nsites)
			coll[k->records[q].site] = true;
	for (uint32_t i = 0; i < k->nsites; i++) {
		const struct nt_log_site *s = &k->sites[i];
		struct nt_coverage_part one = { .mpi_ns = s->total_ns };
		if (coll[i]) {
			uint64_t own = nt_coverage_own_ns(s, log->clock_hz);
			double own_all = (double)own * (double)s->calls;
			uint64_t own_total =
				own_all >= (double)s->total_ns ? s->total_ns : to_ns(own_all);
			one.coll_ns = s->total_ns;
			one.own_ns = own_total;
			one.over_ns = s->total_ns - own_total;
			site_losses(&one, losses ? &losses[i] : NULL);
		}
		if (parts)
			parts[i] = one;
		one.mpi_ns = 0;
		nt_coverage_part_add(p, &one);
	}
	free(coll);
	return 0;
}

int nt_coverage_build(const struct nt_log *log, const struct nt_attrib *a,
		      struct nt_coverage *out)
{
	memset(out, 0, sizeof *out);
	if (!log)
		return -EINVAL;
	out->ranks = calloc(log->nranks ? log->nranks : 1, sizeof *out->ranks);
	if (!out->ranks)
		return -ENOMEM;
	out->nranks = log->nranks;
	bool by_site = a && a->site_at && a->site_loss && a->nloss == log->nranks;
	if (by_site) {
		out->nsites = a->nsite_loss;
		out->site_at = a->site_at;
		out->sites = calloc(out->nsites ? out->nsites : 1, sizeof *out->sites);
		if (!out->sites) {
			nt_coverage_free(out);
			return -ENOMEM;
		}
	}
	for (uint32_t r = 0; r < log->nranks; r++) {
		struct nt_coverage_part *p = &out->ranks[r];
		const struct nt_log_rank *k = &log->ranks[r];
		bool mine = by_site && k->sites;
		if (rank_sites(log, k, mine ? &a->site_loss[a->site_at[r]] : NULL,
			       mine ? &out->sites[a->site_at[r]] : NULL, p) < 0) {
			nt_coverage_free(out);
			return -ENOMEM;
		}
		/* An attribution without losses by site (one a caller made): the rank's. */
		if (!by_site && a && a->loss && r < a->nloss)
			site_losses(p, &a->loss[r]);
		p->mpi_ns = k->mpi_ns;
		nt_coverage_part_add(&out->all, p);
	}
	return 0;
}

void nt_coverage_free(struct nt_coverage *c)
{
	if (!c)
		return;
	free(c->ranks);
	free(c->sites);
	memset(c, 0, sizeof *c);
}
