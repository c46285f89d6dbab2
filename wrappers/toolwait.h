/* The tool's own waits on its communicator at MPI_Init and MPI_Finalize (clock sync, summary):
 * a nonblocking request completed by a test loop that spins briefly and then gives the CPU
 * away. MPICH's blocking calls spin until the scheduler preempts them, so ranks that share a CPU
 * hand each other a message only once per scheduler slice (4 ms here): at 4 ranks on 2 CPUs the
 * busy clock sync and summary added 1.2-1.8 s to every job. */
#ifndef WRAPPERS_TOOLWAIT_H
#define WRAPPERS_TOOLWAIT_H

#include <stdint.h>

#include <mpi.h>

/* How long a wait spins before it gives the CPU away: between two ranks on two free CPUs a
 * ping-pong takes 0.2-1 us here (the clock sync's best round trips, in the VM's fast and slow
 * states), so a message that has not come in 20 us waits for a rank that is not running. */
#define NT_TOOLWAIT_SPIN_NS 20000

/* Complete *request like PMPI_Wait: test it, spinning for spin_ns, then between tests yield the
 * CPU (or, while yields last long because a task that does not yield holds the CPU, nap 10 us
 * with 1 us of timer slack). Returns PMPI_Test's error code, MPI_SUCCESS when it completed.
 * Not thread-safe: for the thread in MPI_Init or MPI_Finalize. */
int nt_toolwait(MPI_Request *request, MPI_Status *status, uint64_t spin_ns);

/* The same for count requests, like PMPI_Waitall (statuses: count of them, or
 * MPI_STATUSES_IGNORE). */
int nt_toolwait_all(int count, MPI_Request requests[], MPI_Status *statuses, uint64_t spin_ns);

#endif /* WRAPPERS_TOOLWAIT_H */
