/* Open MPI: whether the progress function of its nonblocking collectives (libnbc) is in the
 * progress loop after MPI_Init, and after 200 blocking allreduces on MPI_COMM_WORLD, which use
 * none (the tool's adaptive waits vote there) (test-nbc-progress.sh). Open MPI 4.1 puts it there at the first
 * nonblocking collective on a communicator -- a dup's context id allocation is one, on the
 * parent -- and takes it out when the last such communicator is freed; while it is there every
 * MPI call that progresses runs it (doc/overhead.md, "A private communicator"). The tool must
 * not leave it there for the application. Ground truth, from Open MPI itself:
 * opal_progress_unregister finds the function (OPAL_SUCCESS, which this program puts back at
 * once) or not. Then the application's own nonblocking collectives must still complete (the
 * tool's communicator freed did not take the function out from under them): an Ibarrier on a
 * dup of MPI_COMM_WORLD and an Iallreduce on MPI_COMM_WORLD, its sum checked.
 * Prints "rank R: libnbc progress registered|not registered after MPI_Init", the same "after
 * 200 allreduces", then "rank R: collectives ok";
 * exits 77 where libnbc or opal_progress_unregister cannot be found. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>

static char libnbc[4096];

static int find_libnbc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (!strstr(info->dlpi_name, "mca_coll_libnbc.so"))
		return 0;
	snprintf(libnbc, sizeof libnbc, "%s", info->dlpi_name);
	return 1;
}

typedef int (*cb_fn)(void);
static cb_fn progress;
static int (*unreg)(cb_fn), (*reg)(cb_fn);

/* Whether the function is in the progress loop now (then it is put back at once). */
static void say(int rank, const char *when)
{
	int registered = unreg(progress) == 0; /* OPAL_SUCCESS */
	if (registered)
		reg(progress);
	printf("rank %d: libnbc progress %s %s\n", rank, registered ? "registered" : "not registered",
	       when);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	dl_iterate_phdr(find_libnbc, NULL);
	void *h = libnbc[0] ? dlopen(libnbc, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	progress = h ? (cb_fn)dlsym(h, "ompi_coll_libnbc_progress") : NULL;
	unreg = (int (*)(cb_fn))dlsym(RTLD_DEFAULT, "opal_progress_unregister");
	reg = (int (*)(cb_fn))dlsym(RTLD_DEFAULT, "opal_progress_register");
	if (!progress || !unreg || !reg) {
		printf("rank %d: no libnbc progress function or opal_progress_unregister (%s)\n",
		       rank, libnbc[0] ? libnbc : "mca_coll_libnbc.so not loaded");
		MPI_Finalize();
		return 77;
	}
	say(rank, "after MPI_Init");
	for (int i = 0; i < 200; i++) {
		int x = i, y;
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	}
	say(rank, "after 200 allreduces");

	MPI_Comm dup;
	MPI_Request q;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Ibarrier(dup, &q);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	MPI_Comm_free(&dup);
	int one = rank + 1, sum = 0;
	MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	if (sum == size * (size + 1) / 2)
		printf("rank %d: collectives ok\n", rank);
	else
		printf("rank %d: Iallreduce sum %d, want %d\n", rank, sum, size * (size + 1) / 2);
	MPI_Finalize();
	return 0;
}
