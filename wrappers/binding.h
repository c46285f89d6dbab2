/* Calls that reach the C entry points through a language binding (MPICH's Fortran library
 * libmpichfort, Open MPI's libmpi_mpifh): their return address is inside the binding, the same
 * for every caller, so the real call site is found on the stack, past the binding. */
#ifndef WRAPPERS_BINDING_H
#define WRAPPERS_BINDING_H

#include <stdbool.h>
#include <stdint.h>

/* Record the address ranges of the binding libraries and of this library (at MPI_Init). */
void nt_binding_init(void);

/* True when addr lies in a binding library. */
bool nt_binding_contains(uintptr_t addr);

/* The first return address on the calling thread's stack outside this library and the
 * bindings: the program's own call site; 0 when it cannot be found. */
uintptr_t nt_binding_caller(void);

#endif /* WRAPPERS_BINDING_H */
