! Frees that MPI refuses under MPI_ERRORS_RETURN, called from Fortran on every rank (Open MPI:
! through the noisetool library's own Fortran entry points; MPICH: through its C ones): the
! handles live on, and n allreduces on MPI_COMM_WORLD and on a duplicate follow. Prints each
! call's error class and the results, which must not depend on a tool.
program refused
  use mpi
  implicit none
  integer, parameter :: n = 50
  integer :: ierr, rank, cls, i, comm, dup, dtype, req, x, y, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
  comm = MPI_COMM_WORLD
  call MPI_Comm_free(comm, ierr)
  call show('comm_free MPI_COMM_WORLD', ierr)
  comm = MPI_COMM_SELF
  call MPI_Comm_free(comm, ierr)
  call show('comm_free MPI_COMM_SELF', ierr)
  comm = MPI_COMM_NULL
  call MPI_Comm_disconnect(comm, ierr)
  call show('comm_disconnect MPI_COMM_NULL', ierr)
  dtype = MPI_INTEGER
  call MPI_Type_free(dtype, ierr)
  call show('type_free MPI_INTEGER', ierr)
  req = MPI_REQUEST_NULL
  call MPI_Request_free(req, ierr)
  call show('request_free MPI_REQUEST_NULL', ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  total = 0
  x = rank + 1
  do i = 1, n
    call MPI_Allreduce(x, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    total = total + y
    call MPI_Allreduce(x, y, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
    total = total + y
  end do
  call MPI_Comm_free(dup, ierr)
  call show('comm_free', ierr)
  if (rank == 0) print '(a, i0)', 'result ', total
  call MPI_Finalize(ierr)
contains
  subroutine show(what, code)
    character(len=*), intent(in) :: what
    integer, intent(in) :: code
    integer :: e
    cls = MPI_SUCCESS
    if (code /= MPI_SUCCESS) call MPI_Error_class(code, cls, e)
    if (rank == 0) print '(a, a, i0)', what, ': class ', cls
  end subroutine show
end program refused
