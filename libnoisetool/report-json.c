/* The report as JSON (noisetool/report.h; schema noisetool-report/1, doc/report-json.md): one
 * document, or one item of an array of several logs' reports. */
#include "nt-config.h"

#include <errno.h>
#include <stdlib.h>

#include <noisetool/report.h>

#include "json-write.h"
#include "report-merge.h"

/* "python_calls": the JSON of write_python_calls_text (all of them). */
static void write_python_calls_json(struct nt_json *j, const struct nt_report *rep)
{
	const struct nt_report_site **idx;
	size_t ng;
	struct nt_report_py_group *g;
	nt_json_array_begin(j, "python_calls");
	if (nt_report_python_groups(rep, &idx, &g, &ng) < 0)
		j->error = true; /* the document would lie by omission */
	for (size_t k = 0; k < ng; k++) {
		const struct nt_report_site *s = idx[g[k].first];
		const char *py_file = "";
		nt_log_python_site(s->module, NULL, NULL, &py_file);
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "python_call", s->python_call);
		nt_json_string(j, "location", s->location);
		nt_json_string(j, "file", py_file);
		nt_json_uint(j, "line", s->offset);
		nt_json_string(j, "caller", s->caller);
		nt_json_uint(j, "mpi_calls", g[k].calls);
		nt_json_uint(j, "time_ns_total", g[k].time_ns);
		nt_json_array_begin(j, "mpi_functions");
		for (size_t i = 0; i < g[k].n; i++) {
			const struct nt_report_site *m = idx[g[k].first + i];
			nt_json_object_begin(j, NULL);
			nt_json_string(j, "function", m->function);
			nt_json_uint(j, "calls", m->calls);
			nt_json_uint(j, "time_ns_total", m->time_ns_total);
			nt_json_object_end(j);
		}
		nt_json_array_end(j);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	free((void *)idx);
	free(g);
}

static void write_culprit_json(struct nt_json *j, const struct nt_culprit *c)
{
	nt_json_uint(j, "delay_ns", c->delay_ns);
	nt_json_uint(j, "instances", c->instances);
	nt_json_object_begin(j, "causes");
	for (int k = 0; k < NT_CAUSE_COUNT; k++)
		nt_json_uint(j, nt_cause_key((enum nt_cause)k), c->causes.ns[k]);
	nt_json_object_end(j);
}

/* The array key of n ranks' culprits c: rank, host, delay, instances, causes. */
static void write_rank_culprits_json(struct nt_json *j, const char *key, const struct nt_culprit *c,
				     size_t n)
{
	nt_json_array_begin(j, key);
	for (size_t i = 0; i < n; i++) {
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "rank", c[i].rank);
		nt_json_string(j, "host", c[i].host);
		write_culprit_json(j, &c[i]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
}

/* What else ran on a rank's CPUs (log version 7): the busiest other processes, each a rank of
 * the job where it is one. */
static void write_others_json(struct nt_json *j, const struct nt_log_rank *k,
			      const struct nt_report_cpus *c)
{
	static const char *const kinds[NT_LOG_TASK_KIND_COUNT] = { "process", "kernel thread",
								   "another user's" };
	nt_json_object_begin(j, "others");
	nt_json_uint(j, "from_ns", k->others_from_ns);
	if (k->others_run_delay_ns != NT_LOG_UNKNOWN)
		nt_json_uint(j, "run_delay_ns", k->others_run_delay_ns);
	nt_json_bool(j, "partial", k->others_flags & NT_LOG_OTHERS_PARTIAL);
	nt_json_uint(j, "run_ns", k->others_ns);
	nt_json_uint(j, "count", k->others_count);
	nt_json_array_begin(j, "tasks");
	for (uint32_t t = 0; t < k->nothers && t < NT_LOG_OTHERS_MAX; t++) {
		const struct nt_log_task *o = &k->others[t];
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "pid", o->pid);
		nt_json_string(j, "comm", o->comm);
		nt_json_string(j, "kind", kinds[o->kind < NT_LOG_TASK_KIND_COUNT ? o->kind : 0]);
		nt_json_uint(j, "run_ns", o->run_ns);
		nt_json_double(j, "share", k->others_ns ? (double)o->run_ns / (double)k->others_ns : 0);
		if (c && c->known && c->others_rank[t] >= 0)
			nt_json_int(j, "job_rank", c->others_rank[t]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_object_end(j);
}

/* The interrupt lines or softirq kinds counted on a rank's CPUs over the job (log version 7):
 * the count of all, and the ones with most counts; per second of its wall time. */
static void write_irqs_json(struct nt_json *j, const struct nt_log_rank *k, const char *key,
			    uint32_t kind)
{
	double s = (double)nt_report_others_span_ns(k) / 1e9;
	uint64_t all = kind == NT_LOG_IRQ_SOFTIRQ ? k->softirq_count : k->irq_count;
	nt_json_object_begin(j, key);
	nt_json_uint(j, "count", all);
	nt_json_double(j, "per_second", s > 0 ? (double)all / s : 0);
	nt_json_array_begin(j, "top");
	for (uint32_t i = 0; i < k->nirqs && i < NT_LOG_IRQS_MAX; i++) {
		const struct nt_log_irq *q = &k->irqs[i];
		if (q->kind != kind)
			continue;
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "name", q->name);
		nt_json_string(j, "desc", q->desc);
		nt_json_uint(j, "count", q->count);
		nt_json_double(j, "per_second", s > 0 ? (double)q->count / s : 0);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_object_end(j);
}

/* A rank's CPUs (log version 6): what it recorded, each time absent where it could not read
 * it; and with a parsed list, who shares them and the shares (absent where unknown); the other
 * tasks there (version 7). */
static void write_cpus_json(struct nt_json *j, const struct nt_log_rank *k,
			    const struct nt_report_cpus *c)
{
	nt_json_object_begin(j, "cpus");
	nt_json_string(j, "list", k->cpus ? k->cpus : "");
	const char *const keys[4] = { "cpu_ns", "run_delay_ns", "busy_ns", "steal_ns" };
	const uint64_t v[4] = { k->cpu_ns, k->run_delay_ns, k->cpus_busy_ns, k->cpus_steal_ns };
	for (int i = 0; i < 4 && k->cpus && *k->cpus; i++)
		if (v[i] != NT_LOG_UNKNOWN)
			nt_json_uint(j, keys[i], v[i]);
	if (c && c->known) {
		nt_json_uint(j, "count", c->ncpus);
		nt_json_uint(j, "ranks_within", c->crowd);
		nt_json_uint(j, "ranks_sharing", c->sharing);
		const char *const sk[5] = { "on_cpu_share", "waited_share", "job_share", "others_share",
					    "steal_share" };
		const double sv[5] = { c->on_cpu, c->waited, c->job_share, c->others_share,
				       c->steal_share };
		for (int i = 0; i < 5; i++)
			if (sv[i] >= 0)
				nt_json_double(j, sk[i], sv[i]);
	}
	if (k->pid)
		nt_json_uint(j, "pid", k->pid);
	if (k->others_flags & NT_LOG_OTHERS_KNOWN)
		write_others_json(j, k, c);
	else if (k->others_flags & NT_LOG_OTHERS_SKIPPED)
		nt_json_bool(j, "others_skipped", true); /* a short job: not read at its end */
	if (k->others_flags & NT_LOG_IRQS_KNOWN) {
		write_irqs_json(j, k, "interrupts", NT_LOG_IRQ_INTERRUPT);
		write_irqs_json(j, k, "softirqs", NT_LOG_IRQ_SOFTIRQ);
	}
	nt_json_object_end(j);
}

/* A rank's or the job's coverage (coverage.h) into j's current object. */
static void write_coverage_json(struct nt_json *j, const struct nt_coverage_part *c)
{
	nt_json_uint(j, "mpi_ns", c->mpi_ns);
	nt_json_uint(j, "collective_ns", c->coll_ns);
	nt_json_uint(j, "own_cost_ns", c->own_ns);
	nt_json_uint(j, "over_own_cost_ns", c->over_ns);
	nt_json_uint(j, "late_arrivals_ns", c->waited_ns);
	nt_json_uint(j, "held_inside_ns", c->held_ns);
	nt_json_uint(j, "with_cause_ns", c->cause_ns);
	nt_json_uint(j, "unexplained_ns", c->unexplained_ns);
	nt_json_uint(j, "not_measured_ns", c->no_data_ns);
	nt_json_uint(j, "not_accounted_ns", c->over_ns - c->waited_ns - c->held_ns);
}

/* The report's JSON object (doc/report-json.md) into j; with "log": log_path when it is set. */
static void write_json(struct nt_json *j, const struct nt_report *rep, const char *log_path)
{
	nt_json_object_begin(j, NULL);
	nt_json_string(j, "schema", "noisetool-report/1");
	if (log_path)
		nt_json_string(j, "log", log_path);
	nt_json_string(j, "version", NT_VERSION);
	nt_json_uint(j, "ranks", rep->nranks);
	nt_json_uint(j, "log_version", rep->log->version);
	nt_json_bool(j, "partial", rep->partial);
	nt_json_object_begin(j, "losses"); /* over all ranks */
	for (int k = 0; k < NT_LOSS_COUNT; k++)
		nt_json_uint(j, nt_loss_key((enum nt_loss)k), rep->losses[k]);
	nt_json_object_end(j);
	/* The ranks of a job read from its live files that had not finished MPI_Finalize, those
	 * of them that called MPI_Abort, those that left nothing, those whose process still
	 * ran, and those whose MPI_Finalize could not write the log (all empty for a log
	 * MPI_Finalize wrote). */
	const char *const lists[5] = { "unfinished_ranks", "aborted_ranks", "missing_ranks",
				       "running_ranks", "unwritten_ranks" };
	const uint32_t flags[5] = { NT_LOG_FLAG_UNFINISHED, NT_LOG_FLAG_ABORTED,
				    NT_LOG_FLAG_MISSING, NT_LOG_FLAG_RUNNING,
				    NT_LOG_FLAG_UNWRITTEN };
	for (int l = 0; l < 5; l++) {
		nt_json_array_begin(j, lists[l]);
		for (uint32_t r = 0; r < rep->log->nranks; r++)
			if (rep->log->ranks[r].flags & flags[l])
				nt_json_uint(j, NULL, rep->log->ranks[r].rank);
		nt_json_array_end(j);
	}
	nt_json_string(j, "level", nt_report_level_name(rep->level));
	nt_json_string(j, "wait_mode", nt_report_wait_name(rep->log->wait_mode));
	nt_json_uint(j, "poll_sample", rep->log->poll_sample);
	nt_json_uint(j, "crowded_ranks", rep->crowded_ranks);
	struct nt_report_job job;
	if (nt_report_job(rep->log, &job) != 0)
		j->error = true; /* the document would lie by omission */
	nt_json_object_begin(j, "job");
	nt_json_string(j, "command", job.command);
	nt_json_uint(j, "commands", job.commands);
	nt_json_string(j, "mpi", job.mpi_library);
	nt_json_string(j, "tool_version", job.tool_version);
	nt_json_uint(j, "created_unix_ns", rep->log->created_unix_ns);
	nt_json_uint(j, "hosts", job.hosts);
	nt_json_string(j, "user", job.user);
	nt_json_string(j, "batch_system", job.batch_system);
	nt_json_string(j, "batch_job", job.batch_job);
	nt_json_string(j, "batch_nodes", job.batch_nodes);
	nt_json_object_end(j);
	nt_json_array_begin(j, "rank_times");
	for (uint32_t r = 0; r < rep->nranks; r++) {
		const struct nt_log_rank *k = &rep->log->ranks[r];
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "rank", k->rank);
		nt_json_string(j, "host", k->host);
		nt_json_uint(j, "wall_ns", k->wall_ns);
		nt_json_uint(j, "mpi_ns", k->mpi_ns);
		nt_json_int(j, "drift_ppb", k->drift_ppb);
		nt_json_uint(j, "dropped_calls", k->dropped);
		nt_json_uint(j, "records", k->nrecords);
		nt_json_uint(j, "dropped_records", k->dropped_records);
		nt_json_uint(j, "untimed_instances", k->untimed_instances);
		nt_json_uint(j, "unregistered_persistent", k->unregistered_persistent);
		nt_json_uint(j, "unknown_comm_records", k->unknown_comm_records);
		nt_json_uint(j, "probe_reads", k->probe_reads);
		nt_json_uint(j, "probe_read_ns", k->probe_cost_ns);
		nt_json_double(j, "probe_pct", nt_report_probe_pct(k));
		if (rep->log->version >= 7)
			nt_json_uint(j, "scan_ns", k->scan_ns);
		nt_json_uint(j, "injected_ns", k->injected_ns);
		nt_json_uint(j, "injected_count", k->injected_count);
		write_cpus_json(j, k, rep->cpus ? &rep->cpus[r] : NULL);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	const struct nt_attrib *a = &rep->attrib;
	nt_json_object_begin(j, "clock_sync");
	nt_json_string(j, "method", "ping-pong over a binomial tree at MPI_Init and MPI_Finalize "
				     "(offset and drift)");
	nt_json_uint(j, "max_error_ns", a->clock_error_ns);
	if (a->clock_test_error_ns)
		nt_json_uint(j, "test_error_ns", a->clock_test_error_ns);
	nt_json_object_end(j);
	nt_json_object_begin(j, "attribution");
	nt_json_uint(j, "instances_joined", a->instances_joined);
	nt_json_uint(j, "instances_late", a->instances_late);
	nt_json_uint(j, "threshold_ns", a->threshold_ns);
	nt_json_uint(j, "total_delay_ns", a->total_delay_ns);
	nt_json_uint(j, "crosscheck_agree", a->crosscheck_agree);
	nt_json_uint(j, "instances_without_os_data", a->instances_no_window);
	nt_json_uint(j, "delay_without_os_data_ns", a->delay_no_window_ns);
	nt_json_uint(j, "instances_held", a->instances_held);
	nt_json_uint(j, "held_delay_ns", a->held_delay_ns);
	nt_json_object_end(j);
	write_rank_culprits_json(j, "held_culprits", a->held_ranks, a->nheld_ranks);
	nt_json_object_begin(j, "coverage");
	write_coverage_json(j, &rep->coverage.all);
	nt_json_array_begin(j, "ranks");
	for (size_t r = 0; r < rep->coverage.nranks; r++) {
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "rank", r);
		write_coverage_json(j, &rep->coverage.ranks[r]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_array_begin(j, "sites"); /* the collective sites, in the sites' order */
	for (size_t i = 0; rep->site_coverage && i < rep->nsites; i++) {
		if (!rep->site_coverage[i].coll_ns)
			continue;
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "function", rep->sites[i].function);
		nt_json_string(j, "location", rep->sites[i].location);
		write_coverage_json(j, &rep->site_coverage[i]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_object_end(j);
	write_rank_culprits_json(j, "culprits", a->ranks, a->nranks);
	nt_json_array_begin(j, "late_instances"); /* the 1000 latest */
	for (size_t i = 0; i < a->nlate && i < 1000; i++) {
		const struct nt_late *l = &a->late[i];
		const struct nt_report_site *s = nt_report_merged_site(rep, l->site);
		nt_json_object_begin(j, NULL);
		nt_json_uint(j, "comm_id", l->comm_id);
		nt_json_uint(j, "seq", l->seq);
		nt_json_uint(j, "time_ns", l->start_ns);
		nt_json_uint(j, "last_rank", l->rank);
		nt_json_uint(j, "members", l->members);
		nt_json_string(j, "function", l->site ? l->site->function : "");
		nt_json_string(j, "location", s ? s->location : "");
		nt_json_uint(j, "delay_ns", l->delay_ns);
		nt_json_object_begin(j, "causes");
		for (int k = 0; k < NT_CAUSE_COUNT; k++)
			nt_json_uint(j, nt_cause_key((enum nt_cause)k), l->causes.ns[k]);
		nt_json_object_end(j);
		nt_json_bool(j, "os_data", l->os_data);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_array_begin(j, "culprit_nodes");
	for (size_t i = 0; i < a->nnodes; i++) {
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "host", a->nodes[i].host);
		write_culprit_json(j, &a->nodes[i]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_array_begin(j, "culprit_sites");
	for (size_t i = 0; i < a->nsites; i++) {
		const struct nt_report_site *s = nt_report_merged_site(rep, a->sites[i].site);
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "function", a->sites[i].site->function);
		nt_json_string(j, "location", s ? s->location : "");
		write_culprit_json(j, &a->sites[i]);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	nt_json_array_begin(j, "sites");
	for (size_t i = 0; i < rep->nsites; i++) {
		const struct nt_report_site *s = &rep->sites[i];
		nt_json_object_begin(j, NULL);
		nt_json_string(j, "function", s->function);
		nt_json_string(j, "location", s->location);
		nt_json_string(j, "module", s->module);
		nt_json_uint(j, "offset", s->offset);
		const char *py_file;
		if (nt_log_python_site(s->module, NULL, NULL, &py_file)) {
			nt_json_string(j, "language", "python");
			nt_json_string(j, "file", py_file);
			nt_json_uint(j, "line", s->offset);
			nt_json_string(j, "caller", s->caller);
			nt_json_string(j, "python_call", s->python_call);
		}
		nt_json_uint(j, "calls", s->calls);
		nt_json_uint(j, "time_ns_total", s->time_ns_total);
		nt_json_uint(j, "time_ns_max", s->time_ns_max);
		nt_json_uint(j, "time_ns_max_rank", s->time_ns_max_rank);
		nt_json_uint(j, "bytes_total", s->bytes);
		nt_json_double(j, "bytes_per_call",
			       s->calls ? (double)s->bytes / (double)s->calls : 0.0);
		nt_json_uint(j, "max_rank", s->max_rank);
		nt_json_uint(j, "ranks_calling", s->ranks);
		nt_json_double(j, "cov", s->cov);
		nt_json_object_end(j);
	}
	nt_json_array_end(j);
	write_python_calls_json(j, rep);
	nt_report_causes_json(j);
	nt_json_object_end(j);
}

int nt_report_write_json(FILE *f, const struct nt_report *rep)
{
	if (!f || !rep)
		return -EINVAL;
	struct nt_json j;
	nt_json_init(&j, f);
	write_json(&j, rep, NULL);
	return nt_json_finish(&j);
}

int nt_report_write_json_item(FILE *f, const struct nt_report *rep, const char *log_path,
			      bool first)
{
	if (!f || !rep || !log_path)
		return -EINVAL;
	if (first)
		fputc('[', f);
	/* A writer one level down, inside the array the caller's '[' opened. */
	struct nt_json j;
	nt_json_init(&j, f);
	j.depth = 1;
	j.need_comma[1] = !first;
	write_json(&j, rep, log_path);
	return j.error || j.depth != 1 || ferror(f) ? -EIO : 0;
}

int nt_report_write_json_array_end(FILE *f)
{
	if (!f)
		return -EINVAL;
	fputs("\n]\n", f);
	return ferror(f) ? -EIO : 0;
}
