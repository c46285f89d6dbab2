/* The node's tasks from /proc (noisetool-private/tasks.h): each thread's run time read into a
 * table, then the threads' growth on a set of CPUs summed per process, read as one stream
 * (no table of the second reading). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <noisetool-private/tasks.h>
#include <noisetool-private/topn.h>

#include "procfile.h"

#define PF_KTHREAD_FLAG 0x00200000u /* include/linux/sched.h */
#define PATH_BUF 4608               /* a root of up to 4 KiB and /PID/task/TID/schedstat */

/* One thread as read. */
struct thread {
	int cpu; /* the CPU it last ran on (stat field 39) */
	bool kthread;
	uint64_t run_ns; /* schedstat: its time on a CPU */
	char comm[16];   /* printable ASCII: other bytes read as '?' */
};

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The one line of dir/file (stat, schedstat) into buf: its length, or < 0. */
static int read_small(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_BUF];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path)
		return -ENAMETOOLONG;
	return nt_read_first_line(path, buf, size);
}

/* One thread's schedstat, and with stat its name, last CPU and kind; false when a file cannot
 * be read or parsed (it exited meanwhile). */
static bool thread_read(const char *dir, bool with_stat, struct thread *t)
{
	char buf[1024];
	if (with_stat) {
		if (read_small(dir, "stat", buf, sizeof buf) <= 0)
			return false;
		char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
		if (!open_paren || !close_paren || close_paren < open_paren)
			return false;
		size_t len = (size_t)(close_paren - open_paren - 1);
		len = len < sizeof t->comm - 1 ? len : sizeof t->comm - 1;
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)open_paren[1 + i];
			t->comm[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
		}
		t->comm[len] = '\0';
		/* Fields from 3 (state) on; flags is field 9, processor field 39. */
		char *save = NULL, *tok = strtok_r(close_paren + 1, " ", &save);
		unsigned long flags = 0;
		t->cpu = -1;
		for (int field = 3; tok && field <= 39; field++, tok = strtok_r(NULL, " ", &save)) {
			if (field == 9)
				flags = strtoul(tok, NULL, 10);
			else if (field == 39)
				t->cpu = atoi(tok);
		}
		if (t->cpu < 0)
			return false;
		t->kthread = flags & PF_KTHREAD_FLAG;
	}
	if (read_small(dir, "schedstat", buf, sizeof buf) <= 0)
		return false;
	char *e;
	t->run_ns = strtoull(buf, &e, 10);
	return e != buf;
}

/* Calls fn for each readable thread under root, a process at a time: fn(ctx, pid, tid, uid,
 * dir) for each of its threads, then end(ctx) after its last one (end may be NULL). */
static int walk(const char *root, void (*fn)(void *, int, int, uid_t, const char *),
		void (*end)(void *), void *ctx)
{
	DIR *d = opendir(root);
	if (!d)
		return -errno;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
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
		while ((te = readdir(td)) != NULL) {
			char dir[PATH_BUF];
			if (all_digits(te->d_name) &&
			    (size_t)snprintf(dir, sizeof dir, "%s/%s", tdir, te->d_name) < sizeof dir)
				fn(ctx, atoi(e->d_name), atoi(te->d_name), st.st_uid, dir);
		}
		closedir(td);
		if (end)
			end(ctx);
	}
	closedir(d);
	return 0;
}

struct times_ctx {
	struct nt_task_time *out;
	size_t cap, n, more;
};

static void times_one(void *p, int pid, int tid, uid_t uid, const char *dir)
{
	struct times_ctx *c = p;
	struct thread t;
	if (!thread_read(dir, false, &t))
		return;
	if (c->n == c->cap) {
		c->more++;
		return;
	}
	c->out[c->n++] = (struct nt_task_time){ .pid = pid, .tid = tid, .run_ns = t.run_ns };
}

static int by_tid(const void *x, const void *y)
{
	const struct nt_task_time *a = x, *b = y;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

int nt_tasks_times(const char *proc_root, struct nt_task_time *out, size_t cap, size_t *n,
		   size_t *more)
{
	if (!n || !more || (!out && cap > 0))
		return -EINVAL;
	struct times_ctx c = { .out = out, .cap = cap };
	int rc = walk(proc_root ? proc_root : "/proc", times_one, NULL, &c);
	qsort(out, c.n, sizeof *out, by_tid);
	*n = c.n;
	*more = c.more;
	return rc;
}

/* One process's time in each slot, while its threads are read. */
struct slot_acc {
	uint64_t ns, busiest_ns;
	char comm[16];
};

struct ran_ctx {
	const struct nt_task_time *before;
	size_t n;
	bool complete;
	const int *slot_of_cpu;
	size_t map_len;
	pid_t self_pid;
	uid_t self_uid;
	struct nt_task_top *tops;
	size_t nslots;
	struct slot_acc *acc; /* nslots */
	int pid;              /* the process being read */
	enum nt_task_kind kind;
};

static void ran_one(void *p, int pid, int tid, uid_t uid, const char *dir)
{
	struct ran_ctx *c = p;
	struct thread t;
	/* Its run time first: most threads did not run, and need no stat read (half the cost). */
	if (pid == c->self_pid || !thread_read(dir, false, &t))
		return;
	struct nt_task_time key = { .tid = tid };
	const struct nt_task_time *o = bsearch(&key, c->before, c->n, sizeof key, by_tid);
	uint64_t d;
	if (o && o->pid == pid)
		d = t.run_ns >= o->run_ns ? t.run_ns - o->run_ns : 0;
	else if (c->complete)
		d = t.run_ns; /* born since the first reading, or its tid reused */
	else
		return; /* perhaps left out of the first reading */
	if (d == 0 || !thread_read(dir, true, &t))
		return;
	if (t.cpu < 0 || (size_t)t.cpu >= c->map_len || c->slot_of_cpu[t.cpu] < 0 ||
	    (size_t)c->slot_of_cpu[t.cpu] >= c->nslots)
		return;
	if (o && o->pid == pid) /* the second read's run time, a little later */
		d = t.run_ns >= o->run_ns ? t.run_ns - o->run_ns : 0;
	else
		d = t.run_ns;
	struct slot_acc *a = &c->acc[c->slot_of_cpu[t.cpu]];
	c->pid = pid;
	c->kind = t.kthread ? NT_TASK_KERNEL : uid != c->self_uid ? NT_TASK_OTHER_USER : NT_TASK_PROCESS;
	a->ns += d;
	if (d > a->busiest_ns) {
		a->busiest_ns = d;
		memcpy(a->comm, t.comm, sizeof a->comm);
	}
}

/* The busier first, then the smaller pid. */
static int busier(const void *x, const void *y)
{
	const struct nt_task_use *a = x, *b = y;
	if (a->run_ns != b->run_ns)
		return a->run_ns > b->run_ns ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* After a process's threads: its time in each slot goes into that slot's top list. */
static void ran_end(void *p)
{
	struct ran_ctx *c = p;
	for (size_t s = 0; s < c->nslots; s++) {
		struct slot_acc *a = &c->acc[s];
		if (a->ns == 0)
			continue;
		struct nt_task_top *top = &c->tops[s];
		struct nt_task_use u = { .pid = c->pid, .kind = c->kind, .run_ns = a->ns };
		memcpy(u.comm, a->comm, sizeof u.comm);
		top->run_ns += a->ns;
		top->count++;
		nt_top_insert(top->tasks, &top->n, NT_MEANWHILE_TOP, sizeof u, &u, busier);
		memset(a, 0, sizeof *a);
	}
}

int nt_tasks_ran_on(const char *proc_root, const struct nt_task_time *before, size_t n,
		    bool complete, const int *slot_of_cpu, size_t map_len, pid_t self_pid,
		    uid_t self_uid, struct nt_task_top *tops, size_t nslots)
{
	if ((!before && n > 0) || (!slot_of_cpu && map_len > 0) || (!tops && nslots > 0))
		return -EINVAL;
	if (nslots == 0)
		return 0;
	memset(tops, 0, nslots * sizeof *tops);
	struct ran_ctx c = {
		.before = before, .n = n, .complete = complete, .slot_of_cpu = slot_of_cpu,
		.map_len = map_len, .self_pid = self_pid, .self_uid = self_uid, .tops = tops,
		.nslots = nslots, .acc = calloc(nslots, sizeof *c.acc),
	};
	if (!c.acc)
		return -ENOMEM;
	int rc = walk(proc_root ? proc_root : "/proc", ran_one, ran_end, &c);
	free(c.acc);
	return rc;
}
