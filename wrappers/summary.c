/* Finalize-time summary by reductions: sites are hashed into SLOTS slots by (function, module,
 * offset), which agree across ranks under ASLR; each slot is reduced with MIN/MAX/SUM. */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <noisetool/clock.h>

#include <noisetool/ntlog.h>

#include "pysite.h"
#include "sites.h"
#include "summary.h"
#include "toolwait.h"
#include NT_WRAPPER_IDS_FILE /* wrapper-ids-MPI.h, generated for this MPI (meson.build) */

enum { SLOTS = 256, TOP = 10, LOC_LEN = 256 };

/* Module-relative identity of a call site; with loc, also its text:
 * "module+0xoffset (symbol+0xoff)". */
static uint64_t site_key(const struct nt_site *s, char *loc, size_t size)
{
	Dl_info info;
	uintptr_t addr = s->ret - 1; /* inside the call instruction, not after it */
	const char *module = "?", *py_file;
	uintptr_t offset = addr;
	bool found = false;
	if (nt_log_python_site(nt_pysite_module(s), NULL, NULL, &py_file)) {
		/* A Python site: file.py:line (the file is the same on every rank). */
		module = strrchr(py_file, '/') ? strrchr(py_file, '/') + 1 : py_file;
		offset = s->py_line;
		if (loc)
			snprintf(loc, size, "%s:%u", module, s->py_line);
		loc = NULL;
	} else {
		found = dladdr((void *)addr, &info) && info.dli_fname;
	}
	if (found) {
		module = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1
						      : info.dli_fname;
		offset = addr - (uintptr_t)info.dli_fbase;
	}
	if (loc && found && info.dli_sname && info.dli_saddr)
		snprintf(loc, size, "%s+0x%lx (%s+0x%lx)", module, (unsigned long)offset,
			 info.dli_sname, (unsigned long)(addr - (uintptr_t)info.dli_saddr));
	else if (loc && found)
		snprintf(loc, size, "%s+0x%lx", module, (unsigned long)offset);
	else if (loc)
		snprintf(loc, size, "0x%lx", (unsigned long)addr);
	/* FNV-1a over function id, module name and offset. */
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p = (const unsigned char *)module;
	for (; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h = (h ^ s->fn) * 1099511628211ull;
	h = (h ^ offset) * 1099511628211ull;
	return h ? h : 1;
}

/* Laid out for few reductions: one MAX over the uint64 pair (~key_min, key_max), one SUM over
 * calls, time_ns, time2 and the rank's app and MPI seconds, one MAX over time_max, one MAX over
 * -owner. */
struct slots {
	uint64_t key_not_min[SLOTS]; /* ~smallest key (MAX of ~key = ~MIN of key) */
	uint64_t key_max[SLOTS];
	double calls[SLOTS], time_ns[SLOTS], time2[SLOTS], sum[2];
	double time_max[SLOTS];
	int not_owner[SLOTS];      /* -lowest rank that has the slot */
	uint64_t key_min[SLOTS];   /* ~key_not_min, after the reduction */
	int owner[SLOTS];          /* -not_owner, after the reduction */
};

/* A top slot's name, formatted by its owner rank: its largest site's function and location. */
struct top_site {
	int fn;
	char loc[LOC_LEN];
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
	/* Reduced in place: one copy of the slots (72 KiB), and location strings only for the
	 * TOP slots, formatted by their owners once the top is known. */
	struct slots *all = calloc(1, sizeof *all);
	/* The slot's site with the most time here: the one a shared slot is named after. */
	struct nt_site **largest = calloc(SLOTS, sizeof *largest);
	struct top_site *locs = calloc(TOP, sizeof *locs);
	if (!all || !largest || !locs)
		goto out;
	struct slots *local = all;
	for (int i = 0; i < SLOTS; i++) {
		local->key_min[i] = UINT64_MAX;
		local->owner[i] = INT_MAX;
	}
	size_t it = 0;
	double local_mpi_ns = 0;
	for (struct nt_site *s; (s = nt_sites_next(&it));) {
		if (s->calls == 0)
			continue;
		uint64_t key = site_key(s, NULL, 0);
		int k = (int)(key % SLOTS);
		double t = nt_clock_cyc_to_ns(s->total_cyc);
		if (!largest[k] || s->total_cyc > largest[k]->total_cyc)
			largest[k] = s;
		local->key_min[k] = key < local->key_min[k] ? key : local->key_min[k];
		local->key_max[k] = key > local->key_max[k] ? key : local->key_max[k];
		local->calls[k] += (double)s->calls;
		local->time_ns[k] += t;
		local->owner[k] = rt->rank;
		if (!s->nonblocking)
			local_mpi_ns += t;
	}
	for (int k = 0; k < SLOTS; k++) {
		local->time2[k] = local->time_ns[k] * local->time_ns[k];
		local->time_max[k] = local->time_ns[k];
		local->key_not_min[k] = ~local->key_min[k];
		local->not_owner[k] = -local->owner[k];
	}
	/* Per-rank MPI time is the sum of its sites; application time the rest of the wall time
	 * from MPI_Init to MPI_Finalize (with several threads calling MPI, MPI time can exceed
	 * the wall time: it is summed over threads). */
	double wall = nt_clock_cyc_to_ns(rt->finalize_cyc - rt->init_cyc) / 1e9;
	double mpi_s = local_mpi_ns / 1e9, app_s = wall > mpi_s ? wall - mpi_s : 0;
	local->sum[0] = app_s;
	local->sum[1] = mpi_s;
	/* MAXLOC of the negated values is the MINLOC (ties go to the lower rank either way). */
	struct {
		double v;
		int rank;
	} mine[4] = { { app_s, rt->rank }, { mpi_s, rt->rank }, { -app_s, rt->rank },
		      { -mpi_s, rt->rank } }, loc[4];

	/* Five reductions, started together and waited for with the CPU given away (toolwait.h):
	 * at 4 ranks on 2 CPUs, eleven blocking allreduces here took 270-440 ms. */
	MPI_Comm c = rt->comm;
	MPI_Request r[TOP > 5 ? TOP : 5];
	int n = 0;
	PMPI_Iallreduce(MPI_IN_PLACE, all->key_not_min, 2 * SLOTS, MPI_UINT64_T, MPI_MAX, c,
			&r[n++]);
	PMPI_Iallreduce(MPI_IN_PLACE, all->calls, 3 * SLOTS + 2, MPI_DOUBLE, MPI_SUM, c, &r[n++]);
	PMPI_Iallreduce(MPI_IN_PLACE, all->time_max, SLOTS, MPI_DOUBLE, MPI_MAX, c, &r[n++]);
	PMPI_Iallreduce(MPI_IN_PLACE, all->not_owner, SLOTS, MPI_INT, MPI_MAX, c, &r[n++]);
	PMPI_Iallreduce(mine, loc, 4, MPI_DOUBLE_INT, MPI_MAXLOC, c, &r[n++]);
	nt_toolwait_all(n, r, MPI_STATUSES_IGNORE, NT_TOOLWAIT_SPIN_NS);
	for (int k = 0; k < SLOTS; k++) {
		all->owner[k] = -all->not_owner[k];
		all->key_min[k] = ~all->key_not_min[k];
	}
	const double *sum = all->sum;

	/* The TOP slots by time, the same list on every rank; owners send rank 0 the locations. */
	int order[SLOTS], ntop = 0;
	for (int k = 0; k < SLOTS; k++)
		if (all->calls[k] > 0)
			order[ntop++] = k;
	sort_slots = all;
	qsort(order, (size_t)ntop, sizeof *order, cmp_slot_time_desc);
	if (ntop > TOP)
		ntop = TOP;
	n = 0;
	for (int i = 0; i < ntop; i++) {
		int k = order[i];
		if (rt->rank == all->owner[k]) {
			site_key(largest[k], locs[i].loc, LOC_LEN);
			locs[i].fn = (int)largest[k]->fn;
		}
		if (all->owner[k] == 0 || rt->size == 1)
			continue;
		if (rt->rank == all->owner[k])
			PMPI_Isend(&locs[i], sizeof *locs, MPI_BYTE, 0, k, c, &r[n++]);
		else if (rt->rank == 0)
			PMPI_Irecv(&locs[i], sizeof *locs, MPI_BYTE, all->owner[k], k, c, &r[n++]);
	}
	nt_toolwait_all(n, r, MPI_STATUSES_IGNORE, NT_TOOLWAIT_SPIN_NS);
	if (rt->rank != 0)
		goto out;

	FILE *f = stderr;
	int P = rt->size;
	fprintf(f, "noisetool: %d rank%s, %.3f s from MPI_Init to MPI_Finalize, level %s\n", P,
		P == 1 ? "" : "s", wall,
		rt->env.level == 0 ? "timing" : rt->env.level == 1 ? "os" : "full");
	fprintf(f, "noisetool:   app time  min %.6f s (rank %d)  mean %.6f s  max %.6f s (rank %d)\n",
		-loc[2].v, loc[2].rank, sum[0] / P, loc[0].v, loc[0].rank);
	fprintf(f, "noisetool:   MPI time  min %.6f s (rank %d)  mean %.6f s  max %.6f s (rank %d)\n",
		-loc[3].v, loc[3].rank, sum[1] / P, loc[1].v, loc[1].rank);
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
		const char *name = locs[i].fn >= 0 && locs[i].fn < NT_FN_COUNT ? nt_fn_name[locs[i].fn]
										: "?";
		/* Sites whose keys share a slot are summed in it: it is named after its largest
		 * site on its owner rank, and its numbers are the slot's (the log has each). */
		fprintf(f, "noisetool:   %-22s %-44s %12.0f %12.3f %12.3f %6.3f%s\n", name,
			locs[i].loc, all->calls[k], all->time_ns[k] / 1e6, all->time_max[k] / 1e6,
			cov,
			all->key_min[k] != all->key_max[k]
				? " (with other sites summed in its slot; noisetool report has each)"
				: "");
	}
out:
	free(all);
	free(largest);
	free(locs);
}
