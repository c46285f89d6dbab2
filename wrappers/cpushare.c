/* The rank's CPUs over the job (cpushare.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <noisetool/clock.h>
#include <noisetool/sysinfo.h>
#include <noisetool-private/cpus.h>
#include <noisetool-private/schedstat.h>
#include <noisetool-private/topn.h>

#include "cpushare.h"

static uint64_t process_cpu_ns(void)
{
	struct rusage u;
	if (getrusage(RUSAGE_SELF, &u) != 0)
		return NT_CPUSHARE_UNKNOWN;
	return ((uint64_t)u.ru_utime.tv_sec + (uint64_t)u.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)u.ru_utime.tv_usec + (uint64_t)u.ru_stime.tv_usec) * 1000u;
}

/* The start of a small file of /proc into buf, NUL-ended; false when it cannot be read. */
static bool read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

static uint64_t thread_run_delay_ns(void)
{
	char buf[128];
	uint64_t run, delay, count;
	return read_small("/proc/thread-self/schedstat", buf, sizeof buf) &&
			       nt_parse_schedstat(buf, &run, &delay, &count) == 0
		       ? delay
		       : NT_CPUSHARE_UNKNOWN;
}

/* The thread's CPU time: what the readings of /proc cost the rank (as a probe read's cost, it
 * leaves out the time another task had the CPU meanwhile). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The readings now: CPU time, run delay, and the CPUs' busy and steal time. */
static void read_all(const struct nt_cpushare *c, uint64_t v[4])
{
	v[0] = process_cpu_ns();
	v[1] = thread_run_delay_ns();
	v[2] = v[3] = NT_CPUSHARE_UNKNOWN;
	if (c->ncpus > 0 && nt_cpus_stat(c->cpus, (size_t)c->ncpus, &v[2], &v[3]) != 0)
		v[2] = v[3] = NT_CPUSHARE_UNKNOWN;
}

/* The rank's CPUs as a set indexed by CPU. */
static void cpu_set_of(const struct nt_cpushare *c, bool in_set[CPU_SETSIZE])
{
	memset(in_set, 0, CPU_SETSIZE * sizeof *in_set);
	for (int k = 0; k < c->ncpus; k++)
		if (c->cpus[k] >= 0 && c->cpus[k] < CPU_SETSIZE)
			in_set[c->cpus[k]] = true;
}

/* The interrupts and softirqs counted on the rank's CPUs now. */
static void irqs_read(const struct nt_cpushare *c, struct nt_irq_count *irq, size_t *nirq,
		      struct nt_irq_count *soft, size_t *nsoft, bool *ok)
{
	bool in_set[CPU_SETSIZE];
	cpu_set_of(c, in_set);
	*ok = c->ncpus > 0 &&
	      nt_irq_read_set("/proc/interrupts", in_set, CPU_SETSIZE, irq, NT_CPUSHARE_IRQ_LINES,
			      nirq) == 0 &&
	      nt_irq_read_set("/proc/softirqs", in_set, CPU_SETSIZE, soft, NT_CPUSHARE_SOFTIRQS,
			      nsoft) == 0;
}

/* The first reading's estimated cost: a thread (/proc/loadavg counts the node's) and the
 * rest (the directory of /proc, the interrupts and softirqs), rounded up to a power of two
 * microseconds, so that the ranks of a node, whose counts differ by a thread or two, make the
 * same estimate. Inside a job here 111 threads took 1.8-2.2 ms of CPU time with the rest:
 * 1.53 ms, 2.048 rounded. */
#define THREAD_READ_NS 12000
#define FIRST_READING_REST_NS 200000

/* The node's threads as /proc/loadavg counts them (its fourth field: running/total); 0 when
 * it cannot be read. */
static unsigned long node_threads(void)
{
	char buf[128];
	const char *slash = read_small("/proc/loadavg", buf, sizeof buf) ? strchr(buf, '/') : NULL;
	return slash ? strtoul(slash + 1, NULL, 10) : 0;
}

void nt_cpushare_begin(struct nt_cpushare *c, bool walk_tasks)
{
	c->list[0] = '\0';
	int n = nt_allowed_cpus(c->cpus, CPU_SETSIZE);
	c->ncpus = n > 0 && nt_cpulist_format(c->cpus, (size_t)n, c->list, sizeof c->list) >= 0
			   ? n
			   : 0;
	if (c->ncpus == 0)
		c->list[0] = '\0';
	c->threads = NULL; /* mapped when the first reading is made (threads_table) */
	c->reading = walk_tasks ? NT_CPUSHARE_PENDING : NT_CPUSHARE_NOT_READ;
	if (walk_tasks) {
		unsigned long threads = node_threads();
		uint64_t est_us = ((uint64_t)(threads ? threads : 200) * THREAD_READ_NS +
				   FIRST_READING_REST_NS) / 1000;
		uint64_t us = 1;
		while (us < est_us)
			us *= 2;
		c->first_reading_est_ns = us * 1000;
	}
}

/* The table of the node's threads, mapped for the first reading and unmapped after the second
 * (threads_free), not taken from malloc: the application's heap is not the tool's to change,
 * and free() of a 64 KiB block consolidates its small free blocks (glibc's
 * FASTBIN_CONSOLIDATION_THRESHOLD), which cost a job that never read 20-67 us of CPU time at
 * MPI_Finalize: a third of the read budget of a 10 ms job. */
static struct nt_task_time *threads_table(void)
{
	void *p = mmap(NULL, NT_CPUSHARE_THREADS * sizeof(struct nt_task_time),
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void threads_free(struct nt_cpushare *c)
{
	if (c->threads)
		munmap(c->threads, NT_CPUSHARE_THREADS * sizeof *c->threads);
	c->threads = NULL;
}

void nt_cpushare_synced(struct nt_cpushare *c)
{
	c->synced_ns = nt_clock_monotonic_ns();
	uint64_t v[4];
	read_all(c, v);
	c->cpu_ns = v[0];
	c->run_delay_ns = v[1];
	c->busy_ns = v[2];
	c->steal_ns = v[3];
}

uint64_t nt_cpushare_step(struct nt_cpushare *c, uint64_t seq)
{
	if (c->reading != NT_CPUSHARE_PENDING)
		return 0;
	/* Both readings, at their estimated costs, within half the budget of twice the time so
	 * far (the first then costs at most 0.4 % of it). Only what every rank of the node sees
	 * alike decides, so that they make it at the same instance: a rank that also asked its
	 * probe reads so far to leave room for it made its reading later than its partner, which
	 * waited 1.6 ms for it. */
	if (!nt_cpushare_due((double)(nt_clock_monotonic_ns() - c->synced_ns), seq,
			     c->first_reading_est_ns))
		return 0;
	uint64_t cyc0 = nt_clock_now_cyc(), t0 = thread_cpu_ns();
	c->first_reading_ns = nt_clock_monotonic_ns() - c->synced_ns;
	c->first_run_delay_ns = thread_run_delay_ns();
	irqs_read(c, c->irq0, &c->nirq0, c->soft0, &c->nsoft0, &c->irqs_known);
	uint64_t t1 = thread_cpu_ns();
	c->threads = threads_table();
	c->reading = c->threads && nt_tasks_times(NULL, c->threads, NT_CPUSHARE_THREADS,
						  &c->nthreads, &c->threads_left_out) == 0
			     ? NT_CPUSHARE_READ
			     : NT_CPUSHARE_NOT_READ;
	uint64_t t2 = thread_cpu_ns();
	c->irqs_scan_ns = t1 - t0;
	c->threads_scan_ns = t2 - t1;
	c->scan_ns[0] = t2 - t0;
	return nt_clock_now_cyc() - cyc0;
}

/* Whether a second reading costing more_ns keeps the rank's reads (probe_ns so far, the first
 * reading, *spent_ns of the second so far) within the budget; if so, it is counted. */
static bool affordable(const struct nt_cpushare *c, uint64_t probe_ns, double *spent_ns,
		       double more_ns)
{
	double wall_ns = (double)(nt_clock_monotonic_ns() - c->synced_ns);
	if ((double)probe_ns + (double)c->scan_ns[0] + *spent_ns + more_ns >
	    NT_CPUSHARE_BUDGET * wall_ns)
		return false;
	*spent_ns += more_ns;
	return true;
}

/* later - earlier, unknown when either is (or when the counter went back). */
static uint64_t since(uint64_t earlier, uint64_t later)
{
	if (earlier == NT_CPUSHARE_UNKNOWN || later == NT_CPUSHARE_UNKNOWN || later < earlier)
		return NT_CPUSHARE_UNKNOWN;
	return later - earlier;
}

/* More counts first. */
static int more_counts(const void *x, const void *y)
{
	const struct nt_cpushare_irq *a = x, *b = y;
	return (a->c.count < b->c.count) - (a->c.count > b->c.count);
}

/* What each line counted since MPI_Init, summed and ranked. */
static void irqs_end(struct nt_cpushare *c)
{
	if (!c->irqs_known)
		return;
	struct nt_irq_count *now = malloc((NT_CPUSHARE_IRQ_LINES + NT_CPUSHARE_SOFTIRQS) *
					  sizeof *now);
	size_t nirq = 0, nsoft = 0;
	bool ok = false;
	if (now)
		irqs_read(c, now, &nirq, now + NT_CPUSHARE_IRQ_LINES, &nsoft, &ok);
	c->irqs_known = ok;
	for (int pass = 0; ok && pass < 2; pass++) {
		const struct nt_irq_count *before = pass ? c->soft0 : c->irq0;
		const struct nt_irq_count *after = pass ? now + NT_CPUSHARE_IRQ_LINES : now;
		size_t nb = pass ? c->nsoft0 : c->nirq0, na = pass ? nsoft : nirq;
		for (size_t i = 0; i < na; i++) {
			uint64_t was = 0; /* a line that came since counts from 0 */
			for (size_t k = 0; k < nb; k++) {
				size_t j = (i + k) % nb; /* the same place first */
				if (strcmp(before[j].name, after[i].name) == 0) {
					was = before[j].count;
					break;
				}
			}
			if (after[i].count <= was)
				continue;
			struct nt_cpushare_irq q = { after[i], pass == 1 };
			q.c.count -= was;
			*(pass ? &c->softirq_count : &c->irq_count) += q.c.count;
			nt_top_insert(c->irq_top, &c->nirq_top, NT_CPUSHARE_IRQ_TOP, sizeof q, &q,
				      more_counts);
		}
	}
	free(now);
}

/* The second reading of the threads costs more than the first (it reads the stat of each
 * thread whose run time grew): 1.1-1.2 times here; counted at 1.5 times. The interrupts and
 * softirqs cost the same at both ends. */
#define NT_CPUSHARE_SECOND_COST 1.5

/* The threads read again: what the other processes ran on the rank's CPUs since the first
 * reading. Not when that reading was not complete (a job too short for it within the budget),
 * or when the second would take the rank's reads past the budget (a short job: the first
 * reading of 111 threads costs ~1 ms of CPU time here). */
static void others_end(struct nt_cpushare *c, uint64_t probe_ns, double *spent_ns)
{
	enum nt_cpushare_reading reading = c->reading;
	c->reading = NT_CPUSHARE_NOT_READ;
	if (reading == NT_CPUSHARE_NOT_READ || c->ncpus == 0) {
		threads_free(c);
		return;
	}
	/* Skipped, and the report says the job was too short: a first reading the second could
	 * not follow within the budget, or none because the job never lasted long enough (or
	 * ended within a few candidate spans of its being due: a job of 0.51 s here). One never
	 * made although the job lasted well past that (no blocking collective on the grid came:
	 * point-to-point calls only, say) has no such reason to give. */
	bool too_short = reading != NT_CPUSHARE_PENDING ||
			 (double)(nt_clock_monotonic_ns() - c->synced_ns) <
				 nt_cpushare_due_after_ns(c->first_reading_est_ns) +
					 4.0 * NT_CPUSHARE_DUE_NS;
	if (reading != NT_CPUSHARE_READ ||
	    !affordable(c, probe_ns, spent_ns, NT_CPUSHARE_SECOND_COST * (double)c->threads_scan_ns)) {
		c->others_skipped = too_short;
		threads_free(c);
		return;
	}
	int slot_of_cpu[CPU_SETSIZE];
	for (int k = 0; k < CPU_SETSIZE; k++)
		slot_of_cpu[k] = -1;
	for (int k = 0; k < c->ncpus; k++)
		if (c->cpus[k] >= 0 && c->cpus[k] < CPU_SETSIZE)
			slot_of_cpu[c->cpus[k]] = 0;
	c->others_known = nt_tasks_ran_on(NULL, c->threads, c->nthreads, c->threads_left_out == 0,
					  slot_of_cpu, CPU_SETSIZE, getpid(), getuid(), &c->others,
					  1) == 0;
	threads_free(c);
}

void nt_cpushare_end(struct nt_cpushare *c)
{
	uint64_t v[4];
	read_all(c, v);
	c->cpu_ns = since(c->cpu_ns, v[0]);
	c->run_delay_ns = since(c->run_delay_ns, v[1]);
	c->others_run_delay_ns = c->reading == NT_CPUSHARE_READ
					 ? since(c->first_run_delay_ns, v[1])
					 : NT_CPUSHARE_UNKNOWN;
	c->busy_ns = since(c->busy_ns, v[2]);
	c->steal_ns = since(c->steal_ns, v[3]);
}

void nt_cpushare_others(struct nt_cpushare *c, uint64_t probe_ns)
{
	uint64_t t0 = thread_cpu_ns();
	double spent_ns = 0;
	/* The interrupts first: the cheaper reading. */
	if (c->irqs_known && !affordable(c, probe_ns, &spent_ns, (double)c->irqs_scan_ns))
		c->irqs_known = false;
	irqs_end(c);
	others_end(c, probe_ns, &spent_ns);
	c->scan_ns[1] = thread_cpu_ns() - t0;
}
