/* What else ran on a CPU while it was measured (noisetool-private/meanwhile.h): two readings of
 * /proc (each task's last CPU and run time, the interrupt and softirq counters) and their
 * difference for one CPU. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <noisetool/clock.h>
#include <noisetool-private/infile.h>
#include <noisetool-private/irqlines.h>
#include <noisetool-private/meanwhile.h>
#include <noisetool-private/tasks.h>
#include <noisetool-private/topn.h>

#define TASKS_MAX 65536             /* threads followed at most (16 bytes each) */
#define FILE_MAX (16u << 20)        /* /proc/interrupts of a large node is < 1 MiB */
#define PATH_BUF 4608               /* a root of up to 4 KiB and /PID/task/TID/schedstat */

/* /proc/interrupts or /proc/softirqs: a count per line and CPU column. */
struct counts {
	size_t nlines, ncols;
	int *col_cpu;
	char (*name)[NT_IRQ_NAME_BYTES];
	char (*desc)[NT_IRQ_DESC_BYTES];
	uint64_t *v; /* nlines x ncols */
};

struct nt_meanwhile_snap {
	uint64_t t_ns;
	struct nt_task_time *tasks; /* by tid */
	size_t ntasks, more;        /* read, and left out for want of room */
	struct counts irqs, softirqs;
};

static void counts_free(struct counts *c)
{
	free(c->col_cpu);
	free(c->name);
	free(c->desc);
	free(c->v);
	memset(c, 0, sizeof *c);
}

/* Parse text, /proc/interrupts or /proc/softirqs (irqlines.h), keeping every column. */
static int counts_parse(char *text, struct counts *c)
{
	memset(c, 0, sizeof *c);
	char *line = text, *end = strchr(line, '\n');
	if (!end)
		return -EINVAL;
	*end = '\0';
	size_t lines = 0;
	for (char *p = end + 1; *p; p++)
		lines += *p == '\n';
	c->ncols = nt_irq_header(line, NULL, 0);
	if (c->ncols == 0)
		return -EINVAL;
	c->col_cpu = calloc(c->ncols, sizeof *c->col_cpu);
	c->name = calloc(lines + 1, sizeof *c->name);
	c->desc = calloc(lines + 1, sizeof *c->desc);
	c->v = calloc((lines + 1) * c->ncols, sizeof *c->v);
	if (!c->col_cpu || !c->name || !c->desc || !c->v) {
		counts_free(c);
		return -ENOMEM;
	}
	nt_irq_header(line, c->col_cpu, c->ncols);
	for (line = end + 1; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		bool last = *end == '\0';
		*end = '\0';
		if (nt_irq_line(line, c->ncols, c->v + c->nlines * c->ncols, c->name[c->nlines],
				c->desc[c->nlines]))
			c->nlines++;
		if (last)
			break;
	}
	return 0;
}

static int counts_read(const char *root, const char *file, struct counts *c)
{
	char path[PATH_BUF];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", root, file) >= sizeof path) {
		memset(c, 0, sizeof *c);
		return -ENAMETOOLONG;
	}
	char *text;
	size_t len;
	int rc = nt_infile_read(path, false, FILE_MAX, &text, &len);
	if (rc) {
		memset(c, 0, sizeof *c);
		return rc;
	}
	rc = counts_parse(text, c);
	free(text);
	return rc;
}

static int col_of(const struct counts *c, int cpu)
{
	for (size_t k = 0; k < c->ncols; k++)
		if (c->col_cpu[k] == cpu)
			return (int)k;
	return -1;
}

int nt_meanwhile_snap_take(const char *proc_root, struct nt_meanwhile_snap **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	const char *root = proc_root ? proc_root : "/proc";
	struct nt_meanwhile_snap *s = calloc(1, sizeof *s);
	if (!s || !(s->tasks = malloc(TASKS_MAX * sizeof *s->tasks))) {
		free(s);
		return -ENOMEM;
	}
	/* A missing file or tree leaves its part empty; only memory fails the reading. */
	if (counts_read(root, "interrupts", &s->irqs) == -ENOMEM ||
	    counts_read(root, "softirqs", &s->softirqs) == -ENOMEM) {
		nt_meanwhile_snap_free(s);
		return -ENOMEM;
	}
	nt_tasks_times(root, s->tasks, TASKS_MAX, &s->ntasks, &s->more);
	s->t_ns = nt_clock_monotonic_ns();
	*out = s;
	return 0;
}

size_t nt_meanwhile_snap_tasks(const struct nt_meanwhile_snap *s)
{
	return s ? s->ntasks : 0;
}

void nt_meanwhile_snap_free(struct nt_meanwhile_snap *s)
{
	if (!s)
		return;
	free(s->tasks);
	counts_free(&s->irqs);
	counts_free(&s->softirqs);
	free(s);
}

static int by_count_desc(const void *x, const void *y)
{
	const struct nt_count_use *a = x, *b = y;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* The lines counted on cpu, most first; false when neither reading has its column. */
static bool counts_fill(const struct counts *a, const struct counts *b, int cpu,
			uint64_t *total, struct nt_count_use *top, size_t *ntop)
{
	int ca = col_of(a, cpu), cb = col_of(b, cpu);
	*total = 0;
	*ntop = 0;
	if (ca < 0 || cb < 0)
		return false;
	for (size_t i = 0; i < b->nlines; i++) {
		size_t j = i < a->nlines && strcmp(a->name[i], b->name[i]) == 0 ? i : a->nlines;
		for (size_t k = 0; j == a->nlines && k < a->nlines; k++)
			if (strcmp(a->name[k], b->name[i]) == 0)
				j = k;
		uint64_t was = j < a->nlines ? a->v[j * a->ncols + (size_t)ca] : 0;
		uint64_t now = b->v[i * b->ncols + (size_t)cb];
		if (now <= was)
			continue;
		struct nt_count_use u = { .count = now - was };
		memcpy(u.name, b->name[i], sizeof u.name);
		memcpy(u.desc, b->desc[i], sizeof u.desc);
		*total += u.count;
		nt_top_insert(top, ntop, NT_MEANWHILE_TOP, sizeof u, &u, by_count_desc);
	}
	return true;
}

int nt_meanwhile_finish(const char *proc_root, const struct nt_meanwhile_snap *before,
			const int *cpus, size_t ncpus, pid_t self_pid, uid_t self_uid,
			struct nt_cpu_meanwhile *out)
{
	if (!out || (!cpus && ncpus > 0))
		return -EINVAL;
	memset(out, 0, ncpus * sizeof *out);
	if (!before)
		return -EINVAL;
	const char *root = proc_root ? proc_root : "/proc";
	struct counts irqs, softirqs;
	int rc = counts_read(root, "interrupts", &irqs);
	if (rc == -ENOMEM)
		return rc;
	rc = counts_read(root, "softirqs", &softirqs);
	if (rc == -ENOMEM) {
		counts_free(&irqs);
		return rc;
	}
	/* Each measured CPU is a slot of the task stream. */
	size_t map_len = 0;
	for (size_t i = 0; i < ncpus; i++)
		if (cpus[i] >= 0 && (size_t)cpus[i] + 1 > map_len)
			map_len = (size_t)cpus[i] + 1;
	int *slot_of_cpu = malloc((map_len ? map_len : 1) * sizeof *slot_of_cpu);
	struct nt_task_top *tops = calloc(ncpus ? ncpus : 1, sizeof *tops);
	if (!slot_of_cpu || !tops) {
		free(slot_of_cpu);
		free(tops);
		counts_free(&irqs);
		counts_free(&softirqs);
		return -ENOMEM;
	}
	for (size_t c = 0; c < map_len; c++)
		slot_of_cpu[c] = -1;
	for (size_t i = 0; i < ncpus; i++)
		if (cpus[i] >= 0)
			slot_of_cpu[cpus[i]] = (int)i;
	int tasks_rc = nt_tasks_ran_on(root, before->tasks, before->ntasks, before->more == 0,
				       slot_of_cpu, map_len, self_pid, self_uid, tops, ncpus);
	uint64_t t_ns = nt_clock_monotonic_ns();
	rc = tasks_rc == -ENOMEM ? -ENOMEM : 0;
	for (size_t i = 0; i < ncpus && rc == 0; i++) {
		struct nt_cpu_meanwhile *m = &out[i];
		if (cpus[i] < 0)
			continue;
		bool a = counts_fill(&before->irqs, &irqs, cpus[i], &m->irq_count, m->irqs,
				     &m->nirqs);
		bool b = counts_fill(&before->softirqs, &softirqs, cpus[i], &m->softirq_count,
				     m->softirqs, &m->nsoftirqs);
		if (!a && !b && (tasks_rc != 0 || before->ntasks == 0))
			continue; /* nothing was read about it */
		m->elapsed_ns = t_ns > before->t_ns ? t_ns - before->t_ns : 0;
		m->others = tops[i];
		m->known = true;
	}
	free(slot_of_cpu);
	free(tops);
	counts_free(&irqs);
	counts_free(&softirqs);
	return rc;
}

const struct nt_count_use *nt_meanwhile_rate_match(const struct nt_cpu_meanwhile *m, double hz)
{
	if (!m || !m->known || m->elapsed_ns == 0 || !(hz > 0))
		return NULL;
	const struct nt_count_use *best = NULL;
	double s = (double)m->elapsed_ns / 1e9;
	for (int pass = 0; pass < 2; pass++) {
		const struct nt_count_use *u = pass ? m->softirqs : m->irqs;
		size_t n = pass ? m->nsoftirqs : m->nirqs;
		for (size_t i = 0; i < n; i++)
			if (fabs((double)u[i].count / s - hz) <= 0.03 * hz &&
			    (!best || u[i].count > best->count))
				best = &u[i];
	}
	return best;
}

const char *nt_task_kind_name(enum nt_task_kind kind)
{
	switch (kind) {
	case NT_TASK_KERNEL:
		return "kernel thread";
	case NT_TASK_OTHER_USER:
		return "another user's";
	case NT_TASK_PROCESS:
	default:
		return "process";
	}
}
