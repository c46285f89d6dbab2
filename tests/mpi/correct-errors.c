/* MPI_ERRORS_RETURN on a fresh communicator whose first calls are erroneous (bad root, count
 * -1, bad rank, bad tag, null op; nonblocking and persistent ones too), then on MPI_COMM_NULL:
 * the error class of each on every rank, which must not depend on a tool. (MPICH 4.0.2 crashes
 * on MPI_Allreduce with count -1, so that one is not here.) */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "correct.h"

static void show(const char *what, int rc)
{
	int cls = MPI_SUCCESS;
	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	ct_report(what, cls);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0)
		printf("classes: root %d count %d rank %d tag %d op %d comm %d other %d\n",
		       MPI_ERR_ROOT, MPI_ERR_COUNT, MPI_ERR_RANK, MPI_ERR_TAG, MPI_ERR_OP,
		       MPI_ERR_COMM, MPI_ERR_OTHER);
	MPI_Comm c;
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	int x = rank + 1, y = 0;
	MPI_Request r = MPI_REQUEST_NULL;

	show("bcast bad root (first call)", MPI_Bcast(&x, 1, MPI_INT, size + 5, c));
	show("bcast count -1", MPI_Bcast(&x, -1, MPI_INT, 0, c));
	show("ibcast bad root", MPI_Ibcast(&x, 1, MPI_INT, -7, c, &r));
	show("iallreduce null op", MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, c, &r));
	show("iallreduce count -1", MPI_Iallreduce(&x, &y, -1, MPI_INT, MPI_SUM, c, &r));
#if MPI_VERSION >= 4 /* persistent collectives */
	show("allreduce_init null op",
	     MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, c, MPI_INFO_NULL, &r));
	show("bcast_init bad root", MPI_Bcast_init(&x, 1, MPI_INT, size, c, MPI_INFO_NULL, &r));
#endif
	show("reduce bad root", MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, -3, c));
	show("gather count -1", MPI_Gather(&x, -1, MPI_INT, &y, 1, MPI_INT, 0, c));
	show("send bad rank", MPI_Send(&x, 1, MPI_INT, size + 3, 0, c));
	show("send count -1", MPI_Send(&x, -1, MPI_INT, 0, 0, c));
	show("ssend bad tag", MPI_Ssend(&x, 1, MPI_INT, 0, -3, c));
	show("recv bad tag", MPI_Recv(&y, 1, MPI_INT, 0, -5, c, MPI_STATUS_IGNORE));
	show("isend bad rank", MPI_Isend(&x, 1, MPI_INT, -9, 0, c, &r));

	/* The communicator still works. */
	show("allreduce after errors", MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
	ct_report("allreduce after errors sum", y);
	MPI_Ibarrier(c, &r);
	show("wait after errors", MPI_Wait(&r, MPI_STATUS_IGNORE));
	MPI_Comm_free(&c);

	/* An error on MPI_COMM_NULL goes to MPI_COMM_WORLD's handler in MPICH. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	show("barrier on MPI_COMM_NULL", MPI_Barrier(MPI_COMM_NULL));
	show("ibarrier on MPI_COMM_NULL", MPI_Ibarrier(MPI_COMM_NULL, &r));
	MPI_Finalize();
	return 0;
}
