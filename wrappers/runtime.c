/* Life cycle of the wrapper library: MPI_Init / MPI_Init_thread start it, MPI_Finalize writes
 * the summary, MPI_Abort and MPI_Pcontrol steer it. On any internal failure it turns itself off
 * and passes every call through; it never changes results or return codes. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mpi.h>

#include <noisetool/clock.h>
#include <noisetool/inject.h>

#include "arena.h"
#include "binding.h"
#include "pysite.h"
#include "call.h"
#include "comms.h"
#include "records.h"
#include "env.h"
#include "jobinfo.h"
#include "live.h"
#include "logwrite.h"
#include "runtime.h"
#include "sites.h"
#include "stack.h"
#include "summary.h"
#include "mpiwait.h"
#include "recpolicy.h"
#include "toolwait.h"
#include "window.h"

/* Recording on or off (init, pause and resume, abort, finalize), and the gate with it. */
static void set_active(int on)
{
	__atomic_store_n(&nt_active_, on, __ATOMIC_RELAXED);
	nt_gate_update();
}

struct nt_runtime nt_rt;

static const char *env_get(const char *name)
{
	return getenv(name);
}

/* The global time base: this rank's offset to rank 0 now, rank 0's clock and its origin. */
static void clock_start(void)
{
	char err[256] = "";
	nt_clocksync_hook(nt_rt.rank, err, sizeof err);
	const char *hook = getenv("NOISETOOL_TEST_CLOCK");
	nt_rt.clock_hook = hook && *hook && !err[0]; /* a refused hook is no hook */
	if (err[0] && nt_rt.rank == 0)
		fprintf(stderr, "noisetool: %s; ignored\n", err);
	nt_clocksync_measure(nt_rt.comm, &nt_rt.sync_init);
	nt_rt.init_cyc = nt_clock_now_cyc();
	double origin = nt_clocksync_local_ns(nt_rt.init_cyc);
	nt_clocksync_params(&nt_rt.rank0);
	double p[5] = { origin, nt_rt.rank0.hz, nt_rt.rank0.offset_ns, nt_rt.rank0.rate,
			nt_rt.rank0.origin_ns };
	MPI_Request q;
	PMPI_Ibcast(p, 5, MPI_DOUBLE, 0, nt_rt.comm, &q);
	nt_toolwait(&q, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS);
	nt_rt.origin_ns = p[0];
	nt_rt.rank0 = (struct nt_clock_params){ p[1], p[2], p[3], p[4] };
}

/* NOISETOOL_INJECT on the ranks it names; the lowest rank that cannot start says why. */
static void inject_start(void)
{
	char why[512] = "";
	int failed = INT_MAX, first = INT_MAX;
	/* The injector's timer runs on CLOCK_MONOTONIC: rank 0's minus ours is the offset of the
	 * clocks we synchronized plus the two ranks' (monotonic - synchronized clock) gaps. */
	double gap = (double)nt_clock_monotonic_ns() - nt_clocksync_local_ns(nt_clock_now_cyc());
	double gap0 = gap;
	MPI_Request q;
	PMPI_Ibcast(&gap0, 1, MPI_DOUBLE, 0, nt_rt.comm, &q);
	nt_toolwait(&q, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS);
	int64_t global_minus_local = (int64_t)(nt_rt.sync_init.offset_ns + gap0 - gap);
	if (nt_inject_targets(&nt_rt.env.inject_spec, nt_rt.rank) &&
	    nt_inject_start(&nt_rt.env.inject_spec, nt_rt.rank, global_minus_local, why,
			    sizeof why) < 0)
		failed = nt_rt.rank;
	PMPI_Iallreduce(&failed, &first, 1, MPI_INT, MPI_MIN, nt_rt.comm, &q);
	nt_toolwait(&q, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS);
	if (first == nt_rt.rank)
		fprintf(stderr, "noisetool: NOISETOOL_INJECT on rank %d: %s; injection is off\n",
			nt_rt.rank, why);
}

/* At MPI_Finalize, after nt_inject_stop on every rank: the lowest rank whose injector's signal
 * got a handler of the application's says so (injection stopped there when it was seen, and
 * that handler stays). */
static void inject_report_displaced(int sig)
{
	int mine = nt_inject_displaced() ? nt_rt.rank : INT_MAX, first = INT_MAX;
	MPI_Request q;
	PMPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, nt_rt.comm, &q);
	nt_toolwait(&q, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS);
	if (first == nt_rt.rank)
		fprintf(stderr, "noisetool: NOISETOOL_INJECT on rank %d: the application installed "
			"its own handler on signal %d (SIGRTMIN+%d), the injector's; injection "
			"stopped there and the handler is left in place\n",
			nt_rt.rank, sig, sig - SIGRTMIN);
}

/* The settings that decide a rank's collective path at init and finalize, which every rank
 * must hold alike. */
enum { AGREE_ON, AGREE_LEVEL, AGREE_SUMMARY, AGREE_WAIT, AGREE_INJECT, AGREE_LOG, AGREE_N };

static const char *const agree_name[AGREE_N] = {
	"NOISETOOL_DISABLE", "NOISETOOL_LEVEL", "NOISETOOL_SUMMARY",
	"NOISETOOL_WAIT",    "NOISETOOL_INJECT", "NOISETOOL_LOG",
};

/* A setting's value as this rank holds it (after a bad value fell back to its default). */
static void agree_value(int what, int v, char *buf, size_t size)
{
	static const char *const levels[] = { "timing", "os", "full" };
	static const char *const waits[] = { "mpi", "busy", "adaptive", "sleep" };
	if (what == AGREE_ON)
		snprintf(buf, size, "%s", v ? "0" : "1");
	else if (what == AGREE_LEVEL)
		snprintf(buf, size, "%s", v >= 0 && v < 3 ? levels[v] : "?");
	else if (what == AGREE_WAIT)
		snprintf(buf, size, "%s", v >= 0 && v < 4 ? waits[v] : "?");
	else if (what == AGREE_INJECT && v)
		snprintf(buf, size, "a spec (hash %08x)", (unsigned)v);
	else if (what == AGREE_INJECT)
		snprintf(buf, size, "%s", "unset");
	else if (what == AGREE_LOG)
		snprintf(buf, size, "%s", v ? "per-rank" : "shared");
	else
		snprintf(buf, size, "%d", v);
}

/* FNV-1a of a string into a positive int (0 for none). */
static int string_code(const char *s)
{
	if (!s)
		return 0;
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (int)(h & 0x7fffffff) | 1;
}

/* This rank's fixed memory (NOISETOOL_MEM), split between its tables (arena.h), in its live
 * file (live.h) or, failing that, in memory (then no_live_why says why). */
static void *arena;
static size_t arena_bytes;
static bool live;
static char no_live_why[4096 + 320];

/* The sites' share of the arena for n sites: the table and the pool of Python names. */
static size_t site_share(size_t n)
{
	return nt_sites_table_bytes(n) + nt_pysite_pool_bytes(n);
}

/* What a new call site's return address lies in (sites.h): a Fortran binding, a Python
 * extension module, else the program. */
static unsigned site_caller(uintptr_t ret)
{
	return nt_binding_contains(ret)	  ? NT_SITE_CALLER_FORTRAN
	       : nt_pysite_is_python(ret) ? NT_SITE_CALLER_PYTHON
					  : NT_SITE_CALLER_C;
}

static int reserve_arena(void)
{
	struct nt_arena_units u = {
		.site = site_share(1) - site_share(0),
		.fixed_sites = site_share(0),
		.comm = nt_comms_bytes(1),
		.request = nt_requests_bytes(1) / 2,
		.record = sizeof(struct nt_record),
	};
	struct nt_arena_plan plan;
	struct nt_arena_layout at;
	if (nt_arena_plan(nt_rt.env.mem_bytes, &u, &plan) != 0)
		return -EINVAL;
	nt_arena_layout(&plan, &u, &at);
	/* In the rank's live file, so that the measurement survives however the job ends; else
	 * (the file cannot be made) in memory: then it is saved only by MPI_Finalize. */
	char file[4096 + 64];
	void *p = nt_rt.env.live ? nt_live_create(nt_rt.log_name, nt_rt.rank, nt_rt.size,
						  plan.bytes, file, sizeof file)
				 : NULL;
	live = p != NULL;
	if (!p) {
		snprintf(no_live_why, sizeof no_live_why, "%s: %s", file, strerror(errno));
		p = mmap(NULL, plan.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			 0);
		if (p == MAP_FAILED)
			return -errno;
	}
	arena = p;
	arena_bytes = plan.bytes;
	struct nt_live_field site_fields[NT_LSF_COUNT], record_fields[NT_LRF_COUNT];
	nt_sites_live_fields(site_fields);
	nt_records_live_fields(record_fields);
	struct nt_live_part sites = { at.sites, plan.sites + NT_FN_COUNT, sizeof(struct nt_site),
				      site_fields },
			    records = { at.records, plan.records, sizeof(struct nt_record),
					record_fields };
	nt_live_describe(&sites, &records, (unsigned)nt_rt.env.level, (unsigned)nt_rt.env.wait,
			 nt_rt.env.poll_sample);
	char *base = p;
	nt_sites_init(base + at.sites, plan.sites, nt_rt.threaded,
		      (uint64_t)nt_clock_ns_to_cyc(NT_REC_ABS_FLOOR_NS), site_caller);
	nt_pysite_pool_init(base + at.sites + nt_sites_table_bytes(plan.sites),
			    nt_pysite_pool_bytes(plan.sites));
	nt_comms_init(base + at.comms, plan.comms, nt_rt.rank, nt_rt.threaded);
	nt_requests_init(base + at.requests, plan.requests);
	nt_records_init(base + at.records, plan.records);
	return 0;
}

/* This rank's part of the tool: its memory, the wait loop. 0, or -errno with why. */
static int reserve(char *why, size_t size)
{
	int rc = reserve_arena();
	if (rc) {
		const char *mem = getenv("NOISETOOL_MEM");
		snprintf(why, size, "cannot reserve NOISETOOL_MEM=%s (%llu bytes): %s",
			 mem && *mem ? mem : "16M", (unsigned long long)nt_rt.env.mem_bytes,
			 strerror(-rc));
		return rc;
	}
	if (nt_rt.env.wait && (rc = nt_mpiwait_start((enum nt_wait_mode)nt_rt.env.wait)) != 0) {
		snprintf(why, size, "NOISETOOL_WAIT: cannot set up the wait loop: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

/* Let go of the tables, then of their memory (nothing may reach them once it is gone); the live
 * file is removed with remove_live, else kept for `noisetool report`. */
static void drop_arena(bool remove_live)
{
	nt_records_fini();
	nt_requests_init(NULL, 0);
	nt_comms_fini();
	nt_sites_fini();
	nt_pysite_pool_init(NULL, 0);
	if (live)
		nt_live_close(remove_live);
	else if (arena)
		munmap(arena, arena_bytes);
	arena = NULL;
	live = false;
}

static void release(void)
{
	nt_mpiwait_stop();
	drop_arena(true);
}

/* The ranks agree, on the tool's own communicator, before any of them acts: every rank must want
 * the tool with the same path-deciding settings, and have reserved its part, and rank 0 must
 * have reserved the job's name in NOISETOOL_OUT (out_rc, which every rank learns with the
 * name). Otherwise the whole job passes through, and the lowest rank that differs from rank 0
 * (or, failing that, rank 0 for NOISETOOL_OUT, or the lowest that could not reserve) says why
 * in one line. Bad values are reported by the lowest rank that has any. Returns whether the
 * tool runs. */
static bool agree(int bad, const char *errors, int out_rc)
{
	int mine[AGREE_N] = {
		[AGREE_ON] = !nt_rt.env.disable,
		[AGREE_LEVEL] = (int)nt_rt.env.level,
		[AGREE_SUMMARY] = nt_rt.env.summary,
		[AGREE_WAIT] = nt_rt.env.wait,
		[AGREE_INJECT] = nt_rt.env.inject ? string_code(getenv("NOISETOOL_INJECT")) : 0,
		[AGREE_LOG] = nt_rt.env.log_per_rank,
	};
	int zero[AGREE_N + 1];
	memcpy(zero, mine, sizeof mine);
	zero[AGREE_N] = out_rc;
	MPI_Request q, qs[2];
	PMPI_Ibcast(zero, AGREE_N + 1, MPI_INT, 0, nt_rt.comm, &qs[0]);
	PMPI_Ibcast(nt_rt.log_name, sizeof nt_rt.log_name, MPI_CHAR, 0, nt_rt.comm, &qs[1]);
	nt_toolwait_all(2, qs, MPI_STATUSES_IGNORE, NT_TOOLWAIT_SPIN_NS);
	bool out_ok = zero[AGREE_N] == 0;
	int differs = -1;
	for (int i = 0; i < AGREE_N && differs < 0; i++)
		if (mine[i] != zero[i] && (i == AGREE_ON || (mine[AGREE_ON] && zero[AGREE_ON])))
			differs = i;
	/* This rank's part, in its live file under the name rank 0 reserved: only when the tool
	 * may run here. */
	char why[256] = "";
	bool reserved = false;
	if (!nt_rt.env.disable && differs < 0 && out_ok && zero[AGREE_ON])
		reserved = reserve(why, sizeof why) == 0;
	bool failed = !nt_rt.env.disable && differs < 0 && out_ok && zero[AGREE_ON] && !reserved;
	int me[4] = { differs >= 0 ? nt_rt.rank : INT_MAX, failed ? nt_rt.rank : INT_MAX,
		      bad ? nt_rt.rank : INT_MAX,
		      reserved && !live && nt_rt.env.live ? nt_rt.rank : INT_MAX };
	int lowest[4];
	PMPI_Iallreduce(me, lowest, 4, MPI_INT, MPI_MIN, nt_rt.comm, &q);
	nt_toolwait(&q, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS);
	if (lowest[2] == nt_rt.rank) {
		/* errors: one line per bad value, each already naming the variable */
		for (const char *l = errors; *l;) {
			const char *e = strchr(l, '\n');
			int n = e ? (int)(e - l) : (int)strlen(l);
			if (nt_rt.rank)
				fprintf(stderr, "noisetool: rank %d: %.*s\n", nt_rt.rank, n, l);
			else
				fprintf(stderr, "noisetool: %.*s\n", n, l);
			l += n + (e != NULL);
		}
	}
	if (lowest[0] == nt_rt.rank) {
		char a[64], b[64];
		agree_value(differs, mine[differs], a, sizeof a);
		agree_value(differs, zero[differs], b, sizeof b);
		fprintf(stderr,
			"noisetool: rank %d has %s=%s where rank 0 has %s; the ranks must agree, so "
			"the tool is off on every rank (calls pass through)\n",
			nt_rt.rank, agree_name[differs], a, b);
	} else if (lowest[0] == INT_MAX && !out_ok && nt_rt.rank == 0 && zero[AGREE_ON]) {
		fprintf(stderr,
			"noisetool: NOISETOOL_OUT='%s': %s; no log could be written, so the tool is "
			"off on every rank (calls pass through)\n",
			nt_rt.env.out_dir, strerror(-out_rc));
	} else if (lowest[0] == INT_MAX && out_ok && lowest[1] == nt_rt.rank) {
		fprintf(stderr, "noisetool: rank %d %s; the tool is off on every rank (calls pass "
				"through)\n",
			nt_rt.rank, why);
	}
	bool on = lowest[0] == INT_MAX && lowest[1] == INT_MAX && zero[AGREE_ON] && out_ok;
	if (on && lowest[3] == nt_rt.rank)
		fprintf(stderr,
			"noisetool: rank %d cannot keep its measurement in a live file (%s): it is "
			"saved only if the rank reaches MPI_Finalize\n",
			nt_rt.rank, no_live_why);
	if (!on && reserved)
		release();
	return on;
}

/* NOISETOOL_INJECT naming ranks this job does not have: rank 0 says which; with none left, no
 * injection (the same answer on every rank: the check is pure). */
static void inject_check_ranks(void)
{
	char why[512];
	bool any = nt_inject_any_target(&nt_rt.env.inject_spec, nt_rt.size);
	if (nt_inject_check_ranks(&nt_rt.env.inject_spec, nt_rt.size, why, sizeof why) > 0 &&
	    nt_rt.rank == 0)
		fprintf(stderr, "noisetool: NOISETOOL_INJECT: %s; %s\n", why,
			any ? "injecting into the others" : "no rank to inject into, injection is off");
	if (!any)
		nt_rt.env.inject = false;
}

/* A copy of parent for the tool (with the same ranks), in *comm: 0, else -1.
 * MPICH: a dup started nonblocking and waited for giving the CPU away: with more ranks than
 * CPUs, MPICH's blocking dup spun for 30 ms at 4 ranks on 2 CPUs (13 ms this way).
 * Open MPI 4.1: a group's communicator. Its dup and idup allocate the new context id with a
 * nonblocking allreduce on the parent, and from a communicator's first nonblocking collective
 * until it is freed, the progress function of nonblocking collectives (libnbc) runs in every
 * MPI call that progresses: MPI_COMM_WORLD's is never freed. MPI_Comm_create_group allocates
 * the id point to point, but blocks: its waits yield the CPU meanwhile (Open MPI's own setting
 * for oversubscribed nodes, opal_progress_set_yield_when_idle, set back after it; without it 4
 * ranks on 2 CPUs spun ~25 ms in each). See doc/overhead.md, "A private communicator".
 * Its messages go point to point on the parent with the tag given (Open MPI 4.1's
 * comm_cid.c): on MPI_COMM_WORLD all of them are received before any rank can leave MPI_Init
 * (each rank's own completes before the tool's first collective on the new communicator, which
 * every rank must enter), so no receive of the application's can meet them. */
static int tool_comm(MPI_Comm parent, MPI_Comm *comm)
{
#ifdef OPEN_MPI
	MPI_Group group;
	if (PMPI_Comm_group(parent, &group) != MPI_SUCCESS)
		return -1;
	void (*set_yield)(bool) =
		(void (*)(bool))dlsym(RTLD_DEFAULT, "opal_progress_set_yield_when_idle");
	const bool *yields = dlsym(RTLD_DEFAULT, "opal_progress_yield_when_idle");
	bool was = yields ? *yields : false;
	if (set_yield && yields)
		set_yield(true);
	int rc = PMPI_Comm_create_group(parent, group, 32767 /* the least MPI_TAG_UB */, comm);
	if (set_yield && yields)
		set_yield(was);
	PMPI_Group_free(&group);
	if (rc != MPI_SUCCESS)
		return -1;
#else
	MPI_Request dup;
	if (PMPI_Comm_idup(parent, comm, &dup) != MPI_SUCCESS ||
	    nt_toolwait(&dup, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS) != MPI_SUCCESS)
		return -1;
#endif
	/* A failure inside the tool's own calls returns, never aborts the job. */
	PMPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
	return 0;
}

/* Open MPI: after the tool's nonblocking collectives at MPI_Init (the settings agreed, the
 * clock's origin, the injector's start), its communicator is replaced by a fresh copy, on which
 * none ran, and freed: the progress function they registered goes with it (tool_comm), and
 * MPI calls that progress cost what they cost without the tool until the application starts a
 * nonblocking collective (or creates a communicator) itself -- with HPCC's MPI RandomAccess, a
 * loop of MPI_Testany, ~20 % of its time (doc/overhead.md). From there to MPI_Finalize the tool
 * sends only point to point on it (clock sync, adaptive waits' votes: votes.h). */
static void tool_comm_renew(void)
{
#ifdef OPEN_MPI
	MPI_Comm fresh;
	if (!nt_rt.has_comm || tool_comm(nt_rt.comm, &fresh) != 0)
		return;
	PMPI_Comm_free(&nt_rt.comm);
	nt_rt.comm = fresh;
#endif
}

/* After PMPI_Init*: read the settings, take the tool's own communicator (on every rank, whatever
 * its settings), reserve this rank's part, and agree with the other ranks before acting. */
static void runtime_begin(int provided)
{
	char errors[1024];
	int bad = nt_env_parse(&nt_rt.env, env_get, errors, sizeof errors);
	PMPI_Comm_rank(MPI_COMM_WORLD, &nt_rt.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &nt_rt.size);
	if (tool_comm(MPI_COMM_WORLD, &nt_rt.comm) != 0)
		return;
	nt_rt.has_comm = 1;
	nt_rt.threaded = provided == MPI_THREAD_MULTIPLE;
	int out_rc = 0;
	if (!nt_rt.env.disable) {
		nt_clock_init();
		nt_binding_init();
		nt_pysite_init(nt_rt.rank);
		if (nt_rt.rank == 0)
			out_rc = nt_logwrite_reserve(nt_rt.env.out_dir, nt_rt.env.job, nt_rt.log_name,
						     sizeof nt_rt.log_name);
	}
	if (!agree(bad, errors, out_rc)) {
		if (nt_rt.rank == 0 && out_rc == 0 && !nt_rt.env.disable)
			nt_logwrite_unreserve(nt_rt.log_name);
		return;
	}
	nt_slow_extras_ = nt_rt.env.callsite_every_call ? NT_EXTRA_WALK : 0;
	/* every test call timed once the program gave MPI a callback (call.h) */
	nt_poll_span_ = __atomic_load_n(&nt_callbacks_, __ATOMIC_RELAXED)
				? 1
				: 2 * nt_rt.env.poll_sample - 1;
	nt_job_collect(&nt_rt.job);
	nt_cpushare_begin(&nt_rt.cpus, nt_rt.env.level >= NT_PROBE_OS);
	nt_records_first_reading(&nt_rt.cpus);
	if (nt_rt.env.wait == NT_WAIT_ADAPTIVE)
		nt_mpiwait_crowded(nt_mpiwait_cpus_crowded(nt_rt.cpus.cpus, nt_rt.cpus.ncpus));
	nt_live_job(nt_rt.job.command, nt_rt.job.mpi_library, nt_rt.job.tool_version,
		    &nt_rt.job.batch);
	clock_start();
	nt_cpushare_synced(&nt_rt.cpus);
	double local_init = nt_clocksync_local_ns(nt_rt.init_cyc);
	nt_live_clock(nt_rt.init_cyc,
		      llround(nt_clocksync_global_ns(&nt_rt.sync_init, &nt_rt.sync_init, local_init) -
			      nt_rt.origin_ns),
		      (uint64_t)nt_rt.sync_init.error_ns);
	nt_rt.started = 1;
	nt_thread_.last_exit_cyc = nt_rt.init_cyc;
	nt_records_windows_open(nt_rt.env.level, nt_rt.init_cyc);
	nt_slow_extras_ = (nt_rt.env.callsite_every_call ? NT_EXTRA_WALK : 0) |
			  (nt_wait_mode_ ? NT_EXTRA_WAIT : 0);
	set_active(1);
	if (nt_rt.env.inject)
		inject_check_ranks();
	if (nt_rt.env.inject)
		inject_start();
}

static void runtime_start(int provided)
{
	runtime_begin(provided);
	tool_comm_renew();
	if (nt_rt.started && nt_rt.env.wait) /* on the communicator they will use */
		nt_comms_enable_votes(nt_rt.comm);
}

/* The losses a job's stderr has always named (collective over the tool's communicator):
 * instances not timed and persistent collectives not registered because a request table was
 * full, records of instances on communicators without an id. Rank 0 says how many over all
 * ranks, in the report's words (the log counts them too, and is marked partial). */
static void report_losses(void)
{
	uint64_t lost[NT_LOSS_COUNT];
	nt_logwrite_losses(lost);
	const enum nt_loss kinds[] = { NT_LOSS_UNTIMED, NT_LOSS_UNREGISTERED, NT_LOSS_UNKNOWN_COMM };
	enum { N = sizeof kinds / sizeof *kinds };
	unsigned long long mine[N], all[N];
	for (int k = 0; k < N; k++)
		mine[k] = lost[kinds[k]];
	MPI_Request q;
	PMPI_Iallreduce(mine, all, N, MPI_UNSIGNED_LONG_LONG, MPI_SUM, nt_rt.comm, &q);
	nt_toolwait(&q, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS);
	if (nt_rt.rank != 0)
		return;
	for (int k = 0; k < N; k++) {
		if (!all[k])
			continue;
		char what[256];
		nt_loss_describe(kinds[k], all[k], what, sizeof what);
		fprintf(stderr, "noisetool: PARTIAL: %s\n", what);
	}
}

void nt_init_begin(void)
{
	nt_clock_calibration_start(); /* the calibration's 10 ms pass during PMPI_Init */
}

void nt_init_end(int rc, int provided)
{
	if (rc == MPI_SUCCESS)
		runtime_start(provided);
}

NT_MPI_API int MPI_Init(int *argc, char ***argv)
{
	nt_init_begin();
	int rc = PMPI_Init(argc, argv);
	int provided = MPI_THREAD_SINGLE;
	if (rc == MPI_SUCCESS)
		PMPI_Query_thread(&provided);
	nt_init_end(rc, provided);
	return rc;
}

NT_MPI_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	nt_init_begin();
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	nt_init_end(rc, rc == MPI_SUCCESS ? *provided : MPI_THREAD_SINGLE);
	return rc;
}

/* After the log: the live files go when the log holds everything, on the disk (each rank its
 * own, then rank 0 the directory), and stay whole when it could not be written (a disk full,
 * a file size limit): nothing was changed in them, so `noisetool report NAME.live` reads every
 * call and record. */
static void finish_live(bool written)
{
	drop_arena(written);
	if (!written)
		return;
	MPI_Request q;
	PMPI_Ibarrier(nt_rt.comm, &q);
	nt_toolwait(&q, MPI_STATUS_IGNORE, NT_TOOLWAIT_SPIN_NS);
	if (nt_rt.rank == 0)
		nt_logwrite_unreserve(nt_rt.log_name);
}

void nt_finalize_begin(void)
{
	set_active(0);
	int inject_sig = nt_inject_signal();
	nt_inject_stop();
	if (nt_rt.started) {
		nt_rt.started = 0;
		nt_sites_settle_all_polls(); /* the untimed test calls not counted yet (sites.h) */
		if (nt_rt.env.inject)
			inject_report_displaced(inject_sig);
		nt_cpushare_end(&nt_rt.cpus); /* its span within the wall time: before its end */
		nt_rt.finalize_cyc = nt_clock_now_cyc();
		uint64_t reads;
		double read_ns;
		nt_window_stats(&reads, &read_ns);
		nt_cpushare_others(&nt_rt.cpus, (uint64_t)((double)reads * read_ns));
		nt_comms_votes_finish();
		nt_clocksync_measure(nt_rt.comm, &nt_rt.sync_fin);
		if (nt_rt.env.summary && nt_rt.env.wait) {
			char line[384];
			nt_mpiwait_describe(line, sizeof line);
			fprintf(stderr, "noisetool: rank %d %s\n", nt_rt.rank, line);
		}
		if (nt_rt.env.summary)
			nt_summary_write(&nt_rt);
		report_losses();
		if (nt_pysite_unnamed())
			fprintf(stderr,
				"noisetool: rank %d: %llu calls from Python are counted at the Python "
				"extension's C call sites: no room for more Python names (raise "
				"NOISETOOL_MEM)\n",
				nt_rt.rank, (unsigned long long)nt_pysite_unnamed());
		char path[4096 + 16];
		nt_live_finalizing();
		int rc = nt_logwrite(&nt_rt, path, sizeof path);
		if (rc != 0)
			nt_live_log_failed(-rc);
		finish_live(rc == 0);
		if (nt_rt.rank == 0) {
			if (rc == 0) {
				if (nt_rt.env.summary)
					fprintf(stderr, "noisetool: log written to %s\n", path);
			} else if (nt_rt.env.live) {
				fprintf(stderr,
					"noisetool: no log written in '%s': %s; what the ranks' live "
					"files hold is in %s.live (noisetool report %s.live)\n",
					nt_rt.env.out_dir, strerror(-rc), nt_rt.log_name,
					nt_rt.log_name);
			} else {
				/* No live files to point at: the name's empty directory goes (it
				 * stays if another rank, set otherwise, left its file there). */
				nt_logwrite_unreserve(nt_rt.log_name);
				fprintf(stderr,
					"noisetool: no log written in '%s': %s; the measurement is lost "
					"(NOISETOOL_LIVE=0 kept it in memory only)\n",
					nt_rt.env.out_dir, strerror(-rc));
			}
		}
		nt_window_shutdown();
		nt_mpiwait_stop();
	}
	if (nt_rt.has_comm) {
		nt_rt.has_comm = 0;
		PMPI_Comm_free(&nt_rt.comm);
	}
}

NT_MPI_API int MPI_Finalize(void)
{
	nt_finalize_begin();
	return PMPI_Finalize();
}

void nt_abort_begin(int code)
{
	set_active(0);
	nt_live_abort(code); /* the report says which rank aborted the job */
}

NT_MPI_API int MPI_Abort(MPI_Comm comm, int errorcode)
{
	nt_abort_begin(errorcode);
	return PMPI_Abort(comm, errorcode);
}

/* mpiP's levels: 0 pauses recording, 1 resumes it, 2 resets the aggregates and forgets the
 * records (doc/environment.md). MPI_Pcontrol is local: some ranks may pause while others do
 * not, so a pause keeps the collective path -- instance numbers, wait votes and their slots -- as it
 * was, and only this rank's books stop (nt_paused_). */
void nt_pcontrol(int level)
{
	if (!nt_rt.started)
		return;
	if (level == 0 || level == 1) {
		__atomic_store_n(&nt_paused_, level == 0, __ATOMIC_RELAXED);
		nt_gate_update();
	} else if (level == 2) {
		nt_sites_reset();
		nt_records_reset(nt_sites_threaded_);
	}
}

NT_MPI_API int MPI_Pcontrol(const int level, ...)
{
	nt_pcontrol(level);
	return PMPI_Pcontrol(level);
}

/* The frees of handles act on what MPI did: the tool forgets a handle only after the real call
 * freed it (a refused free -- MPI_COMM_WORLD, a predefined datatype, an attribute's delete
 * callback that fails -- leaves it alive and known), and only the entry it knew before the
 * call (another thread may reuse the handle in between). */

/* A freed datatype's handle may come back as another type: the sites' size caches forget it. */
void nt_type_freed(MPI_Datatype type, int rc)
{
	if (nt_rt.started && rc == MPI_SUCCESS)
		nt_sites_forget_type(type);
}

NT_MPI_API int MPI_Type_free(MPI_Datatype *datatype)
{
	MPI_Datatype type = datatype ? *datatype : MPI_DATATYPE_NULL;
	int rc = PMPI_Type_free(datatype);
	nt_type_freed(type, rc);
	return rc;
}

/* A freed request's handle may come back as another request. */
struct nt_request_ref nt_request_freeing(MPI_Request request)
{
	if (nt_rt.started && nt_requests_tracked() > 0)
		return nt_requests_ref(request);
	return (struct nt_request_ref){ 0, 0 };
}

void nt_request_freed(MPI_Request request, struct nt_request_ref ref, int rc)
{
	if (rc == MPI_SUCCESS && (ref.outstanding || ref.persistent))
		nt_requests_forget(request, ref);
}

NT_MPI_API int MPI_Request_free(MPI_Request *request)
{
	MPI_Request r = request ? *request : MPI_REQUEST_NULL;
	struct nt_request_ref ref = nt_request_freeing(r);
	int rc = PMPI_Request_free(request);
	nt_request_freed(r, ref, rc);
	return rc;
}

/* A freed or disconnected communicator's handle may come back as another communicator. */
struct nt_comm_ref nt_comm_freeing(MPI_Comm comm)
{
	if (nt_rt.started)
		return nt_comms_ref(comm);
	return (struct nt_comm_ref){ 0, -1 };
}

void nt_comm_freed(MPI_Comm comm, struct nt_comm_ref ref, int rc)
{
	if (rc == MPI_SUCCESS && ref.token) {
		nt_comms_forget(comm, ref);
		__atomic_fetch_add(&nt_comm_gen_, 1, __ATOMIC_RELEASE);
	}
}

/* MPI_Comm_free or MPI_Comm_disconnect (real) of *comm. */
static int free_comm(MPI_Comm *comm, int (*real)(MPI_Comm *))
{
	MPI_Comm c = comm ? *comm : MPI_COMM_NULL;
	struct nt_comm_ref ref = nt_comm_freeing(c);
	int rc = real(comm);
	nt_comm_freed(c, ref, rc);
	return rc;
}

NT_MPI_API int MPI_Comm_free(MPI_Comm *comm)
{
	return free_comm(comm, PMPI_Comm_free);
}

NT_MPI_API int MPI_Comm_disconnect(MPI_Comm *comm)
{
	return free_comm(comm, PMPI_Comm_disconnect);
}
