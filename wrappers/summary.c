/* Finalize-time summary by reductions: sites are hashed into SLOTS slots by (function, module,
 * offset), which agree across ranks under ASLR; each slot is reduced with MIN/MAX/SUM. */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <noisetool/clock.h>

#include "call.h"
#include "sites.h"
#include "summary.h"

enum { SLOTS = 1024, TOP = 10, LOC_LEN = 256 };

/* Module-relative identity of a call site: "module+0xoffset (symbol+0xoff)". */
static uint64_t site_key(const struct nt_site *s, char *loc, size_t size)
{
	Dl_info info;
	uintptr_t addr = s->ret - 1; /* inside the call instruction, not after it */
	const char *module = "?";
	uintptr_t offset = addr;
	if (dladdr((void *)addr, &info) && info.dli_fname) {
		module = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1
						      : info.dli_fname;
		offset = addr - (uintptr_t)info.dli_fbase;
		if (info.dli_sname && info.dli_saddr)
			snprintf(loc, size, "%s+0x%lx (%s+0x%lx)", module, (unsigned long)offset,
				 info.dli_sname, (unsigned long)(addr - (uintptr_t)info.dli_saddr));
		else
			snprintf(loc, size, "%s+0x%lx", module, (unsigned long)offset);
	} else {
		snprintf(loc, size, "0x%lx", (unsigned long)addr);
	}
	/* FNV-1a over function id, module name and offset. */
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p = (const unsigned char *)module;
	for (; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h = (h ^ s->fn) * 1099511628211ull;
	h = (h ^ offset) * 1099511628211ull;
	return h ? h : 1;
}

struct slots {
	uint64_t key_min[SLOTS], key_max[SLOTS];
	double calls[SLOTS], time_ns[SLOTS], time2[SLOTS], time_max[SLOTS];
	int owner[SLOTS];          /* lowest rank that has the slot */
	int fn[SLOTS];             /* function id (MAX; equal on every rank unless merged) */
};

/* qsort has no context argument: the slots being sorted (finalize is single-threaded). */
static const struct slots *sort_slots;

static int cmp_slot_time_desc(const void *a, const void *b)
{
	double x = sort_slots->time_ns[*(const int *)a], y = sort_slots->time_ns[*(const int *)b];
	return (x < y) - (x > y);
}

void nt_summary_write(const struct nt_runtime *rt)
{
	struct slots *local = calloc(1, sizeof *local), *all = calloc(1, sizeof *all);
	char (*locs)[LOC_LEN] = calloc(SLOTS, LOC_LEN);
	if (!local || !all || !locs)
		goto out;
	for (int i = 0; i < SLOTS; i++) {
		local->key_min[i] = UINT64_MAX;
		local->owner[i] = INT_MAX;
		local->fn[i] = -1;
	}
	size_t it = 0;
	double local_mpi_ns = 0;
	for (struct nt_site *s; (s = nt_sites_next(&it));) {
		if (s->calls == 0)
			continue;
		char loc[LOC_LEN];
		uint64_t key = site_key(s, loc, sizeof loc);
		int k = (int)(key % SLOTS);
		double t = nt_clock_cyc_to_ns(s->total_cyc);
		if (local->key_min[k] == UINT64_MAX)
			memcpy(locs[k], loc, LOC_LEN);
		local->key_min[k] = key < local->key_min[k] ? key : local->key_min[k];
		local->key_max[k] = key > local->key_max[k] ? key : local->key_max[k];
		local->calls[k] += (double)s->calls;
		local->time_ns[k] += t;
		local->owner[k] = rt->rank;
		local->fn[k] = (int)s->fn;
		if (!s->nonblocking)
			local_mpi_ns += t;
	}
	for (int k = 0; k < SLOTS; k++) {
		local->time2[k] = local->time_ns[k] * local->time_ns[k];
		local->time_max[k] = local->time_ns[k];
	}
	MPI_Comm c = rt->comm;
	PMPI_Allreduce(local->key_min, all->key_min, SLOTS, MPI_UINT64_T, MPI_MIN, c);
	PMPI_Allreduce(local->key_max, all->key_max, SLOTS, MPI_UINT64_T, MPI_MAX, c);
	PMPI_Allreduce(local->calls, all->calls, SLOTS, MPI_DOUBLE, MPI_SUM, c);
	PMPI_Allreduce(local->time_ns, all->time_ns, SLOTS, MPI_DOUBLE, MPI_SUM, c);
	PMPI_Allreduce(local->time2, all->time2, SLOTS, MPI_DOUBLE, MPI_SUM, c);
	PMPI_Allreduce(local->time_max, all->time_max, SLOTS, MPI_DOUBLE, MPI_MAX, c);
	PMPI_Allreduce(local->owner, all->owner, SLOTS, MPI_INT, MPI_MIN, c);
	PMPI_Allreduce(local->fn, all->fn, SLOTS, MPI_INT, MPI_MAX, c);

	/* Per-rank MPI time is the sum of its sites; application time the rest of the wall time
	 * from MPI_Init to MPI_Finalize (with several threads calling MPI, MPI time can exceed
	 * the wall time: it is summed over threads). */
	double wall = nt_clock_cyc_to_ns(rt->finalize_cyc - rt->init_cyc) / 1e9;
	double mpi_s = local_mpi_ns / 1e9;
	struct {
		double v;
		int rank;
	} mine[2] = { { wall > mpi_s ? wall - mpi_s : 0, rt->rank }, { mpi_s, rt->rank } },
	  mx[2], mn[2];
	double sum[2], mv[2] = { mine[0].v, mine[1].v };
	PMPI_Allreduce(mine, mx, 2, MPI_DOUBLE_INT, MPI_MAXLOC, c);
	PMPI_Allreduce(mine, mn, 2, MPI_DOUBLE_INT, MPI_MINLOC, c);
	PMPI_Allreduce(mv, sum, 2, MPI_DOUBLE, MPI_SUM, c);

	/* The TOP slots by time, the same list on every rank; owners send rank 0 the locations. */
	int order[SLOTS], ntop = 0;
	for (int k = 0; k < SLOTS; k++)
		if (all->calls[k] > 0)
			order[ntop++] = k;
	sort_slots = all;
	qsort(order, (size_t)ntop, sizeof *order, cmp_slot_time_desc);
	if (ntop > TOP)
		ntop = TOP;
	for (int i = 0; i < ntop; i++) {
		int k = order[i];
		if (all->owner[k] == 0 || rt->size == 1)
			continue;
		if (rt->rank == all->owner[k])
			PMPI_Send(locs[k], LOC_LEN, MPI_CHAR, 0, k, c);
		else if (rt->rank == 0)
			PMPI_Recv(locs[k], LOC_LEN, MPI_CHAR, all->owner[k], k, c, MPI_STATUS_IGNORE);
	}
	if (rt->rank != 0)
		goto out;

	FILE *f = stderr;
	int P = rt->size;
	fprintf(f, "noisetool: %d rank%s, %.3f s from MPI_Init to MPI_Finalize, level %s\n", P,
		P == 1 ? "" : "s", wall,
		rt->env.level == 0 ? "timing" : rt->env.level == 1 ? "os" : "full");
	fprintf(f, "noisetool:   app time  min %.6f s (rank %d)  mean %.6f s  max %.6f s (rank %d)\n",
		mn[0].v, mn[0].rank, sum[0] / P, mx[0].v, mx[0].rank);
	fprintf(f, "noisetool:   MPI time  min %.6f s (rank %d)  mean %.6f s  max %.6f s (rank %d)\n",
		mn[1].v, mn[1].rank, sum[1] / P, mx[1].v, mx[1].rank);
	if (nt_sites_overflow())
		fprintf(f, "noisetool:   %llu calls found the site table full (raise NOISETOOL_MEM)\n",
			(unsigned long long)nt_sites_overflow());
	fprintf(f, "noisetool:   top call sites by MPI time (cov: coefficient of variation of the "
		   "site's time across ranks)\n");
	fprintf(f, "noisetool:   %-22s %-44s %12s %12s %12s %6s\n", "function", "location", "calls",
		"total ms", "max/rank ms", "cov");
	for (int i = 0; i < ntop; i++) {
		int k = order[i];
		double mean = all->time_ns[k] / P;
		double var = all->time2[k] / P - mean * mean;
		double cov = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
		const char *name = all->fn[k] >= 0 && all->fn[k] < NT_FN_COUNT ? nt_fn_name[all->fn[k]]
										: "?";
		fprintf(f, "noisetool:   %-22s %-44s %12.0f %12.3f %12.3f %6.3f%s\n", name, locs[k],
			all->calls[k], all->time_ns[k] / 1e6, all->time_max[k] / 1e6, cov,
			all->key_min[k] != all->key_max[k] ? " (slot shared by several sites)" : "");
	}
out:
	free(local);
	free(all);
	free(locs);
}
