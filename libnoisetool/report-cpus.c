/* Who shares each rank's CPUs (report-merge.h: nt_report_cpus_build): from the log's version-6
 * rank fields, the ranks of the job on the same host whose CPU lists overlap, and the shares of
 * the rank's CPUs that it, the job's other ranks, other tasks and the hypervisor took
 * (doc/attribution.md, "Who shares the CPUs"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool-private/cpus.h>

#include "report-merge.h"

/* A rank's parsed CPU list. */
struct rank_list {
	struct nt_cpu_range *runs;
	int nruns; /* < 0: no list */
};

/* Ranks are compared with the others of their host only (rank indices sorted by host), and
 * only on hosts that at most HOST_RANKS_MAX ranks name: a larger group (a host name every
 * container reports alike) is left unknown rather than compared pair by pair. */
#define HOST_RANKS_MAX 4096

static int by_host(const void *a, const void *b, void *ctx)
{
	const struct nt_log *log = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(log->ranks[x].host, log->ranks[y].host);
	return c ? c : (x > y) - (x < y);
}

/* Part of whole, or -1 when either is unknown (or whole is 0). */
static double share(uint64_t part, double whole)
{
	return part == NT_LOG_UNKNOWN || !(whole > 0) ? -1 : (double)part / whole;
}

/* The shares of rank i, which shares its host with the ranks hosts[0..n). */
static void rank_view(const struct nt_log *log, const struct rank_list *rc, uint32_t i,
		      const uint32_t *hosts, size_t n, struct nt_report_cpus *v)
{
	const struct nt_log_rank *k = &log->ranks[i];
	const struct rank_list *me = &rc[i];
	v->known = true;
	uint64_t count = nt_cpulist_count(me->runs, (size_t)me->nruns);
	v->ncpus = count < UINT32_MAX ? (uint32_t)count : UINT32_MAX; /* "0-4294967295" */
	v->crowd = 1;
	uint64_t job = 0;
	bool job_known = k->cpu_ns != NT_LOG_UNKNOWN;
	for (size_t h = 0; h < n; h++) {
		uint32_t q = hosts[h];
		const struct rank_list *o = &rc[q];
		if (q == i || o->nruns < 0)
			continue;
		if (nt_cpulist_overlap(me->runs, (size_t)me->nruns, o->runs, (size_t)o->nruns))
			v->sharing++;
		if (nt_cpulist_within(o->runs, (size_t)o->nruns, me->runs, (size_t)me->nruns)) {
			v->crowd++;
			if (log->ranks[q].cpu_ns == NT_LOG_UNKNOWN)
				job_known = false;
			else
				job += log->ranks[q].cpu_ns;
		}
	}
	for (uint32_t t = 0; t < k->nothers && t < NT_LOG_OTHERS_MAX; t++) {
		v->others_rank[t] = -1;
		for (size_t h = 0; h < n && k->others[t].pid != 0; h++)
			if (hosts[h] != i && log->ranks[hosts[h]].pid == k->others[t].pid)
				v->others_rank[t] = log->ranks[hosts[h]].rank;
	}
	double wall = (double)k->wall_ns, cap = wall * v->ncpus;
	v->on_cpu = share(k->cpu_ns, wall);
	v->waited = share(k->run_delay_ns, wall);
	v->job_share = job_known ? share(job, cap) : -1;
	v->steal_share = share(k->cpus_steal_ns, cap);
	v->others_share = -1;
	if (job_known && k->cpus_busy_ns != NT_LOG_UNKNOWN && cap > 0) {
		/* busy is counted in ticks, CPU times closer: what is left, never below 0 */
		double others = (double)k->cpus_busy_ns - (double)k->cpu_ns - (double)job;
		v->others_share = others > 0 ? others / cap : 0;
	}
}

int nt_report_cpus_build(const struct nt_log *log, struct nt_report *rep)
{
	rep->cpus = NULL;
	rep->crowded_ranks = 0;
	uint32_t n = log->nranks, known = 0;
	for (uint32_t i = 0; i < n; i++)
		known += log->ranks[i].cpus && *log->ranks[i].cpus;
	if (known == 0)
		return 0;
	size_t runs_max = 0;
	for (uint32_t i = 0; i < n; i++)
		if (log->ranks[i].cpus)
			runs_max += strlen(log->ranks[i].cpus) / 2 + 1;
	struct rank_list *rc = calloc(n, sizeof *rc);
	struct nt_cpu_range *runs = calloc(runs_max, sizeof *runs);
	uint32_t *order = malloc(n * sizeof *order);
	rep->cpus = calloc(n, sizeof *rep->cpus);
	if (!rc || !runs || !order || !rep->cpus) {
		free(rc);
		free(runs);
		free(order);
		free(rep->cpus);
		rep->cpus = NULL;
		return -ENOMEM;
	}
	size_t at = 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *list = log->ranks[i].cpus ? log->ranks[i].cpus : "";
		size_t room = strlen(list) / 2 + 1;
		rc[i].runs = runs + at;
		/* an empty list (not recorded) or one that is not a CPU list: not known */
		rc[i].nruns = *list ? nt_cpulist_parse(list, rc[i].runs, room) : -1;
		if (rc[i].nruns == 0)
			rc[i].nruns = -1;
		at += room;
		order[i] = i;
	}
	qsort_r(order, n, sizeof *order, by_host, (void *)log);
	for (uint32_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && strcmp(log->ranks[order[a]].host,
						log->ranks[order[b]].host) == 0;
		     b++)
			;
		for (uint32_t h = a; h < b && b - a <= HOST_RANKS_MAX; h++) {
			uint32_t i = order[h];
			if (rc[i].nruns < 0)
				continue;
			rank_view(log, rc, i, order + a, b - a, &rep->cpus[i]);
			if (rep->cpus[i].crowd > rep->cpus[i].ncpus)
				rep->crowded_ranks++;
		}
	}
	free(rc);
	free(runs);
	free(order);
	return 0;
}
