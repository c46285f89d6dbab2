/* The floor of the benchmarks and of the instruction test (tests/mpi/test-insn.sh): wrappers of
 * MPI_Allreduce, MPI_Send, MPI_Recv, MPI_Wait, MPI_Test and MPI_Iprobe that only read the cycle
 * counter before and after the call and add the difference to a total. Built with
 * BARE_APP_CALLS (libbare-app-wrapper, bench-app.sh's floor), also of the other calls real
 * applications make by the million (HPCC's MPIRandomAccess polls with MPI_Testany), so that an
 * application's bare run pays the floor where the tool's run does; not in the instruction
 * test's floor, whose loops post receives to time sends and waits. Not part of the product:
 * what two counter reads alone cost on this machine. */
#include <stdint.h>

#include <mpi.h>

#include <noisetool/clock.h>

uint64_t bare_calls_total_cyc, bare_calls;

#define BARE(call)                                             \
	do {                                                   \
		uint64_t t0 = nt_clock_raw_cyc();              \
		int rc = call;                                 \
		bare_calls_total_cyc += nt_clock_raw_cyc() - t0; \
		bare_calls++;                                  \
		return rc;                                     \
	} while (0)

#define BARE_API __attribute__((visibility("default")))

BARE_API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			   MPI_Op op, MPI_Comm comm)
{
	BARE(PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

BARE_API int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		      MPI_Comm comm)
{
	BARE(PMPI_Send(buf, count, datatype, dest, tag, comm));
}

BARE_API int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
		      MPI_Comm comm, MPI_Status *status)
{
	BARE(PMPI_Recv(buf, count, datatype, source, tag, comm, status));
}

BARE_API int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	BARE(PMPI_Wait(request, status));
}

BARE_API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	BARE(PMPI_Test(request, flag, status));
}

BARE_API int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	BARE(PMPI_Iprobe(source, tag, comm, flag, status));
}

#ifdef BARE_APP_CALLS
BARE_API int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
			 MPI_Status *status)
{
	BARE(PMPI_Testany(count, requests, index, flag, status));
}

BARE_API int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
			  MPI_Status statuses[])
{
	BARE(PMPI_Testsome(incount, requests, outcount, indices, statuses));
}

BARE_API int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	BARE(PMPI_Testall(count, requests, flag, statuses));
}

BARE_API int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	BARE(PMPI_Waitany(count, requests, index, status));
}

BARE_API int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	BARE(PMPI_Waitall(count, requests, statuses));
}

BARE_API int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		       MPI_Comm comm, MPI_Request *request)
{
	BARE(PMPI_Isend(buf, count, datatype, dest, tag, comm, request));
}

BARE_API int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
		       MPI_Comm comm, MPI_Request *request)
{
	BARE(PMPI_Irecv(buf, count, datatype, source, tag, comm, request));
}
#endif
