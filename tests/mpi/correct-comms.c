/* Every communicator constructor, intercommunicators included, then a collective on each new
 * communicator and a free of each. Meant for 4 ranks (MPI_UNDEFINED in the split needs 3 or
 * more); rank 0 prints every rank's results in rank order. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "correct.h"

static int world_rank, world_size;

/* A collective on COMM (which may be MPI_COMM_NULL on this rank): the sum of the world ranks of
 * its members, or -1 on ranks outside it. */
static long rank_sum(MPI_Comm comm)
{
	if (comm == MPI_COMM_NULL)
		return -1;
	long mine = world_rank, sum = 0;
	MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm);
	return sum;
}

/* rank_sum, reported, then the communicator freed. */
static void check_and_free(const char *what, MPI_Comm *comm)
{
	ct_report(what, rank_sum(*comm));
	if (*comm != MPI_COMM_NULL)
		MPI_Comm_free(comm);
}

static void dups(void)
{
	MPI_Comm c;
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	check_and_free("dup", &c);

	MPI_Info info;
	MPI_Info_create(&info);
	MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
	MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
	check_and_free("dup_with_info", &c);

	/* Nonblocking dup with a 1 MiB exchange between its start and its wait; the new
	 * communicator is used only after the wait. */
	MPI_Request r;
	MPI_Comm_idup(MPI_COMM_WORLD, &c, &r);
	long got = ct_exchange(MPI_COMM_WORLD, 1);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	ct_report("idup exchange", got);
	check_and_free("idup", &c);

	/* Two nonblocking dups of different parents, started in opposite orders. */
	MPI_Comm parent, c2;
	MPI_Comm_dup(MPI_COMM_WORLD, &parent);
	MPI_Request two[2];
	MPI_Status st[2];
#if MPI_VERSION < 4 /* MPI_Comm_idup_with_info is MPI 4 */
#define MPI_Comm_idup_with_info(comm, info_, newcomm, req) MPI_Comm_idup(comm, newcomm, req)
#endif
	if (world_rank % 2 == 0) {
		MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c, &two[0]);
		MPI_Comm_idup(parent, &c2, &two[1]);
	} else {
		MPI_Comm_idup(parent, &c2, &two[1]);
		MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c, &two[0]);
	}
	MPI_Waitall(2, two, st);
	check_and_free("idup_with_info", &c);
	check_and_free("idup of a dup", &c2);
	MPI_Comm_free(&parent);
	MPI_Info_free(&info);
}

static void splits(void)
{
	MPI_Comm c;
	/* Colours by parity, the last rank out (when there are 3 or more), keys reversed. */
	int colour = world_rank % 2;
	if (world_size >= 3 && world_rank == world_size - 1)
		colour = MPI_UNDEFINED;
	MPI_Comm_split(MPI_COMM_WORLD, colour, -world_rank, &c);
	int sub_rank = -1;
	if (c != MPI_COMM_NULL)
		MPI_Comm_rank(c, &sub_rank);
	ct_report("split rank", sub_rank);
	check_and_free("split", &c);

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c);
	int shared_size = 0;
	MPI_Comm_size(c, &shared_size);
	/* All ranks of these tests run on one node. */
	ct_report("split_type shared size", shared_size);
	check_and_free("split_type shared", &c);

	/* Comm_create: the even world ranks; the others get MPI_COMM_NULL. */
	MPI_Group world_group, evens;
	MPI_Comm_group(MPI_COMM_WORLD, &world_group);
	int range[1][3] = { { 0, world_size - 1, 2 } };
	MPI_Group_range_incl(world_group, 1, range, &evens);
	MPI_Comm_create(MPI_COMM_WORLD, evens, &c);
	check_and_free("create evens", &c);

	/* Comm_create_group: only the members (all but the last rank, or both of 2) call it. */
	MPI_Group firsts;
	int n = world_size >= 3 ? world_size - 1 : world_size;
	int first_range[1][3] = { { 0, n - 1, 1 } };
	MPI_Group_range_incl(world_group, 1, first_range, &firsts);
	c = MPI_COMM_NULL;
	if (world_rank < n)
		MPI_Comm_create_group(MPI_COMM_WORLD, firsts, 42, &c);
	check_and_free("create_group", &c);
	MPI_Group_free(&firsts);
	MPI_Group_free(&evens);
	MPI_Group_free(&world_group);
}

static void intercomms(void)
{
	/* Two halves: the lower and the upper half of the world ranks. */
	int half = world_size / 2, upper = world_rank >= half;
	MPI_Comm local, inter, merged;
	MPI_Comm_split(MPI_COMM_WORLD, upper, world_rank, &local);
	MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, upper ? 0 : half, 99, &inter);
	int remote_size = 0;
	MPI_Comm_remote_size(inter, &remote_size);
	ct_report("intercomm remote size", remote_size);

	/* Allreduce on an intercommunicator: each group gets the other group's sum. */
	long mine = world_rank, other = 0;
	MPI_Allreduce(&mine, &other, 1, MPI_LONG, MPI_SUM, inter);
	ct_report("intercomm allreduce", other);

	/* Bcast from the lower group's first rank to the whole upper group. */
	int local_rank;
	MPI_Comm_rank(local, &local_rank);
	long value = upper ? -1 : 4242;
	int root = upper ? 0 : local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
	MPI_Bcast(&value, 1, MPI_LONG, root, inter);
	ct_report("intercomm bcast", value);

	/* And the other way, nonblocking. */
	value = upper ? 777 : -1;
	root = upper ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
	MPI_Request r;
	MPI_Ibcast(&value, 1, MPI_LONG, root, inter, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	ct_report("intercomm ibcast", value);

	MPI_Barrier(inter);

	MPI_Intercomm_merge(inter, upper, &merged);
	int merged_rank;
	MPI_Comm_rank(merged, &merged_rank);
	ct_report("merge rank", merged_rank);
	check_and_free("merge", &merged);
	MPI_Comm_free(&inter);
	MPI_Comm_free(&local);
}

static void topologies(void)
{
	/* A 2-D periodic grid, then its rows. */
	int dims[2] = { 0, 0 }, periods[2] = { 1, 1 }, keep[2] = { 0, 1 };
	MPI_Dims_create(world_size, 2, dims);
	MPI_Comm cart, row;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	int coords[2];
	MPI_Cart_coords(cart, world_rank, 2, coords);
	ct_report("cart coords", coords[0] * 100 + coords[1]);
	MPI_Cart_sub(cart, keep, &row);
	check_and_free("cart_sub row", &row);
	check_and_free("cart", &cart);

	/* A ring as a graph. */
	int *index = malloc(world_size * sizeof *index), *edges = malloc(2 * world_size * sizeof *edges);
	for (int i = 0; i < world_size; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = (i + world_size - 1) % world_size;
		edges[2 * i + 1] = (i + 1) % world_size;
	}
	MPI_Comm graph;
	MPI_Graph_create(MPI_COMM_WORLD, world_size, index, edges, 0, &graph);
	check_and_free("graph", &graph);
	free(index);
	free(edges);

	/* A ring as a distributed graph: each rank names its edge to the right. */
	int right = (world_rank + 1) % world_size, left = (world_rank + world_size - 1) % world_size;
	int one = 1;
	MPI_Comm dist;
	/* Open MPI's MPI_UNWEIGHTED is a sentinel address, which GCC takes for an empty array. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
	MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &world_rank, &one, &right, MPI_UNWEIGHTED,
			      MPI_INFO_NULL, 0, &dist);
	check_and_free("dist_graph", &dist);

	/* The same ring by adjacency, and a neighbour collective on it. */
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right,
				       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist);
	int from_left = -1;
	MPI_Neighbor_allgather(&world_rank, 1, MPI_INT, &from_left, 1, MPI_INT, dist);
#pragma GCC diagnostic pop
	ct_report("dist_graph_adjacent neighbour", from_left);
	MPI_Request r;
	int from_left2 = -1, sent = world_rank * 10;
	MPI_Ineighbor_alltoall(&sent, 1, MPI_INT, &from_left2, 1, MPI_INT, dist, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	ct_report("dist_graph_adjacent ineighbour", from_left2);
	check_and_free("dist_graph_adjacent", &dist);
}

/* MPI 4: a communicator from a group of a session's "mpi://WORLD" process set. */
static void from_group(void)
{
#if MPI_VERSION >= 4
	MPI_Session session;
	MPI_Group group;
	MPI_Comm c = MPI_COMM_NULL;
	int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session), have_session = !rc;
	if (rc == MPI_SUCCESS)
		rc = MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
	if (rc == MPI_SUCCESS) {
		rc = MPI_Comm_create_from_group(group, "org.noisetool.correct-comms", MPI_INFO_NULL,
						MPI_ERRORS_RETURN, &c);
		MPI_Group_free(&group);
	}
	ct_report("create_from_group rc", rc == MPI_SUCCESS ? 0 : 1);
	check_and_free("create_from_group", &c);
	if (have_session)
		MPI_Session_finalize(&session);
#else
	ct_report("create_from_group: not declared by this mpi.h (MPI < 4)", 0);
#endif
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &world_size);
	dups();
	splits();
	intercomms();
	topologies();
	from_group();
	MPI_Finalize();
	return 0;
}
