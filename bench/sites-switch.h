/* The call sites of the sites benchmark (generated: gen-sites-switch.py). */
#ifndef BENCH_SITES_SWITCH_H
#define BENCH_SITES_SWITCH_H

#include <mpi.h>

/* How many sites bench_site has. */
extern const int bench_sites_max;

/* An 8-byte MPI_SUM allreduce of *x into *y on comm, from call site i (0 <= i <
 * bench_sites_max; each i its own call instruction, so its own return address). */
int bench_site(int i, const double *x, double *y, MPI_Comm comm);

#endif
