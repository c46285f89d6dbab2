/* The report as text tables (noisetool/report.h): the job, the ranks, the call sites, the named
 * Python calls, the late arrivals and their culprits; every string from a log made safe for a
 * terminal. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/report.h>

#include "report-merge.h"
#include "utf8.h"

/* The widths of the "function at location" columns of the culprit and late-instance tables, and
 * the most the site table's location column grows to: a longer name is elided (elide). */
enum { CULPRIT_WIDTH = 36, LATE_WIDTH = 30, SITE_LOCATION_MAX = 80 };

/* s for a terminal: each byte that is a control character (an escape sequence in a host or
 * function name would drive the terminal), a C1 control or not UTF-8 becomes '?'. At most
 * size - 1 bytes, never a sequence cut in two. Returns buf. */
static const char *printable(const char *s, char *buf, size_t size)
{
	size_t n = 0;
	for (const char *p = s ? s : ""; *p && n + 1 < size;) {
		size_t len = nt_utf8_length(p);
		unsigned char c = (unsigned char)p[0], c1 = (unsigned char)p[1];
		bool control = len == 1 ? c < 0x20 || c == 0x7f : len == 2 && c == 0xc2 && c1 < 0xa0;
		if (len == 0 || control) {
			buf[n++] = '?';
			p += len ? len : 1;
			continue;
		}
		if (n + len >= size)
			break;
		memcpy(buf + n, p, len);
		n += len;
		p += len;
	}
	buf[n] = '\0';
	return buf;
}

/* The job's lines of the text report: its command line and MPI library, each cut to a line. */
static void write_job_text(FILE *f, const struct nt_log *log)
{
	struct nt_report_job job;
	if (nt_report_job(log, &job) != 0)
		return;
	char buf[120];
	if (*job.command) {
		printable(job.command, buf, sizeof buf);
		fprintf(f, "command: %s%s", buf, strlen(buf) < strlen(job.command) ? " ..." : "");
		if (job.commands > 1)
			fprintf(f, " (one of %u different command lines: an MPMD job)", job.commands);
		fputc('\n', f);
	}
	if (*job.mpi_library) {
		printable(job.mpi_library, buf, sizeof buf);
		fprintf(f, "MPI: %s%s\n", buf, strlen(buf) < strlen(job.mpi_library) ? " ..." : "");
	}
	if (*job.batch_job) {
		char sys[24], id[80], nodes[120];
		printable(*job.batch_system ? job.batch_system : "?", sys, sizeof sys);
		printable(job.batch_job, id, sizeof id);
		printable(job.batch_nodes, nodes, sizeof nodes);
		fprintf(f, "batch job: %s %s", sys, id);
		if (*nodes)
			fprintf(f, " on %s%s", nodes,
				strlen(nodes) < strlen(job.batch_nodes) ? " ..." : "");
		if (*job.user) {
			printable(job.user, buf, sizeof buf);
			fprintf(f, ", user %s", buf);
		}
		fputc('\n', f);
	} else if (*job.user) {
		printable(job.user, buf, sizeof buf);
		fprintf(f, "user: %s\n", buf);
	}
}

/* The characters of the printable string s (its UTF-8 sequences counted once). */
static size_t chars(const char *s)
{
	size_t n = 0;
	for (size_t len; *s; s += len ? len : 1, n++)
		len = nt_utf8_length(s);
	return n;
}

/* in with the contents of each outermost open ... close pair put as "...": "f<int, T<x> >"
 * becomes "f<...>". "(anonymous namespace)" stays. false, out undefined, when the brackets do
 * not pair (an operator<, operator>> or a name cut short): the name is then left whole. */
static bool collapse(const char *in, char open, char close, char *out, size_t size)
{
	static const char anon[] = "(anonymous namespace)";
	size_t n = 0;
	int depth = 0;
	for (const char *p = in; *p; p++) {
		if (depth == 0 && open == '(' && !strncmp(p, anon, sizeof anon - 1)) {
			if (n + sizeof anon >= size)
				return false;
			memcpy(out + n, anon, sizeof anon - 1);
			n += sizeof anon - 1;
			p += sizeof anon - 2;
			continue;
		}
		if (*p == open && depth++ == 0) {
			if (n + 4 >= size)
				return false;
			memcpy(out + n, (char[]){ open, '.', '.', '.' }, 4);
			n += 4;
			continue;
		}
		if (*p == close && --depth < 0)
			return false;
		if (depth == 0) {
			if (n + 1 >= size)
				return false;
			out[n++] = *p;
		}
	}
	out[n] = '\0';
	return depth == 0;
}

/* s made printable in at most width characters. A longer one (a C++ function with its template
 * arguments and parameters runs to hundreds: "bagel::SpinFreeMethod<std::complex<double> >::
 * compute_residual(std::shared_ptr<...>, ...) const+0x1a") first loses its template arguments,
 * then its parameters ("bagel::SpinFreeMethod<...>::compute_residual(...) const+0x1a"); what is
 * still too long keeps its start and its end, which holds what tells two sites apart (":123",
 * "+0x1a"), around "...". The JSON and HTML reports keep the whole name. Returns buf, which
 * holds at least width + 1 bytes. */
static const char *elide(const char *s, char *buf, size_t size, size_t width)
{
	char whole[1024], shorter[1024];
	printable(s, whole, sizeof whole);
	if (chars(whole) > width && collapse(whole, '<', '>', shorter, sizeof shorter)) {
		snprintf(whole, sizeof whole, "%s", shorter);
		if (chars(whole) > width && collapse(whole, '(', ')', shorter, sizeof shorter))
			snprintf(whole, sizeof whole, "%s", shorter);
	}
	size_t n = strlen(whole);
	if (chars(whole) <= width || width < 8) {
		snprintf(buf, size, "%.*s", (int)width, whole); /* width < 8: cut */
		return buf;
	}
	/* Characters, not bytes: cut at sequence boundaries, the tail a little longer. */
	size_t head = (width - 3) / 2, tail = width - 3 - head, h = 0, t = n;
	for (size_t k = 0; k < head; k++)
		h += nt_utf8_length(whole + h) ? nt_utf8_length(whole + h) : 1;
	for (size_t k = 0; k < tail && t > h; k++) {
		do
			t--;
		while (t > h && ((unsigned char)whole[t] & 0xc0) == 0x80);
	}
	snprintf(buf, size, "%.*s...%s", (int)h, whole, whole + t);
	return buf;
}

static void culprit_row(FILE *f, const char *who, const struct nt_culprit *c)
{
	fprintf(f, "%-*s %10.3f %8llu", CULPRIT_WIDTH, who, (double)c->delay_ns / 1e6,
		(unsigned long long)c->instances);
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		fprintf(f, " %5.1f", c->delay_ns ? 100.0 * (double)c->causes.ns[k] /
							 (double)c->delay_ns : 0.0);
	fputc('\n', f);
}

/* The causes' columns of a table's head (NT_CAUSES), each 5 wide after a space. */
static void cause_columns(FILE *f)
{
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		fprintf(f, " %5s", nt_cause_info((enum nt_cause)k)->column);
	fputc('\n', f);
}

static void culprit_header(FILE *f, const char *what)
{
	fprintf(f, "%-*s %10s %8s", CULPRIT_WIDTH, what, "delay ms", "late");
	cause_columns(f);
}

/* A site's location for the text table: a Python site's "file.py:line" followed by its call
 * ("script.py:19 comm.allreduce"), any other as it is. Returns buf. */
static const char *site_location(const struct nt_report_site *s, char *buf, size_t size)
{
	char loc[sizeof s->location], call[sizeof s->python_call];
	printable(s->location, loc, sizeof loc);
	if (!s->python_call[0])
		snprintf(buf, size, "%s", loc);
	else
		snprintf(buf, size, "%s %s", loc, printable(s->python_call, call, sizeof call));
	return buf;
}

/* "MPI calls by Python call": a line per named Python call site, its MPI calls and time
 * summed, and the MPI functions it is made of. Nothing when no site has a call name. */
static void write_python_calls_text(FILE *f, const struct nt_report *rep, size_t top)
{
	const struct nt_report_site **idx;
	size_t ng;
	struct nt_report_py_group *g;
	if (nt_report_python_groups(rep, &idx, &g, &ng) < 0 || !ng)
		return;
	size_t shown = top && top < ng ? top : ng;
	fprintf(f, "\nMPI calls by Python call (the MPI calls each Python call site is made of; "
		   "how many Python calls they were is not known)\n");
	fprintf(f, "%-24s %-36s %12s %12s  %s\n", "python call", "location", "MPI calls",
		"MPI ms", "MPI functions (calls)");
	for (size_t k = 0; k < shown; k++) {
		const struct nt_report_site *s = idx[g[k].first];
		char call[sizeof s->python_call], loc[sizeof s->location], fn[256];
		fprintf(f, "%-24s %-36s %12llu %12.3f ",
			printable(s->python_call, call, sizeof call),
			printable(s->location, loc, sizeof loc), (unsigned long long)g[k].calls,
			(double)g[k].time_ns / 1e6);
		for (size_t i = 0; i < g[k].n; i++) {
			const struct nt_report_site *m = idx[g[k].first + i];
			fprintf(f, "%s %s %llu", i ? "," : "", printable(m->function, fn, sizeof fn),
				(unsigned long long)m->calls);
		}
		fputc('\n', f);
	}
	if (shown < ng)
		fprintf(f, "(%zu more Python calls; --top 0 shows all)\n", ng - shown);
	free((void *)idx);
	free(g);
}

/* The culprits: ranks, nodes and call sites by the delay they imposed, with the causes in %. */
static void preempted_by_text(FILE *f, const struct nt_report *rep, const struct nt_culprit *c);

static void write_culprits_text(FILE *f, const struct nt_report *rep)
{
	const struct nt_attrib *a = &rep->attrib;
	fprintf(f, "\nLate arrivals: %llu of %llu joined instances were late by more than %.1f us "
		   "(global clock error <= %.1f us)\n",
		(unsigned long long)a->instances_late, (unsigned long long)a->instances_joined,
		(double)a->threshold_ns / 1e3, (double)a->clock_error_ns / 1e3);
	if (a->clock_test_error_ns)
		fprintf(f, "clock test (NOISETOOL_TEST_CLOCK): largest error of a corrected time "
			   "%.3f us\n", (double)a->clock_test_error_ns / 1e3);
	if (!a->instances_late)
		return;
	fprintf(f, "total delay imposed %.3f ms; the last arriver also waited least inside the "
		   "collective in %llu of them\n",
		(double)a->total_delay_ns / 1e6, (unsigned long long)a->crosscheck_agree);
	if (a->instances_no_window) /* how many, not "some": all of them at level timing */
		fprintf(f, "without OS data: %llu of the %llu late instances, %.3f ms of the delay "
			   "(counted unexplained: level timing, or no probe window of the late rank "
			   "covered the instance)\n",
			(unsigned long long)a->instances_no_window,
			(unsigned long long)a->instances_late, (double)a->delay_no_window_ns / 1e6);
	fprintf(f, "\nCulprits by rank (causes in %% of the delay)\n");
	culprit_header(f, "rank (host)");
	for (size_t i = 0; i < a->nranks; i++) {
		char who[64], host[41];
		snprintf(who, sizeof who, "%u (%s)", a->ranks[i].rank,
			 printable(a->ranks[i].host, host, sizeof host));
		culprit_row(f, who, &a->ranks[i]);
		preempted_by_text(f, rep, &a->ranks[i]);
	}
	if (a->nnodes > 1) {
		fprintf(f, "\nCulprits by node\n");
		culprit_header(f, "host");
		for (size_t i = 0; i < a->nnodes; i++) {
			char host[256];
			culprit_row(f, printable(a->nodes[i].host, host, sizeof host), &a->nodes[i]);
		}
	}
	fprintf(f, "\nCulprits by call site (of the last arriver)\n");
	culprit_header(f, "function at location");
	for (size_t i = 0; i < a->nsites && i < 10; i++) {
		const struct nt_report_site *s = nt_report_merged_site(rep, a->sites[i].site);
		char who[4 * CULPRIT_WIDTH], fn[21], loc[4 * CULPRIT_WIDTH];
		printable(a->sites[i].site->function, fn, sizeof fn);
		snprintf(who, sizeof who, "%s %s", fn,
			 elide(s ? s->location : "?", loc, sizeof loc, CULPRIT_WIDTH - 1 - strlen(fn)));
		culprit_row(f, who, &a->sites[i]);
	}
}

int nt_report_write_late(FILE *f, const struct nt_report *rep, size_t n)
{
	if (!f || !rep)
		return -EINVAL;
	const struct nt_attrib *a = &rep->attrib;
	if (n > a->nlate)
		n = a->nlate;
	if (!n)
		return 0;
	fprintf(f, "\nThe %zu latest instances (causes in %% of the delay)\n", n);
	fprintf(f, "%10s %-22s %-*s %5s %9s", "at ms", "comm:seq", LATE_WIDTH, "function at location",
		"last", "delay us");
	cause_columns(f);
	for (size_t i = 0; i < n; i++) {
		const struct nt_late *l = &a->late[i];
		const struct nt_report_site *s = nt_report_merged_site(rep, l->site);
		char inst[48], where[4 * LATE_WIDTH], fn[15], loc[4 * LATE_WIDTH];
		if (l->comm_id == 0)
			snprintf(inst, sizeof inst, "world:%llu", (unsigned long long)l->seq);
		else
			snprintf(inst, sizeof inst, "%llx:%llu", (unsigned long long)l->comm_id,
				 (unsigned long long)l->seq);
		printable(l->site ? l->site->function : "?", fn, sizeof fn);
		snprintf(where, sizeof where, "%s %s", fn,
			 elide(s ? s->location : "?", loc, sizeof loc, LATE_WIDTH - 1 - strlen(fn)));
		fprintf(f, "%10.3f %-22s %-*s %5u %9.1f", (double)l->start_ns / 1e6, inst,
			LATE_WIDTH, where, l->rank, (double)l->delay_ns / 1e3);
		for (int k = 0; k < NT_CAUSE_COUNT; k++)
			fprintf(f, " %5.1f", l->delay_ns ? 100.0 * (double)l->causes.ns[k] /
								 (double)l->delay_ns : 0.0);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* The ranks whose block has flag, as "rank 3" or "ranks 0, 1, 5" (the first 20, then "..."),
 * into buf. Returns how many. */
static uint32_t ranks_with(const struct nt_log *log, uint32_t flag, uint32_t without, char *buf,
			   size_t size)
{
	uint32_t n = 0;
	size_t len = 0;
	buf[0] = '\0';
	for (uint32_t r = 0; r < log->nranks; r++) {
		if (!(log->ranks[r].flags & flag) || (log->ranks[r].flags & without))
			continue;
		if (n < 20 && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%u", n ? ", " : "",
						log->ranks[r].rank);
		else if (n == 20 && len < size)
			len += (size_t)snprintf(buf + len, size - len, ", ...");
		n++;
	}
	return n;
}

/* The ranks of a job read from its live files (noisetool-private/live-file.h): those that still ran, those
 * that ended without MPI_Finalize, those whose MPI_Finalize could not write the log, those that
 * left nothing. Whether it named any. */
static bool write_unfinished_text(FILE *f, const struct nt_log *log)
{
	char list[256];
	bool named = false;
	uint32_t n = ranks_with(log, NT_LOG_FLAG_RUNNING, 0, list, sizeof list);
	if (n) {
		fprintf(f, "PARTIAL: %s %s still %s on this host: a snapshot of a job in progress "
			   "(report again once it has ended)\n",
			n == 1 ? "rank" : "ranks", list, n == 1 ? "runs" : "run");
		named = true;
	}
	n = ranks_with(log, NT_LOG_FLAG_UNFINISHED, NT_LOG_FLAG_RUNNING, list, sizeof list);
	if (n) {
		fprintf(f, "PARTIAL: %s %s ended without MPI_Finalize (killed, crashed, aborted or "
			   "stopped at a time limit): %s calls and records up to then, from the live "
			   "files\n",
			n == 1 ? "rank" : "ranks", list, n == 1 ? "its" : "their");
		named = true;
	}
	n = ranks_with(log, NT_LOG_FLAG_UNWRITTEN, 0, list, sizeof list);
	if (n) {
		/* The error of the lowest such rank: the ranks' write fails together. */
		uint32_t error = 0;
		for (uint32_t r = 0; r < log->nranks && !error; r++)
			if (log->ranks[r].flags & NT_LOG_FLAG_UNWRITTEN)
				error = log->ranks[r].log_errno;
		fprintf(f, "PARTIAL: %s %s reached MPI_Finalize but could not write the log (%s): "
			   "%s calls and records in full, from the live files (no clock drift measured "
			   "at MPI_Finalize, no probe or injector totals)\n",
			n == 1 ? "rank" : "ranks", list,
			error ? strerror((int)error) : "the job's stderr said why",
			n == 1 ? "its" : "their");
		named = true;
	}
	n = ranks_with(log, NT_LOG_FLAG_ABORTED, 0, list, sizeof list);
	if (n)
		fprintf(f, "PARTIAL: %s %s called MPI_Abort\n", n == 1 ? "rank" : "ranks", list);
	n = ranks_with(log, NT_LOG_FLAG_MISSING, 0, list, sizeof list);
	if (n) {
		fprintf(f, "PARTIAL: %s %s left no data (no live file: %s never started the tool, or "
			   "the file was lost)\n",
			n == 1 ? "rank" : "ranks", list, n == 1 ? "it" : "they");
		named = true;
	}
	return named;
}

/* After "N ranks, level L, ": "complete", or each kind of loss with its count over all
 * ranks, one per line, each line "PARTIAL: ..." (the first on the line begun). */
static void write_losses_text(FILE *f, const struct nt_report *rep)
{
	if (!rep->partial) {
		fprintf(f, "complete\n");
		return;
	}
	bool named = write_unfinished_text(f, rep->log);
	for (int k = 0; k < NT_LOSS_COUNT; k++) {
		if (!rep->losses[k])
			continue;
		char what[256];
		nt_loss_describe((enum nt_loss)k, rep->losses[k], what, sizeof what);
		fprintf(f, "PARTIAL: %s\n", what);
		named = true;
	}
	if (named)
		return;
	if (rep->log->version < 3)
		fprintf(f, "PARTIAL: a rank lost what a version %u log does not count (nonblocking or "
			   "persistent instances not timed, or records on communicators without an "
			   "id; the job's stderr said how many)\n", rep->log->version);
	else
		fprintf(f, "PARTIAL: the log is marked partial but counts no loss\n");
}

/* The rank table's note on what a rank lost. */
static void write_rank_losses_text(FILE *f, const struct nt_log_rank *k)
{
	static const char *const note[NT_LOSS_COUNT] = {
		"calls at merged sites", "records dropped", "instances not timed",
		"persistent collectives not registered", "records on communicators without an id",
	};
	for (int i = 0; i < NT_LOSS_COUNT; i++)
		if (nt_loss_count(k, (enum nt_loss)i))
			fprintf(f, "  (%s)", note[i]);
}

/* The coverage line: how much of the MPI time the attribution accounts for (coverage.h). */
static void write_coverage_text(FILE *f, const struct nt_report *rep)
{
	const struct nt_coverage_part *c = &rep->coverage.all;
	double over = c->over_ns ? (double)c->over_ns : 1;
	fprintf(f, "Coverage: %.3f ms in MPI, %.3f ms of it in collectives, %.3f ms over their "
		   "calls' own cost;\n  late arrivals account for %.1f %% of that, holds inside the "
		   "calls %.1f %% (%.1f %% given to a rank and an OS cause, %.1f %% to a rank "
		   "unexplained, %.1f %% not measured: no OS data); %.1f %% not accounted for yet "
		   "(instances not recorded on every member)\n\n",
		(double)c->mpi_ns / 1e6, (double)c->coll_ns / 1e6, (double)c->over_ns / 1e6,
		100.0 * (double)c->waited_ns / over, 100.0 * (double)c->held_ns / over,
		100.0 * (double)c->cause_ns / over, 100.0 * (double)c->unexplained_ns / over,
		100.0 * (double)c->no_data_ns / over,
		c->over_ns ? 100.0 * (double)(c->over_ns - c->waited_ns - c->held_ns) / over : 0.0);
}

/* The identity rank by rank: its MPI time, of it in collectives, their own cost, what it lost
 * waiting for late arrivals and to holds inside the calls, and the rest; the columns add up
 * (coverage.h). */
/* One row of the coverage tables: its MPI time, collectives, own cost, waiting, held inside,
 * not accounted (ms) and the share of the lost time with OS data. */
static void coverage_row(FILE *f, const struct nt_coverage_part *p)
{
	uint64_t lost = p->waited_ns + p->held_ns;
	fprintf(f, " %12.3f %12.3f %12.3f %12.3f %12.3f %14.3f %10.1f\n", (double)p->mpi_ns / 1e6,
		(double)p->coll_ns / 1e6, (double)p->own_ns / 1e6, (double)p->waited_ns / 1e6,
		(double)p->held_ns / 1e6, (double)(p->over_ns - lost) / 1e6,
		lost ? 100.0 * (double)(lost - p->no_data_ns) / (double)lost : 100.0);
}

static void write_coverage_ranks_text(FILE *f, const struct nt_report *rep)
{
	const struct nt_coverage *cv = &rep->coverage;
	fprintf(f, "\nMPI time by rank (ms; collectives = own cost + waiting for late arrivals + "
		   "held inside + not accounted)\n");
	fprintf(f, "%6s %12s %12s %12s %12s %12s %14s %10s\n", "rank", "MPI",
		"collectives", "own cost", "waiting", "held inside", "not accounted",
		"measured %");
	for (size_t r = 0; r < cv->nranks; r++) {
		fprintf(f, "%6zu", r);
		coverage_row(f, &cv->ranks[r]);
	}
}

/* The same by collective call site (merged across ranks; the call-site table's order, top of
 * them: 0 all): where the time over the own cost was lost, site by site. */
static void write_coverage_sites_text(FILE *f, const struct nt_report *rep, size_t top)
{
	if (!rep->site_coverage)
		return;
	size_t shown = 0, n = 0;
	for (size_t i = 0; i < rep->nsites; i++)
		n += rep->site_coverage[i].coll_ns > 0;
	if (!n)
		return;
	fprintf(f, "\nMPI time by collective call site (ms, all ranks; the same columns)\n");
	fprintf(f, "%-40s %12s %12s %12s %12s %12s %14s %10s\n", "function at location", "MPI",
		"collectives", "own cost", "waiting", "held inside", "not accounted",
		"measured %");
	for (size_t i = 0; i < rep->nsites && (!top || shown < top); i++) {
		const struct nt_report_site *s = &rep->sites[i];
		if (!rep->site_coverage[i].coll_ns)
			continue;
		char fn[256], loc[sizeof s->location + sizeof s->python_call + 1], both[512],
			shown_name[4 * 40];
		snprintf(both, sizeof both, "%s %s", printable(s->function, fn, sizeof fn),
			 site_location(s, loc, sizeof loc));
		elide(both, shown_name, sizeof shown_name, 40);
		fprintf(f, "%s%*s", shown_name, 40 - (int)chars(shown_name), "");
		coverage_row(f, &rep->site_coverage[i]);
		shown++;
	}
	if (shown < n)
		fprintf(f, "(%zu more collective call sites; --top 0 shows all)\n", n - shown);
}

/* The holds inside the calls: by the rank that held them (doc/attribution.md, "Held up inside
 * a call"). Nothing when there is none. */
static void write_held_text(FILE *f, const struct nt_report *rep)
{
	const struct nt_attrib *a = &rep->attrib;
	if (!a->instances_held)
		return;
	fprintf(f, "\nHeld up inside the call: %llu instances a member stayed in after the last "
		   "arrival and the call's own cost, %.3f ms held\n",
		(unsigned long long)a->instances_held, (double)a->held_delay_ns / 1e6);
	fprintf(f, "%-*s %10s %8s", CULPRIT_WIDTH, "held by rank (host)", "delay ms", "held");
	cause_columns(f);
	for (size_t i = 0; i < a->nheld_ranks; i++) {
		char who[64], host[41];
		snprintf(who, sizeof who, "%u (%s)", a->held_ranks[i].rank,
			 printable(a->held_ranks[i].host, host, sizeof host));
		culprit_row(f, who, &a->held_ranks[i]);
	}
}

/* Whether a call site of the job is a test call's (MPI_Test*, MPI_Iprobe, MPI_Improbe), whose
 * calls the fast path samples. */
static bool has_test_calls(const struct nt_report *rep)
{
	for (size_t i = 0; i < rep->nsites; i++) {
		const char *fn = rep->sites[i].function;
		if (fn && (strncmp(fn, "MPI_Test", 8) == 0 || strcmp(fn, "MPI_Iprobe") == 0 ||
			   strcmp(fn, "MPI_Improbe") == 0))
			return true;
	}
	return false;
}

/* A share in % for a table, "-" when unknown. */
static const char *pct(double share, char buf[16])
{
	if (share < 0)
		return "-";
	snprintf(buf, 16, "%.1f", 100 * share);
	return buf;
}

/* What to do about ranks that take turns on their CPUs, by how their MPI waits wait. */
static const char *crowd_advice(uint32_t wait_mode)
{
	switch (wait_mode) {
	case NT_LOG_WAIT_MPI:
		return "their MPI waits spin (waits mpi) through the turns of the ranks beside "
		       "them; `noisetool run --wait adaptive` (NOISETOOL_WAIT=adaptive) makes a "
		       "waiting rank nap while its CPU is shared (doc/polling.md)";
	case NT_LOG_WAIT_BUSY:
		return "their MPI waits spin (waits busy) through the turns of the ranks beside "
		       "them; `noisetool run --wait adaptive` makes a waiting rank nap while its "
		       "CPU is shared (doc/polling.md)";
	case NT_LOG_WAIT_ADAPTIVE:
		return "their MPI waits nap while a CPU is shared (waits adaptive)";
	default:
		return "their MPI waits nap (waits sleep)";
	}
}

/* Who shares each rank's CPUs (log version 6), and what follows from it. */
static void write_cpus_text(FILE *f, const struct nt_report *rep)
{
	const struct nt_log *log = rep->log;
	if (!rep->cpus)
		return;
	fprintf(f, "\nCPUs by rank (on CPU, waited: %% of its wall time; the job's other ranks "
		   "there, other tasks, steal: %% of its CPUs' time)\n");
	fprintf(f, "%6s  %-20s %-14s %9s %8s %8s %8s %8s %8s\n", "rank", "host", "cpus",
		"ranks/CPUs", "on CPU", "waited", "job's", "others", "steal");
	uint32_t noisy = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		const struct nt_report_cpus *c = &rep->cpus[r];
		char host[21], list[15], crowd[24], b[5][16];
		printable(k->host, host, sizeof host);
		if (!c->known) {
			fprintf(f, "%6u  %-20s %-14s\n", k->rank, host, "?");
			continue;
		}
		printable(k->cpus, list, sizeof list);
		snprintf(crowd, sizeof crowd, "%u/%u", c->crowd, c->ncpus);
		fprintf(f, "%6u  %-20s %-14s %9s %8s %8s %8s %8s %8s\n", k->rank, host, list, crowd,
			pct(c->on_cpu, b[0]), pct(c->waited, b[1]), pct(c->job_share, b[2]),
			pct(c->others_share, b[3]), pct(c->steal_share, b[4]));
		noisy += c->others_share >= 0.1;
	}
	if (rep->crowded_ranks) {
		uint32_t first = 0;
		while (first < log->nranks &&
		       !(rep->cpus[first].known && rep->cpus[first].crowd > rep->cpus[first].ncpus))
			first++;
		const struct nt_report_cpus *c = &rep->cpus[first];
		char list[64];
		fprintf(f, "%u rank%s take%s turns on %s CPUs with more ranks of this job than they "
			   "have CPUs (rank %u: %u ranks on CPU%s %s): %s.\n",
			rep->crowded_ranks, rep->crowded_ranks == 1 ? "" : "s",
			rep->crowded_ranks == 1 ? "s" : "", rep->crowded_ranks == 1 ? "its" : "their",
			log->ranks[first].rank, c->crowd, c->ncpus == 1 ? "" : "s",
			printable(log->ranks[first].cpus, list, sizeof list),
			crowd_advice(log->wait_mode));
	}
	if (noisy)
		fprintf(f, "Tasks outside this job took 10 %% or more of the CPUs of %u rank%s "
			   "(column others).\n",
			noisy, noisy == 1 ? "" : "s");
}

/* "culprit-hog (pid 4321) 812.30 ms 94 %", "this job's rank 2 (pid 555) ...", share of all
 * the other tasks' time there. */
static void other_task_text(FILE *f, const struct nt_log_rank *k, const struct nt_report_cpus *c,
			    uint32_t t)
{
	const struct nt_log_task *o = &k->others[t];
	double share = k->others_ns ? 100.0 * (double)o->run_ns / (double)k->others_ns : 0;
	if (c->others_rank[t] >= 0)
		fprintf(f, "this job's rank %" PRId64 " (pid %u)", c->others_rank[t], o->pid);
	else if (o->kind == NT_LOG_TASK_PROCESS)
		fprintf(f, "%s (pid %u)", o->comm, o->pid);
	else
		fprintf(f, "%s (pid %u, %s)", o->comm, o->pid,
			o->kind == NT_LOG_TASK_KERNEL ? "kernel thread" : "another user's");
	fprintf(f, " %.2f ms %.0f %%", (double)o->run_ns / 1e6, share);
}

/* "interrupts 275/s: LOC 250/s (Local timer interrupts), ...": the lines of one kind counted on
 * a rank's CPUs, per second of the span they were counted in (log version 7). */
static void irqs_text(FILE *f, const struct nt_log_rank *k, uint32_t kind)
{
	double s = (double)nt_report_others_span_ns(k) / 1e9;
	if (!(s > 0))
		return;
	double all = (double)(kind == NT_LOG_IRQ_SOFTIRQ ? k->softirq_count : k->irq_count) / s;
	fprintf(f, "%s %.*f/s", kind == NT_LOG_IRQ_SOFTIRQ ? "softirqs" : "interrupts",
		all < 9.95 ? 1 : 0, all);
	bool first = true;
	for (uint32_t i = 0; i < k->nirqs && i < NT_LOG_IRQS_MAX; i++) {
		const struct nt_log_irq *q = &k->irqs[i];
		if (q->kind != kind)
			continue;
		double rate = (double)q->count / s;
		fprintf(f, "%s %s %.*f/s%s%s%s", first ? ":" : ",", q->name, rate < 9.95 ? 1 : 0, rate,
			q->desc[0] ? " (" : "", q->desc, q->desc[0] ? ")" : "");
		first = false;
	}
}

/* Which other tasks ran on each rank's CPUs, and the interrupts and softirqs counted there
 * (log version 7). */
static void write_others_text(FILE *f, const struct nt_report *rep)
{
	const struct nt_log *log = rep->log;
	if (!rep->cpus)
		return;
	uint32_t shown = 0, left = 0;
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		const struct nt_report_cpus *c = &rep->cpus[r];
		bool tasks = (k->others_flags & NT_LOG_OTHERS_KNOWN) && k->others_count > 0;
		bool skipped = k->others_flags & NT_LOG_OTHERS_SKIPPED;
		bool irqs = k->others_flags & NT_LOG_IRQS_KNOWN;
		if (!c->known || (!tasks && !skipped && !irqs))
			continue;
		if (shown == 32) {
			left++;
			continue;
		}
		if (shown++ == 0)
			fprintf(f, "\nOther tasks on the ranks' CPUs, from their first reading to "
				   "MPI_Finalize (the busiest, their CPU time there and %% of all other "
				   "tasks' time there; the interrupts and softirqs counted there, per "
				   "second)\n"
				   "%6s  %s\n",
				"rank", "other tasks");
		fprintf(f, "%6u  ", k->rank);
		if (k->others_from_ns && (tasks || irqs))
			fprintf(f, "from %.2f s: ", (double)k->others_from_ns / 1e9);
		if (skipped)
			fprintf(f, "not read at both ends: the job was too short (reading them would "
				   "have taken the rank's reads past 1 %% of its wall time)");
		else if (!tasks)
			fprintf(f, "none seen");
		for (uint32_t t = 0; tasks && t < k->nothers && t < 3; t++) {
			if (t)
				fprintf(f, ", ");
			other_task_text(f, k, c, t);
		}
		if (tasks)
			fprintf(f, "; %u in all, %.2f ms%s", k->others_count,
				(double)k->others_ns / 1e6,
				k->others_flags & NT_LOG_OTHERS_PARTIAL
					? " (the node had more threads than the rank followed)"
					: "");
		fputc('\n', f);
		if (irqs) {
			fprintf(f, "%6s  ", "");
			irqs_text(f, k, NT_LOG_IRQ_INTERRUPT);
			fprintf(f, "; ");
			irqs_text(f, k, NT_LOG_IRQ_SOFTIRQ);
			fputc('\n', f);
		}
	}
	if (left)
		fprintf(f, "(%u more ranks: the JSON report has them all)\n", left);
}

/* Under a rank's culprit row: who preempted it, as shares of the other tasks' time on its
 * CPUs over the job (log version 7). */
static void preempted_by_text(FILE *f, const struct nt_report *rep, const struct nt_culprit *c)
{
	const struct nt_log *log = rep->log;
	if (!rep->cpus || c->delay_ns == 0 || c->rank >= log->nranks ||
	    (double)c->causes.ns[NT_CAUSE_PREEMPTION] < 0.05 * (double)c->delay_ns)
		return;
	const struct nt_log_rank *k = &log->ranks[c->rank];
	const struct nt_report_cpus *v = &rep->cpus[c->rank];
	if (!v->known || !(k->others_flags & NT_LOG_OTHERS_KNOWN) || k->nothers == 0)
		return;
	fprintf(f, "    its preemption, by the tasks that ran on its CPUs");
	if (k->others_run_delay_ns != NT_LOG_UNKNOWN) {
		if (k->others_from_ns)
			fprintf(f, " from %.2f s (it waited %.2f ms for a CPU then)",
				(double)k->others_from_ns / 1e9, (double)k->others_run_delay_ns / 1e6);
		else
			fprintf(f, " (it waited %.2f ms for a CPU)",
				(double)k->others_run_delay_ns / 1e6);
	}
	fprintf(f, ": ");
	for (uint32_t t = 0; t < k->nothers && t < 3; t++) {
		if (t)
			fprintf(f, ", ");
		other_task_text(f, k, v, t);
	}
	fputc('\n', f);
}

int nt_report_write_text(FILE *f, const struct nt_report *rep, const char *log_path, size_t top)
{
	if (!f || !rep)
		return -EINVAL;
	const struct nt_log *log = rep->log;
	char path[4096];
	fprintf(f, "noisetool report: %s\n", printable(log_path, path, sizeof path));
	write_job_text(f, log);
	fprintf(f, "%u rank%s, level %s, waits %s, ", rep->nranks, rep->nranks == 1 ? "" : "s",
		nt_report_level_name(rep->level), nt_report_wait_name(log->wait_mode));
	write_losses_text(f, rep);
	fputc('\n', f);
	write_coverage_text(f, rep);
	fprintf(f, "%6s  %-20s %12s %12s %8s %10s %8s %12s\n", "rank", "host", "wall s", "MPI s",
		"MPI %", "records", "probe %", "injected ms");
	for (uint32_t r = 0; r < log->nranks; r++) {
		const struct nt_log_rank *k = &log->ranks[r];
		char host[21];
		fprintf(f, "%6u  %-20s %12.6f %12.6f %8.2f %10llu %8.2f %12.3f", k->rank,
			printable(k->host, host, sizeof host), (double)k->wall_ns / 1e9, (double)k->mpi_ns / 1e9,
			k->wall_ns ? 100.0 * (double)k->mpi_ns / (double)k->wall_ns : 0,
			(unsigned long long)k->nrecords, nt_report_probe_pct(k), (double)k->injected_ns / 1e6);
		write_rank_losses_text(f, k);
		fputc('\n', f);
	}
	write_cpus_text(f, rep);
	write_others_text(f, rep);
	size_t n = top && top < rep->nsites ? top : rep->nsites;
	fprintf(f, "\nCall sites by MPI time (cov: spread of the per-rank time across ranks");
	if (log->poll_sample > 1 && has_test_calls(rep)) /* 0: not recorded; 1: all timed */
		fprintf(f, "; test calls timed 1 in %u at random, each other one given the last "
			   "timed one's time at its site", log->poll_sample);
	fprintf(f, ")\n");
	/* The location column fits its longest entry (a Python site adds its call), up to
	 * SITE_LOCATION_MAX characters; a longer one is elided in its middle. */
	int loc_w = 36;
	for (size_t i = 0; i < n; i++) {
		const struct nt_report_site *s = &rep->sites[i];
		char loc[sizeof s->location + sizeof s->python_call + 1];
		int len = (int)chars(site_location(s, loc, sizeof loc));
		loc_w = len > loc_w ? (len < SITE_LOCATION_MAX ? len : SITE_LOCATION_MAX) : loc_w;
	}
	fprintf(f, "%-24s %-*s %12s %12s %12s %12s %6s %12s\n", "function", loc_w, "location",
		"calls", "total ms", "max/rank ms", "max call us", "cov", "bytes/call");
	for (size_t i = 0; i < n; i++) {
		const struct nt_report_site *s = &rep->sites[i];
		char fn[256], loc[sizeof s->location + sizeof s->python_call + 1];
		char shown[4 * SITE_LOCATION_MAX];
		elide(site_location(s, loc, sizeof loc), shown, sizeof shown, (size_t)loc_w);
		fprintf(f, "%-24s %s%*s %12llu %12.3f %12.3f %12.1f %6.3f %12.0f\n",
			printable(s->function, fn, sizeof fn), shown,
			loc_w - (int)chars(shown), "",
			(unsigned long long)s->calls, (double)s->time_ns_total / 1e6,
			(double)s->time_ns_max_rank / 1e6, (double)s->time_ns_max / 1e3, s->cov,
			s->calls ? (double)s->bytes / (double)s->calls : 0.0);
	}
	if (n < rep->nsites)
		fprintf(f, "(%zu more call sites; --top 0 shows all)\n", rep->nsites - n);
	write_python_calls_text(f, rep, top);
	write_coverage_ranks_text(f, rep);
	write_coverage_sites_text(f, rep, top);
	write_culprits_text(f, rep);
	write_held_text(f, rep);
	return ferror(f) ? -EIO : 0;
}
