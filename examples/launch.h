/* The launcher of the MPI an example is built with, for its help text: the bare mpiexec is
 * whichever MPI the alternatives point at. */
#ifndef EXAMPLES_LAUNCH_H
#define EXAMPLES_LAUNCH_H

#include <mpi.h>

#ifdef OPEN_MPI
#define EX_MPIEXEC "mpiexec.openmpi"
#define EX_BIND "--bind-to core"
#else
#define EX_MPIEXEC "mpiexec.mpich"
#define EX_BIND "-bind-to core"
#endif

#endif
