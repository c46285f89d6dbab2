/* The functions that give MPI a callback of the application's that it may run inside a test
 * call: a generalized request's query and free functions (run when MPI_Test completes it), a
 * user error handler (run when a call on its communicator, window or file fails), a data
 * representation's conversion functions (run by nonblocking file I/O that a test call moves
 * on). An untimed test call has no reentry guard (call.h: nt_fast_untimed), so a call the
 * callback makes would be counted, where inside a timed one it is not: once the program has
 * registered one, every test call is timed (nt_callbacks_registered). Each passes its call
 * through and acts only when MPI accepted it. MPICH's MPIX_Grequest_start and its MPI-4 ones
 * that Open MPI 4.1 lacks (MPI_Session_create_errhandler, MPI_T_event_register_callback,
 * MPI_Register_datarep_c) are not wrapped (doc/overhead.md). */
#include <mpi.h>

#include "call.h"

static int registered(int rc)
{
	if (rc == MPI_SUCCESS)
		nt_callbacks_registered();
	return rc;
}

NT_MPI_API int MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
				  MPI_Grequest_free_function *free_fn,
				  MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
				  MPI_Request *request)
{
	return registered(PMPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, request));
}

NT_MPI_API int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn,
					  MPI_Errhandler *errhandler)
{
	return registered(PMPI_Comm_create_errhandler(fn, errhandler));
}

NT_MPI_API int MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn,
					 MPI_Errhandler *errhandler)
{
	return registered(PMPI_Win_create_errhandler(fn, errhandler));
}

NT_MPI_API int MPI_File_create_errhandler(MPI_File_errhandler_function *fn,
					  MPI_Errhandler *errhandler)
{
	return registered(PMPI_File_create_errhandler(fn, errhandler));
}

NT_MPI_API int MPI_Register_datarep(const char *datarep,
				    MPI_Datarep_conversion_function *read_conversion_fn,
				    MPI_Datarep_conversion_function *write_conversion_fn,
				    MPI_Datarep_extent_function *dtype_file_extent_fn,
				    void *extra_state)
{
	return registered(PMPI_Register_datarep(datarep, read_conversion_fn, write_conversion_fn,
						dtype_file_extent_fn, extra_state));
}
