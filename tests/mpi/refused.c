/* Calls that MPI refuses under MPI_ERRORS_RETURN, on every rank alike, among correct work: the
 * frees of MPI_COMM_WORLD, MPI_COMM_SELF and handles MPI will not free, a free stopped by an
 * attribute's delete callback, refused constructors, refused nonblocking and persistent starts
 * whose request variable still holds a live request, a refused blocking collective. A tool must
 * leave every handle MPI kept alive as it was: the program then does N rounds of collectives on
 * each communicator and prints each call's error class and the results, which must not depend
 * on a tool. Knows nothing of noisetool; test-refused.sh counts the calls in its report.
 *
 *   refused [N]    N rounds (default 50) */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static int refuse_delete = 1; /* the attribute's delete callback refuses while set */

static int delete_attr(MPI_Comm comm, int key, void *value, void *extra)
{
	(void)comm, (void)key, (void)value, (void)extra;
	return refuse_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* Rank 0 prints what the call returned: its error class, the same on every rank. */
static void show(const char *what, int rc)
{
	int rank, cls = MPI_SUCCESS;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	if (rank == 0)
		printf("%-36s %s class %d\n", what, rc == MPI_SUCCESS ? "ok " : "err", cls);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int n = argc > 1 ? atoi(argv[1]) : 50;
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	int x = rank + 1, y = 0;

	/* Frees MPI refuses: the handles live on. */
	MPI_Comm world = MPI_COMM_WORLD, self = MPI_COMM_SELF, null = MPI_COMM_NULL;
	show("comm_free MPI_COMM_WORLD", MPI_Comm_free(&world));
	show("comm_free MPI_COMM_SELF", MPI_Comm_free(&self));
	show("comm_free MPI_COMM_NULL", MPI_Comm_free(&null));
	null = MPI_COMM_NULL;
	show("comm_disconnect MPI_COMM_NULL", MPI_Comm_disconnect(&null));
	MPI_Datatype type = MPI_INT;
	show("type_free MPI_INT", MPI_Type_free(&type));
	MPI_Request none = MPI_REQUEST_NULL;
	show("request_free MPI_REQUEST_NULL", MPI_Request_free(&none));
	none = MPI_REQUEST_NULL;
	show("start MPI_REQUEST_NULL", MPI_Start(&none));

	/* A free stopped by the attribute's delete callback: the communicator lives on. */
	int key;
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attr, &key, NULL);
	MPI_Comm kept;
	MPI_Comm_dup(MPI_COMM_WORLD, &kept);
	MPI_Comm_set_errhandler(kept, MPI_ERRORS_RETURN);
	MPI_Comm_set_attr(kept, key, NULL);
	MPI_Comm copy = kept;
	show("comm_free refused by its attribute", MPI_Comm_free(&copy));

	/* Refused constructors make nothing: the next one is the parent's next child. */
	MPI_Comm made = MPI_COMM_NULL;
	MPI_Request r = MPI_REQUEST_NULL;
	show("comm_dup MPI_COMM_NULL", MPI_Comm_dup(MPI_COMM_NULL, &made));
	show("comm_idup MPI_COMM_NULL", MPI_Comm_idup(MPI_COMM_NULL, &made, &r));
	show("comm_create MPI_GROUP_NULL", MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &made));
	int dims[1] = { 1 }, periods[1] = { 0 };
	show("cart_create ndims -1", MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &made));
	MPI_Comm dup;
	show("comm_dup after them", MPI_Comm_dup(MPI_COMM_WORLD, &dup));

	/* A refused blocking collective, and refused starts whose request variable still holds a
	 * live request (MPI leaves it as it was). */
	show("bcast bad root", MPI_Bcast(&x, 1, MPI_INT, -7, MPI_COMM_WORLD));
	MPI_Request live;
	MPI_Ibarrier(MPI_COMM_WORLD, &live);
	r = live;
	show("ibcast bad root over a live request", MPI_Ibcast(&x, 1, MPI_INT, -7, MPI_COMM_WORLD, &r));
	show("wait for the live request", MPI_Wait(&live, MPI_STATUS_IGNORE));
#if MPI_VERSION >= 4 /* persistent collectives */
	MPI_Request pers;
	int b = 0;
	MPI_Bcast_init(&b, 1, MPI_INT, 0, kept, MPI_INFO_NULL, &pers);
	r = pers;
	show("allreduce_init null op over a live one",
	     MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, kept, MPI_INFO_NULL, &r));
#endif

	/* The work: every handle MPI kept is still there. */
	long sum = 0;
	for (int i = 0; i < n; i++) {
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		sum += y;
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, kept);
		sum += y;
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup);
		sum += y;
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
		sum += y;
		MPI_Ibarrier(MPI_COMM_WORLD, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
#if MPI_VERSION >= 4
		b = rank == 0 ? i : -1;
		MPI_Start(&pers);
		MPI_Wait(&pers, MPI_STATUS_IGNORE);
		sum += b;
#endif
	}
#if MPI_VERSION >= 4
	MPI_Request_free(&pers);
#endif
	show("comm_free", MPI_Comm_free(&dup));
	refuse_delete = 0;
	show("comm_free of the attribute's", MPI_Comm_free(&kept));
	MPI_Comm_free_keyval(&key);
	long all = 0;
	MPI_Reduce(&sum, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("rounds %d sum %ld\n", n, all);
	return MPI_Finalize();
}
