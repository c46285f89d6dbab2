/* A job that does not end well: small allreduces until it is killed (at most LIMIT seconds),
 * each rank keeping the number it completed in DIR/count-RANK, a file it maps, so that the
 * count survives its death exactly (and its pid in DIR/pid-RANK); with ABORT > 0, rank 0 calls
 * MPI_Abort after that many. With POLLS > 0, each allreduce follows POLLS probes that find
 * nothing (MPI_Iprobe of a tag nobody sends), whose number the file's second count keeps.
 *
 *   killed DIR [LIMIT_S [ABORT [POLLS]]]
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 2) {
		fprintf(stderr, "usage: killed DIR [LIMIT_S [ABORT [POLLS]]]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double limit = argc > 2 ? atof(argv[2]) : 60;
	long abort_after = argc > 3 ? atol(argv[3]) : 0;
	long polls = argc > 4 ? atol(argv[4]) : 0;
	char path[4096];
	snprintf(path, sizeof path, "%s/count-%d", argv[1], rank);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	volatile uint64_t *count = MAP_FAILED;
	if (fd >= 0 && ftruncate(fd, 2 * sizeof *count) == 0)
		count = mmap(NULL, 2 * sizeof *count, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (count == MAP_FAILED) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	/* The rank's pid in DIR/pid-RANK, for a test that kills one rank. */
	snprintf(path, sizeof path, "%s/pid-%d", argv[1], rank);
	FILE *pf = fopen(path, "w");
	if (pf) {
		fprintf(pf, "%ld\n", (long)getpid());
		fclose(pf);
	}
	/* Started: the test waits for both counts to move before it strikes. */
	/* Each allreduce carries whether a rank's time is up, so that all stop after the same one. */
	double t0 = MPI_Wtime();
	for (uint64_t i = 1;; i++) {
		for (long k = 0; k < polls; k++) {
			int flag = 1;
			MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
			if (flag) {
				fprintf(stderr, "killed: a probe found a message that nobody sent\n");
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
			count[1]++;
		}
		double mine[2] = { rank + 1, MPI_Wtime() - t0 >= limit }, max[2];
		MPI_Allreduce(mine, max, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		*count = i;
		if (max[1] > 0)
			break;
		if (abort_after && rank == 0 && (long)i == abort_after)
			MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Finalize();
	return 0;
}
