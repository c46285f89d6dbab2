/* Which MPI a job runs on, for `noisetool run`: the wrapper library to preload is the one built
 * for that MPI (libnoisetool-mpich.so, libnoisetool-ompi.so). */
#ifndef TOOLS_MPI_PICK_H
#define TOOLS_MPI_PICK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

enum mpi_kind { MPI_KIND_UNKNOWN, MPI_KIND_MPICH, MPI_KIND_OMPI };

struct mpi_pick {
	enum mpi_kind kind;
	bool ompi_launcher; /* CMD's first word is Open MPI's mpirun/mpiexec (it takes -x NAME) */
	char why[PATH_MAX + 96]; /* how it was found, for the line noisetool run prints */
};

/* "mpich" / "openmpi" / "ompi" -> the kind; MPI_KIND_UNKNOWN for anything else. */
enum mpi_kind mpi_kind_named(const char *name);

/* The MPI's name as users say it ("MPICH", "Open MPI") and the suffix of its wrapper library
 * ("mpich", "ompi"). */
const char *mpi_kind_title(enum mpi_kind kind);
const char *mpi_kind_lib(enum mpi_kind kind);

/* The MPI that CMD (job, NULL-terminated) runs on, in this order: the launcher (job[0],
 * resolved through PATH and symbolic links: mpiexec.hydra/mpiexec.mpich are MPICH's,
 * orterun/mpirun.openmpi/mpiexec.openmpi Open MPI's); else the libraries that job[0] or the
 * executables among its arguments were linked with (DT_NEEDED, the first that names an MPI:
 * libmpich* and libmpi.so.12 are MPICH's ABI, libmpi.so.4x Open MPI's); else
 * MPI_KIND_UNKNOWN. */
void mpi_pick(char *const *job, struct mpi_pick *out);

/* The wrapper library built for an MPI: beside this program (build tree: ../wrappers), else in
 * the installed library directory. 0, or -ENOENT with the last path tried in out. */
int mpi_library(enum mpi_kind kind, char *out, size_t size);

#endif
