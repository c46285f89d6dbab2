/* What else ran on a CPU while it was measured (noisetool-private/meanwhile.h): two readings of
 * /proc (each task's last CPU and run time, the interrupt and softirq counters) and their
 * difference for one CPU. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <noisetool-private/infile.h>
#include <noisetool-private/meanwhile.h>

#define PF_KTHREAD_FLAG 0x00200000u /* include/linux/sched.h */
#define TASKS_MAX 65536             /* threads read at most (the rest are left out) */
#define FILE_MAX (16u << 20)        /* /proc/interrupts of a large node is < 1 MiB */
#define PATH_BUF 4608               /* a root of up to 4 KiB and /PID/task/TID/schedstat */

struct task {
	pid_t pid, tid;
	int cpu; /* the CPU it last ran on (stat field 39) */
	uid_t uid;
	bool kthread;
	uint64_t run_ns; /* schedstat's time on a CPU */
	char comm[16];
};

/* /proc/interrupts or /proc/softirqs: a count per line and CPU column. */
struct counts {
	size_t nlines, ncols;
	int *col_cpu;
	char (*name)[16];
	char (*desc)[40];
	uint64_t *v; /* nlines x ncols */
};

struct nt_meanwhile_snap {
	uint64_t t_ns;
	size_t ntasks;
	struct task *tasks; /* by tid */
	struct counts irqs, softirqs;
};

static void copy_name(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static void counts_free(struct counts *c)
{
	free(c->col_cpu);
	free(c->name);
	free(c->desc);
	free(c->v);
	memset(c, 0, sizeof *c);
}

/* Parse text: a header of "CPUn" columns, then "NAME: count per column [description]" lines.
 * A line with fewer counts than columns (ERR, MIS) is left out. A numbered line's description
 * is its last word (the device); a named line's is the rest ("Local timer interrupts"). */
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
	for (char *p = line; (p = strstr(p, "CPU")) != NULL; p += 3)
		c->ncols++;
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
	size_t k = 0;
	for (char *p = line; (p = strstr(p, "CPU")) != NULL; p += 3)
		c->col_cpu[k++] = atoi(p + 3);
	for (line = end + 1; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		bool last = *end == '\0';
		*end = '\0';
		char *colon = strchr(line, ':');
		if (colon) {
			char *name = line;
			while (isspace((unsigned char)*name))
				name++;
			*colon = '\0';
			uint64_t *row = c->v + c->nlines * c->ncols;
			char *p = colon + 1;
			size_t got = 0;
			for (; got < c->ncols; got++) {
				while (*p == ' ' || *p == '\t')
					p++;
				if (!isdigit((unsigned char)*p))
					break;
				row[got] = strtoull(p, &p, 10);
			}
			if (got == c->ncols && *name) {
				while (*p == ' ' || *p == '\t')
					p++;
				size_t n = strlen(p);
				while (n && isspace((unsigned char)p[n - 1]))
					p[--n] = '\0';
				if (all_digits(name)) {
					char *w = strrchr(p, ' ');
					p = w ? w + 1 : p;
				}
				copy_name(c->name[c->nlines], sizeof c->name[0], name, strlen(name));
				copy_name(c->desc[c->nlines], sizeof c->desc[0], p, strlen(p));
				c->nlines++;
			} else {
				memset(row, 0, c->ncols * sizeof *row);
			}
		}
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

/* One thread's stat and schedstat; false when either cannot be read or parsed. */
static bool task_read(const char *dir, struct task *t)
{
	char path[PATH_BUF], buf[1024];
	if ((size_t)snprintf(path, sizeof path, "%s/stat", dir) >= sizeof path)
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return false;
	copy_name(t->comm, sizeof t->comm, open_paren + 1, (size_t)(close_paren - open_paren - 1));
	/* Fields from 3 (state) on; flags is field 9, processor field 39. */
	char *save = NULL, *tok = strtok_r(close_paren + 1, " ", &save);
	unsigned long flags = 0;
	int cpu = -1;
	for (int field = 3; tok && field <= 39; field++, tok = strtok_r(NULL, " ", &save)) {
		if (field == 9)
			flags = strtoul(tok, NULL, 10);
		else if (field == 39)
			cpu = atoi(tok);
	}
	if (cpu < 0)
		return false;
	t->cpu = cpu;
	t->kthread = flags & PF_KTHREAD_FLAG;
	if ((size_t)snprintf(path, sizeof path, "%s/schedstat", dir) >= sizeof path)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char *e;
	t->run_ns = strtoull(buf, &e, 10);
	return e != buf;
}

static int by_tid(const void *x, const void *y)
{
	const struct task *a = x, *b = y;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

static int tasks_read(const char *root, struct nt_meanwhile_snap *s)
{
	DIR *d = opendir(root);
	if (!d)
		return -errno;
	size_t cap = 256;
	s->tasks = malloc(cap * sizeof *s->tasks);
	if (!s->tasks) {
		closedir(d);
		return -ENOMEM;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL && s->ntasks < TASKS_MAX) {
		if (!all_digits(e->d_name))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, 0) != 0)
			continue;
		char tdir[PATH_BUF];
		if ((size_t)snprintf(tdir, sizeof tdir, "%s/%s/task", root, e->d_name) >= sizeof tdir)
			continue;
		DIR *td = opendir(tdir);
		if (!td)
			continue;
		struct dirent *te;
		while ((te = readdir(td)) != NULL && s->ntasks < TASKS_MAX) {
			if (!all_digits(te->d_name))
				continue;
			if (s->ntasks == cap) {
				struct task *nt = realloc(s->tasks, cap * 2 * sizeof *s->tasks);
				if (!nt) {
					closedir(td);
					closedir(d);
					return -ENOMEM;
				}
				s->tasks = nt;
				cap *= 2;
			}
			struct task *t = &s->tasks[s->ntasks];
			char dir[PATH_BUF];
			if ((size_t)snprintf(dir, sizeof dir, "%s/%s", tdir, te->d_name) >= sizeof dir)
				continue;
			t->pid = atoi(e->d_name);
			t->tid = atoi(te->d_name);
			t->uid = st.st_uid;
			if (task_read(dir, t))
				s->ntasks++;
		}
		closedir(td);
	}
	closedir(d);
	qsort(s->tasks, s->ntasks, sizeof *s->tasks, by_tid);
	return 0;
}

int nt_meanwhile_snap_take(const char *proc_root, struct nt_meanwhile_snap **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	const char *root = proc_root ? proc_root : "/proc";
	struct nt_meanwhile_snap *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	/* A missing file or tree leaves its part empty; only memory fails the reading. */
	if (counts_read(root, "interrupts", &s->irqs) == -ENOMEM ||
	    counts_read(root, "softirqs", &s->softirqs) == -ENOMEM ||
	    tasks_read(root, s) == -ENOMEM) {
		nt_meanwhile_snap_free(s);
		return -ENOMEM;
	}
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

/* One thread's time on the CPU, with its process's identity. */
struct thread_use {
	struct nt_task_use u; /* first: by_pid sorts on it */
	uint64_t thread_ns;
};

static int by_pid(const void *x, const void *y)
{
	const struct nt_task_use *a = x, *b = y;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

static int by_run_desc(const void *x, const void *y)
{
	const struct nt_task_use *a = x, *b = y;
	if (a->run_ns != b->run_ns)
		return a->run_ns < b->run_ns ? 1 : -1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

static int by_count_desc(const void *x, const void *y)
{
	const struct nt_count_use *a = x, *b = y;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* The processes that ran on cpu, their threads summed, the busiest first. */
static int tasks_fill(const struct nt_meanwhile_snap *a, const struct nt_meanwhile_snap *b,
		      int cpu, pid_t self_pid, uid_t self_uid, struct nt_cpu_meanwhile *out)
{
	struct thread_use *th = calloc(b->ntasks ? b->ntasks : 1, sizeof *th);
	struct nt_task_use *procs = calloc(b->ntasks ? b->ntasks : 1, sizeof *procs);
	if (!th || !procs) {
		free(th);
		free(procs);
		return -ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < b->ntasks; i++) {
		const struct task *t = &b->tasks[i];
		if (t->cpu != cpu || t->pid == self_pid)
			continue;
		const struct task *o = bsearch(t, a->tasks, a->ntasks, sizeof *t, by_tid);
		uint64_t d = t->run_ns;
		if (o && o->pid == t->pid && o->run_ns <= t->run_ns)
			d = t->run_ns - o->run_ns; /* else: born meanwhile, or its tid reused */
		if (d == 0)
			continue;
		th[n].u = (struct nt_task_use){
			.pid = t->pid,
			.kind = t->kthread	       ? NT_TASK_KERNEL
				: t->uid != self_uid ? NT_TASK_OTHER_USER
						     : NT_TASK_PROCESS,
			.run_ns = d,
		};
		memcpy(th[n].u.comm, t->comm, sizeof th[n].u.comm);
		th[n].thread_ns = d;
		n++;
	}
	qsort(th, n, sizeof *th, by_pid);
	size_t m = 0;
	for (size_t i = 0; i < n; m++) {
		struct nt_task_use p = th[i].u; /* named after its busiest thread */
		uint64_t busiest = th[i].thread_ns;
		for (i++; i < n && th[i].u.pid == p.pid; i++) {
			p.run_ns += th[i].u.run_ns;
			if (th[i].thread_ns > busiest) {
				busiest = th[i].thread_ns;
				memcpy(p.comm, th[i].u.comm, sizeof p.comm);
			}
		}
		procs[m] = p;
		out->tasks_ns += p.run_ns;
	}
	qsort(procs, m, sizeof *procs, by_run_desc);
	out->ntasks_all = m;
	out->ntasks = m < NT_MEANWHILE_TOP ? m : NT_MEANWHILE_TOP;
	memcpy(out->tasks, procs, out->ntasks * sizeof *procs);
	free(th);
	free(procs);
	return 0;
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
		/* Insert into the top list, kept sorted. */
		size_t pos = *ntop;
		while (pos > 0 && by_count_desc(&u, &top[pos - 1]) < 0)
			pos--;
		if (pos >= NT_MEANWHILE_TOP)
			continue;
		size_t last = *ntop < NT_MEANWHILE_TOP ? *ntop : NT_MEANWHILE_TOP - 1;
		memmove(&top[pos + 1], &top[pos], (last - pos) * sizeof *top);
		top[pos] = u;
		if (*ntop < NT_MEANWHILE_TOP)
			(*ntop)++;
	}
	return true;
}

int nt_meanwhile_fill(const struct nt_meanwhile_snap *a, const struct nt_meanwhile_snap *b,
		      int cpu, pid_t self_pid, uid_t self_uid, struct nt_cpu_meanwhile *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	if (!a || !b)
		return -EINVAL;
	out->elapsed_ns = b->t_ns > a->t_ns ? b->t_ns - a->t_ns : 0;
	bool irqs = counts_fill(&a->irqs, &b->irqs, cpu, &out->irq_count, out->irqs, &out->nirqs);
	bool softirqs = counts_fill(&a->softirqs, &b->softirqs, cpu, &out->softirq_count,
				    out->softirqs, &out->nsoftirqs);
	if (!irqs && !softirqs && b->ntasks == 0)
		return -EINVAL;
	int rc = tasks_fill(a, b, cpu, self_pid, self_uid, out);
	if (rc)
		return rc;
	out->known = true;
	return 0;
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
