/* Fortran entry points for Open MPI (fortran.c, and the ones gen-wrappers.py generates): Open
 * MPI's Fortran binding (libmpi_mpifh: mpif.h and `use mpi`) calls the PMPI_ C functions, so a
 * Fortran call never reaches the C wrappers. Ours pass the Fortran arguments untouched to the
 * binding's own pmpi_x_, found by dlsym on first use, and convert only the handles the tool
 * books (communicator, datatype, requests) with the MPI's f2c functions. MPICH's binding calls
 * the MPI_ C functions, which the C wrappers catch (binding.h); it gets none of these. */
#ifndef WRAPPERS_FORTRAN_H
#define WRAPPERS_FORTRAN_H

#include <mpi.h>

#include <noisetool/common.h>

/* Fortran's MPI_IN_PLACE: the address of a common block that libmpi defines. */
extern int mpi_fortran_in_place_;
#define NT_F_IN_PLACE ((void *)&mpi_fortran_in_place_)

/* The binding's entry point for name (pmpi_<name>_): the address of the function, on first use
 * found by dlsym(RTLD_NEXT); a process without it stops with a message (it cannot have called
 * the wrapper of a function its MPI does not have). */
void *nt_f_resolve(void **slot, const char *symbol);

static inline void *nt_f_real(void **slot, const char *symbol)
{
	void *f = __atomic_load_n(slot, __ATOMIC_RELAXED);
	return NT_LIKELY(f != NULL) ? f : nt_f_resolve(slot, symbol);
}

#define NT_F_REAL(name, ...)                                                                       \
	typedef void nt_f_##name##_t(__VA_ARGS__);                                                 \
	static void *nt_f_##name
#define NT_F_CALL(name, ...) ((nt_f_##name##_t *)nt_f_real(&nt_f_##name, "p" #name "_"))(__VA_ARGS__)

/* Fortran request handles -> C ones for the wait and test calls' book-keeping, in a per-thread
 * array (*c is pointed at it): n, or 0 when n is more than it holds (those calls are timed, the
 * completions in them not tracked: nbreqs.h counts what that leaves untimed). */
int nt_f_requests(const void *f, int n, MPI_Request **c);

/* A Fortran index (1-based) as C's, MPI_UNDEFINED staying. */
static inline int nt_f_index(MPI_Fint i)
{
	return i == MPI_UNDEFINED ? MPI_UNDEFINED : (int)i - 1;
}

/* Fortran's 1-based indices of a waitsome/testsome as C's, in a per-thread array; NULL when
 * outcount is MPI_UNDEFINED or more than it holds. */
const int *nt_f_indices(const void *f, MPI_Fint outcount);

#endif /* WRAPPERS_FORTRAN_H */
