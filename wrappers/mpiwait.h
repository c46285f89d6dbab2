/* Adaptive MPI waits (NOISETOOL_WAIT): instead of MPICH's own busy progress, a blocking call
 * may be started nonblocking and completed by a test loop that sleeps between tests while the
 * CPU is shared (often by the job's own ranks: more ranks than cores). The choice is the
 * polling library's adaptive one: spin (then the blocking call itself runs, unchanged) while
 * the CPU is free, and on a shared CPU whichever of spinning and sleeping gives shorter calls.
 * Only the thread that called MPI_Init waits this way. */
#ifndef WRAPPERS_MPIWAIT_H
#define WRAPPERS_MPIWAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <noisetool/common.h>
#include <noisetool/ntlog.h>

/* The log's codes (noisetool/ntlog.h, NT_LOG_WAIT_MODES), which the log and live files keep. */
enum nt_wait_mode {
	NT_WAIT_MPI = NT_LOG_WAIT_MPI,     /* the MPI's own blocking calls (default;
					    * NOISETOOL_WAIT=mpi or mpich) */
	NT_WAIT_BUSY = NT_LOG_WAIT_BUSY,   /* nonblocking call + a spinning test loop */
	NT_WAIT_ADAPTIVE = NT_LOG_WAIT_ADAPTIVE, /* the adaptive choice */
	NT_WAIT_SLEEP = NT_LOG_WAIT_SLEEP, /* nonblocking call + a test loop that naps between
					    * tests */
};

extern int nt_wait_mode_;
/* The waiting thread's counter value until which its CPU counts as free (0: not free, or
 * another thread); lets the wrappers skip the out-of-line check. */
extern __thread __attribute__((tls_model("initial-exec"))) uint64_t nt_wait_spin_until_cyc_;

/* Set up for the calling thread. 0, or -errno (the mode is then MPICH's own). */
int nt_mpiwait_start(enum nt_wait_mode mode);

/* At MPI_Init, once the ranks of the node compared their CPUs: more ranks of this job than CPUs
 * share this rank's. Adaptive waits then hold to sleeping (a yield, or a nap when yields are
 * long) and never try spinning: the CPU is never the rank's alone, and a spinning trial, or a
 * spell of spinning while every rank beside it also waited and the CPU read as free, took the
 * CPU from a rank beside it that had work. */
void nt_mpiwait_crowded(bool crowded);

/* At MPI_Init: whether more ranks of the job than this rank's CPUs (cpus[0..ncpus), its
 * affinity) have an affinity that meets them. The job's ranks on this node are the processes
 * its launcher started here: those with this process's parent (hydra's proxy, Open MPI's
 * daemon, slurmstepd), read from /proc with their affinity (sched_getaffinity). No message:
 * an allgather on the tool's communicator took 32 Open MPI ranks on 2 CPUs ~1 MiB each past
 * the library's budget at their peak, a node communicator (MPI_Comm_split_type) as much under
 * MPICH. False when ncpus is 0 (the affinity unknown), the parent is init (no launcher to
 * go by), or /proc cannot be read. */
bool nt_mpiwait_cpus_crowded(const int *cpus, int ncpus);
void nt_mpiwait_stop(void);

/* Whether the blocking call about to start at t0_cyc should run as it is. */
bool nt_mpiwait_blocking(uint64_t t0_cyc);

/* The same for a collective instance on comm: its members start their collectives the same way
 * (nonblocking when any of them prefers to sleep), as they voted at the vote before the last
 * one. A vote (votes.h: messages on the tool's own communicator, never on comm) is started
 * before a blocking instance and finished at the next vote (where every member has long
 * arrived, or for a communicator of more than 32 members may wait for every member to arrive:
 * a correct program cannot tell either from a collective that synchronizes). Votes come
 * every 16 instances, twice as far apart each time the outcome stays the same, up to 1024. A
 * communicator without a vote (made by a nonblocking or group constructor, an
 * intercommunicator, MPI_COMM_SELF, one member) keeps MPICH's blocking calls. *t0_cyc is read
 * again after a vote. Any thread may call it. */
bool nt_mpiwait_coll_blocking(MPI_Comm comm, uint64_t *t0_cyc);

/* Wait for request (started with rc) by the test loop; status may be MPI_STATUS_IGNORE. */
int nt_mpiwait_request(int rc, MPI_Request *request, MPI_Status *status);
int nt_mpiwait_wait(MPI_Request *request, MPI_Status *status);
int nt_mpiwait_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);

/* Between two tests of a wait: give the CPU away as the waits do (the tool's own waits for a
 * vote). */
void nt_mpiwait_pause(void);

/* A wrapped call ended, not a poll: the cycle since the previous one counts for the adaptive
 * choice. A poll (a test call that found nothing) is no cycle: in a polling loop every poll
 * would be one, a few us apart while spinning and a nap's length apart while napping, and the
 * choice would weigh the loop's own pace instead of the program's progress. */
void nt_mpiwait_after(void);

/* A wrapped call ended after phase_cyc of the program's own time; polled: it was a test call
 * that found nothing. A program's polling loop waits between its polls as the wait loop does
 * between its tests, on the waiting thread; returns the cycles that waiting took (0: none). */
uint64_t nt_mpiwait_polled(bool polled, uint64_t phase_cyc);

/* Telemetry line for the summary, or "" when off. */
void nt_mpiwait_describe(char *buf, size_t size);

#endif /* WRAPPERS_MPIWAIT_H */
