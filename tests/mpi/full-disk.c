/* A job whose log cannot be written at MPI_Finalize (issue 38): CALLS small allreduces and one
 * barrier per rank, then each rank copies its live file as it stands to SNAP/rank-R (nothing
 * records after the barrier returned: it is what MPI_Finalize has to save), and the disk is
 * made to refuse the log:
 *
 *   fsize  every rank ignores SIGXFSZ and limits the files it writes to 0 bytes (RLIMIT_FSIZE):
 *          a write that makes a file longer fails with EFBIG;
 *   fill   rank 0 fills NOISETOOL_OUT's file system (a small tmpfs the test mounted) to the last
 *          byte: every write fails with ENOSPC;
 *   none   nothing: the log is written (the test's control).
 *
 * The live files were allocated at MPI_Init, so they stay whole. Rank R writes the calls it
 * made to SNAP/calls-R ("MPI_Allreduce N", "MPI_Barrier 1"), the ground truth. With
 * NOISETOOL_LIVE=0 there is no live file to copy.
 *
 *   full-disk SNAP fsize|fill|none CALLS
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <mpi.h>

/* Copy from to to, whole. 0 or -1. */
static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	static char buf[1 << 16];
	int rc = in >= 0 && out >= 0 ? 0 : -1;
	for (ssize_t n; rc == 0 && (n = read(in, buf, sizeof buf)) != 0;) {
		if (n < 0 || write(out, buf, (size_t)n) != n)
			rc = -1;
	}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		rc = -1;
	return rc;
}

/* The job's NAME.live in dir (the only job there), into live. 0 or -1. */
static int find_live(const char *dir, char *live, size_t size)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int rc = -1;
	for (struct dirent *e; rc && (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n > 5 && strcmp(e->d_name + n - 5, ".live") == 0) {
			snprintf(live, size, "%s/%s", dir, e->d_name);
			rc = 0;
		}
	}
	closedir(d);
	return rc;
}

/* Fill the file system of dir to the last byte, in ever smaller writes. */
static void fill(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/filler", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	static char buf[1 << 16];
	for (size_t n = sizeof buf; fd >= 0 && n > 0;)
		if (write(fd, buf, n) < 0)
			n /= 2;
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	const char *out = getenv("NOISETOOL_OUT");
	if (argc < 4 || !out ||
	    (strcmp(argv[2], "fsize") && strcmp(argv[2], "fill") && strcmp(argv[2], "none"))) {
		fprintf(stderr, "usage: NOISETOOL_OUT=DIR full-disk SNAP fsize|fill|none CALLS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	long calls = atol(argv[3]);
	for (long i = 0; i < calls; i++) {
		double x = rank + i, sum;
		MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	char live[4096], from[4096 + 32], to[4096 + 32];
	if (find_live(out, live, sizeof live) != 0) {
		fprintf(stderr, "full-disk: no live directory in %s\n", out);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	snprintf(from, sizeof from, "%s/rank-%d", live, rank);
	snprintf(to, sizeof to, "%s/rank-%d", argv[1], rank);
	const char *keep = getenv("NOISETOOL_LIVE");
	if ((!keep || strcmp(keep, "0") != 0) && copy_file(from, to) != 0) {
		fprintf(stderr, "full-disk: cannot copy %s to %s: %s\n", from, to, strerror(errno));
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	snprintf(to, sizeof to, "%s/calls-%d", argv[1], rank);
	FILE *f = fopen(to, "w");
	if (!f || fprintf(f, "MPI_Allreduce %ld\nMPI_Barrier 1\n", calls) < 0 || fclose(f) != 0) {
		fprintf(stderr, "full-disk: cannot write %s\n", to);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (strcmp(argv[2], "fsize") == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit lim = { 0, 0 };
		getrlimit(RLIMIT_FSIZE, &lim);
		lim.rlim_cur = 0;
		setrlimit(RLIMIT_FSIZE, &lim);
	} else if (strcmp(argv[2], "fill") == 0 && rank == 0) {
		fill(out);
	}
	return MPI_Finalize();
}
