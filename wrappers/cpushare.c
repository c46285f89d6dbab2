/* The rank's CPUs over the job (cpushare.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
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

static uint64_t thread_run_delay_ns(void)
{
	char buf[128];
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NT_CPUSHARE_UNKNOWN;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	uint64_t run, delay, count;
	if (n <= 0)
		return NT_CPUSHARE_UNKNOWN;
	buf[n] = '\0';
	return nt_parse_schedstat(buf, &run, &delay, &count) == 0 ? delay : NT_CPUSHARE_UNKNOWN;
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

void nt_cpushare_begin(struct nt_cpushare *c, bool walk_tasks)
{
	c->list[0] = '\0';
	int n = nt_allowed_cpus(c->cpus, CPU_SETSIZE);
	c->ncpus = n > 0 && nt_cpulist_format(c->cpus, (size_t)n, c->list, sizeof c->list) >= 0
			   ? n
			   : 0;
	if (c->ncpus == 0)
		c->list[0] = '\0';
	c->begin_ns = nt_clock_monotonic_ns();
	uint64_t t0 = thread_cpu_ns();
	c->threads = walk_tasks ? malloc(NT_CPUSHARE_THREADS * sizeof *c->threads) : NULL;
	if (c->threads &&
	    nt_tasks_times(NULL, c->threads, NT_CPUSHARE_THREADS, &c->nthreads,
			   &c->threads_left_out) != 0) {
		free(c->threads);
		c->threads = NULL;
	}
	if (walk_tasks)
		irqs_read(c, c->irq0, &c->nirq0, c->soft0, &c->nsoft0, &c->irqs_known);
	c->scan_ns[0] = thread_cpu_ns() - t0;
	uint64_t v[4];
	read_all(c, v);
	c->cpu_ns = v[0];
	c->run_delay_ns = v[1];
	c->busy_ns = v[2];
	c->steal_ns = v[3];
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

/* The read budget (NT_REC_READ_BUDGET): the probe windows' reads and the readings of /proc at
 * both ends together take at most 1 % of the rank's wall time. */
#define READ_BUDGET 0.01

/* The second reading costs more than the first (it reads the stat of each thread whose run
 * time grew): 1.1-1.2 times here; counted at 1.5 times. */
#define SECOND_READING_COST 1.5

/* The threads read again: what the other processes ran on the rank's CPUs since MPI_Init;
 * not when that would take the rank's reads (probe_ns so far, the first reading, and this one
 * at SECOND_READING_COST times the first's) past the budget: a short job (the first reading of
 * 111 threads, interrupts and softirqs costs ~1.6 ms of CPU time here). */
static void others_end(struct nt_cpushare *c, uint64_t probe_ns)
{
	if (!c->threads || c->ncpus == 0)
		return;
	double wall_ns = (double)(nt_clock_monotonic_ns() - c->begin_ns);
	if ((double)probe_ns + (1.0 + SECOND_READING_COST) * (double)c->scan_ns[0] >
	    READ_BUDGET * wall_ns) {
		c->others_skipped = true;
		free(c->threads);
		c->threads = NULL;
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
	free(c->threads);
	c->threads = NULL;
}

void nt_cpushare_end(struct nt_cpushare *c)
{
	uint64_t v[4];
	read_all(c, v);
	c->cpu_ns = since(c->cpu_ns, v[0]);
	c->run_delay_ns = since(c->run_delay_ns, v[1]);
	c->busy_ns = since(c->busy_ns, v[2]);
	c->steal_ns = since(c->steal_ns, v[3]);
}

void nt_cpushare_others(struct nt_cpushare *c, uint64_t probe_ns)
{
	uint64_t t0 = thread_cpu_ns();
	others_end(c, probe_ns);
	irqs_end(c);
	c->scan_ns[1] = thread_cpu_ns() - t0;
}
