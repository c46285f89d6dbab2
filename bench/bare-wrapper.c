/* The floor for the overhead benchmark: an MPI_Allreduce wrapper that only reads the cycle
 * counter before and after the call and adds the difference to a total. Not part of the
 * product; it shows what two counter reads alone cost on this machine. */
#include <stdint.h>

#include <mpi.h>

#include <noisetool/clock.h>

uint64_t bare_total_cyc, bare_calls;

__attribute__((visibility("default"))) int MPI_Allreduce(const void *sendbuf, void *recvbuf,
							  int count, MPI_Datatype datatype,
							  MPI_Op op, MPI_Comm comm)
{
	uint64_t t0 = nt_clock_raw_cyc();
	int rc = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
	bare_total_cyc += nt_clock_raw_cyc() - t0;
	bare_calls++;
	return rc;
}
