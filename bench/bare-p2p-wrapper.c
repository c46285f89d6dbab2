/* The floor for the point-to-point latency benchmark: MPI_Send and MPI_Recv wrappers that only
 * read the cycle counter before and after the call and add the difference to a total, as
 * bare-wrapper.c does for MPI_Allreduce. Not part of the product. */
#include <stdint.h>

#include <mpi.h>

#include <noisetool/clock.h>

uint64_t bare_p2p_total_cyc, bare_p2p_calls;

__attribute__((visibility("default"))) int MPI_Send(const void *buf, int count,
						     MPI_Datatype datatype, int dest, int tag,
						     MPI_Comm comm)
{
	uint64_t t0 = nt_clock_raw_cyc();
	int rc = PMPI_Send(buf, count, datatype, dest, tag, comm);
	bare_p2p_total_cyc += nt_clock_raw_cyc() - t0;
	bare_p2p_calls++;
	return rc;
}

__attribute__((visibility("default"))) int MPI_Recv(void *buf, int count, MPI_Datatype datatype,
						     int source, int tag, MPI_Comm comm,
						     MPI_Status *status)
{
	uint64_t t0 = nt_clock_raw_cyc();
	int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, status);
	bare_p2p_total_cyc += nt_clock_raw_cyc() - t0;
	bare_p2p_calls++;
	return rc;
}
