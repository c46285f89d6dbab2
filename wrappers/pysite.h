/* Python call sites: an MPI call made from a Python extension module (mpi4py) is sited at the
 * calling thread's innermost Python frame (file, line, function) instead of the extension's C
 * code, which is the same for every Python caller (doc/python.md). */
#ifndef WRAPPERS_PYSITE_H
#define WRAPPERS_PYSITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sites.h"

/* Bytes of the Python names' pool kept for a site table of capacity sites (arena.h: a part of
 * the sites' share of NOISETOOL_MEM). */
size_t nt_pysite_pool_bytes(size_t capacity);

/* At MPI_Init: whether this process runs a CPython this file can read (3.11, found with dlsym;
 * the library never links libpython). Any other Python: C call sites, and rank 0 says so in
 * one line on stderr. Not a Python process: nothing, and no cost on any call. */
void nt_pysite_init(int rank);

/* Keep the pool at mem (bytes long, zeroed; NULL: none), beside the site table (runtime.c). */
void nt_pysite_pool_init(void *mem, size_t bytes);

/* Whether ret lies inside a Python extension module (a module exporting PyInit_NAME), for a
 * readable Python: asked once per C call site, when it is created. */
bool nt_pysite_is_python(uintptr_t ret);

/* The site of the calling thread's innermost Python frame for a call to fn whose C site
 * c_site is inside a Python extension module; c_site when there is no Python frame or its
 * name does not fit in the pool (nt_pysite_unnamed counts those). Per call: a few loads and a
 * one-entry per-thread cache, else the site table's lock-free lookup. */
struct nt_site *nt_pysite_site(unsigned fn, struct nt_site *c_site);

/* A Python site's module name in the log ("python:FUNCTION:CALL:FILE", CALL the Python call
 * found in the bytecode at first sight, maybe empty), or NULL for another site. */
const char *nt_pysite_module(const struct nt_site *s);

/* Calls of Python call sites not told apart because the pool of names was full (or a name
 * longer than 4 KiB): counted at the extension's C site instead. */
uint64_t nt_pysite_unnamed(void);

#endif /* WRAPPERS_PYSITE_H */
