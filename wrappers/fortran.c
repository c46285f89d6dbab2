/* Fortran entry points for Open MPI (fortran.h): the calls written by hand (init, finalize,
 * abort, pcontrol, the frees of handles, the functions that give MPI a callback) around the
 * binding's own, and the helpers the
 * generated ones use. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "call.h"
#include "fortran.h"
#include "runtime.h"

void *nt_f_resolve(void **slot, const char *symbol)
{
	void *f = dlsym(RTLD_NEXT, symbol);
	if (!f) {
		fprintf(stderr, "noisetool: %s is not in this process's MPI Fortran library: %s\n",
			symbol, dlerror());
		abort();
	}
	__atomic_store_n(slot, f, __ATOMIC_RELAXED);
	return f;
}

#define NT_F_MAX 1024 /* requests and indices converted per call */
static NT_TLS MPI_Request f_requests[NT_F_MAX];
static NT_TLS int f_indices[NT_F_MAX];

int nt_f_requests(const void *f, int n, MPI_Request **c)
{
	*c = f_requests;
	if (n <= 0 || n > NT_F_MAX)
		return 0;
	const MPI_Fint *fr = f;
	for (int i = 0; i < n; i++)
		f_requests[i] = MPI_Request_f2c(fr[i]);
	return n;
}

const int *nt_f_indices(const void *f, MPI_Fint outcount)
{
	if (outcount == MPI_UNDEFINED || outcount < 0 || outcount > NT_F_MAX)
		return NULL;
	const MPI_Fint *fi = f;
	for (int i = 0; i < outcount; i++)
		f_indices[i] = (int)fi[i] - 1;
	return f_indices;
}

NT_MPI_API void mpi_init_(MPI_Fint *ierr);
NT_MPI_API void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
NT_MPI_API void mpi_finalize_(MPI_Fint *ierr);
NT_MPI_API void mpi_abort_(MPI_Fint *comm, MPI_Fint *code, MPI_Fint *ierr);
NT_MPI_API void mpi_pcontrol_(MPI_Fint *level);
NT_MPI_API void mpi_comm_free_(MPI_Fint *comm, MPI_Fint *ierr);
NT_MPI_API void mpi_comm_disconnect_(MPI_Fint *comm, MPI_Fint *ierr);
NT_MPI_API void mpi_type_free_(MPI_Fint *type, MPI_Fint *ierr);
NT_MPI_API void mpi_request_free_(MPI_Fint *request, MPI_Fint *ierr);
/* The functions that give MPI a callback (callbacks.c), their arguments passed through as they
 * came (register_datarep's last, the length of its string, as gfortran passes it). */
NT_MPI_API void mpi_grequest_start_(void *query_fn, void *free_fn, void *cancel_fn,
				    void *extra_state, MPI_Fint *request, MPI_Fint *ierr);
NT_MPI_API void mpi_comm_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr);
NT_MPI_API void mpi_win_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr);
NT_MPI_API void mpi_file_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr);
NT_MPI_API void mpi_register_datarep_(char *datarep, void *read_fn, void *write_fn,
				      void *extent_fn, void *extra_state, MPI_Fint *ierr,
				      size_t datarep_len);

NT_F_REAL(mpi_init, MPI_Fint *);
NT_F_REAL(mpi_init_thread, MPI_Fint *, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_finalize, MPI_Fint *);
NT_F_REAL(mpi_abort, MPI_Fint *, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_pcontrol, MPI_Fint *);
NT_F_REAL(mpi_comm_free, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_comm_disconnect, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_type_free, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_request_free, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_grequest_start, void *, void *, void *, void *, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_comm_create_errhandler, void *, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_win_create_errhandler, void *, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_file_create_errhandler, void *, MPI_Fint *, MPI_Fint *);
NT_F_REAL(mpi_register_datarep, char *, void *, void *, void *, void *, MPI_Fint *, size_t);

NT_MPI_API void mpi_init_(MPI_Fint *ierr)
{
	nt_init_begin();
	NT_F_CALL(mpi_init, ierr);
	int provided = MPI_THREAD_SINGLE;
	if (*ierr == MPI_SUCCESS)
		PMPI_Query_thread(&provided);
	nt_init_end((int)*ierr, provided);
}

NT_MPI_API void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	nt_init_begin();
	NT_F_CALL(mpi_init_thread, required, provided, ierr);
	nt_init_end((int)*ierr, *ierr == MPI_SUCCESS ? (int)*provided : MPI_THREAD_SINGLE);
}

NT_MPI_API void mpi_finalize_(MPI_Fint *ierr)
{
	nt_finalize_begin();
	NT_F_CALL(mpi_finalize, ierr);
}

NT_MPI_API void mpi_abort_(MPI_Fint *comm, MPI_Fint *code, MPI_Fint *ierr)
{
	nt_abort_begin((int)*code);
	NT_F_CALL(mpi_abort, comm, code, ierr);
}

NT_MPI_API void mpi_pcontrol_(MPI_Fint *level)
{
	nt_pcontrol((int)*level);
	NT_F_CALL(mpi_pcontrol, level);
}

NT_MPI_API void mpi_comm_free_(MPI_Fint *comm, MPI_Fint *ierr)
{
	MPI_Comm c = MPI_Comm_f2c(*comm);
	struct nt_comm_ref ref = nt_comm_freeing(c);
	NT_F_CALL(mpi_comm_free, comm, ierr);
	nt_comm_freed(c, ref, (int)*ierr);
}

NT_MPI_API void mpi_comm_disconnect_(MPI_Fint *comm, MPI_Fint *ierr)
{
	MPI_Comm c = MPI_Comm_f2c(*comm);
	struct nt_comm_ref ref = nt_comm_freeing(c);
	NT_F_CALL(mpi_comm_disconnect, comm, ierr);
	nt_comm_freed(c, ref, (int)*ierr);
}

NT_MPI_API void mpi_type_free_(MPI_Fint *type, MPI_Fint *ierr)
{
	MPI_Datatype t = MPI_Type_f2c(*type);
	NT_F_CALL(mpi_type_free, type, ierr);
	nt_type_freed(t, (int)*ierr);
}

NT_MPI_API void mpi_request_free_(MPI_Fint *request, MPI_Fint *ierr)
{
	MPI_Request r = MPI_Request_f2c(*request);
	struct nt_request_ref ref = nt_request_freeing(r);
	NT_F_CALL(mpi_request_free, request, ierr);
	nt_request_freed(r, ref, (int)*ierr);
}

static void f_registered(const MPI_Fint *ierr)
{
	if (*ierr == MPI_SUCCESS)
		nt_callbacks_registered();
}

NT_MPI_API void mpi_grequest_start_(void *query_fn, void *free_fn, void *cancel_fn,
				    void *extra_state, MPI_Fint *request, MPI_Fint *ierr)
{
	NT_F_CALL(mpi_grequest_start, query_fn, free_fn, cancel_fn, extra_state, request, ierr);
	f_registered(ierr);
}

NT_MPI_API void mpi_comm_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr)
{
	NT_F_CALL(mpi_comm_create_errhandler, fn, errhandler, ierr);
	f_registered(ierr);
}

NT_MPI_API void mpi_win_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr)
{
	NT_F_CALL(mpi_win_create_errhandler, fn, errhandler, ierr);
	f_registered(ierr);
}

NT_MPI_API void mpi_file_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr)
{
	NT_F_CALL(mpi_file_create_errhandler, fn, errhandler, ierr);
	f_registered(ierr);
}

NT_MPI_API void mpi_register_datarep_(char *datarep, void *read_fn, void *write_fn,
				      void *extent_fn, void *extra_state, MPI_Fint *ierr,
				      size_t datarep_len)
{
	NT_F_CALL(mpi_register_datarep, datarep, read_fn, write_fn, extent_fn, extra_state, ierr,
		  datarep_len);
	f_registered(ierr);
}
