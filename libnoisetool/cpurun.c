/* One thread per CPU, released together through a start gate. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <noisetool/sysinfo.h>

#include "cpurun.h"

struct cpurun {
	nt_cpurun_fn fn;
	void *arg;
	size_t n;
	size_t ready;
	bool cancelled;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

struct cpurun_thread {
	struct cpurun *run;
	size_t index;
};

static _Thread_local struct cpurun *current_run;

int nt_cpurun_ready(void)
{
	struct cpurun *r = current_run;
	if (!r)
		return 0;
	pthread_mutex_lock(&r->lock);
	if (++r->ready == r->n)
		pthread_cond_broadcast(&r->cond);
	while (r->ready < r->n && !r->cancelled)
		pthread_cond_wait(&r->cond, &r->lock);
	bool cancelled = r->cancelled;
	pthread_mutex_unlock(&r->lock);
	return cancelled ? -ECANCELED : 0;
}

static void *thread_main(void *p)
{
	struct cpurun_thread *t = p;
	current_run = t->run;
	t->run->fn(t->run->arg, t->index);
	current_run = NULL;
	return NULL;
}

int nt_cpurun(size_t n, nt_cpurun_fn fn, void *arg)
{
	if (n == 0 || !fn)
		return -EINVAL;
	struct cpurun run = { .fn = fn, .arg = arg, .n = n };
	pthread_mutex_init(&run.lock, NULL);
	pthread_cond_init(&run.cond, NULL);
	pthread_t *tids = calloc(n, sizeof *tids);
	struct cpurun_thread *ts = calloc(n, sizeof *ts);
	int rc = 0;
	size_t started = 0;
	if (!tids || !ts) {
		rc = -ENOMEM;
		goto out;
	}
	for (; started < n; started++) {
		ts[started] = (struct cpurun_thread){ &run, started };
		int e = pthread_create(&tids[started], NULL, thread_main, &ts[started]);
		if (e) {
			rc = -e;
			pthread_mutex_lock(&run.lock);
			run.cancelled = true;
			pthread_cond_broadcast(&run.cond);
			pthread_mutex_unlock(&run.lock);
			break;
		}
	}
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
out:
	pthread_cond_destroy(&run.cond);
	pthread_mutex_destroy(&run.lock);
	free(tids);
	free(ts);
	return rc;
}

struct measure_run {
	const int *cpus;
	nt_cpurun_measure_fn measure;
	void *ctx;
	int *rcs;
};

static void measure_one(void *arg, size_t i)
{
	struct measure_run *m = arg;
	int rc = nt_pin_self(m->cpus[i]);
	if (rc) {
		m->rcs[i] = rc;
		nt_cpurun_ready(); /* the others must not wait for us */
		return;
	}
	m->rcs[i] = m->measure(m->ctx, i, m->cpus[i]);
}

int nt_cpurun_measure(const int *cpus, size_t n, nt_cpurun_measure_fn measure, void *ctx)
{
	if (!cpus || n == 0 || !measure)
		return -EINVAL;
	int *rcs = calloc(n, sizeof *rcs);
	if (!rcs)
		return -ENOMEM;
	struct measure_run m = { cpus, measure, ctx, rcs };
	int rc = nt_cpurun(n, measure_one, &m);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = rcs[i];
	free(rcs);
	return rc;
}
