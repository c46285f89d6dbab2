! Allreduce with MPI_IN_PLACE from Fortran: the result must be identical with and without the
! noisetool library, and the calls recorded: through the C entry points (MPICH) or the library's own
! Fortran entry points (Open MPI, whose binding calls PMPI_ directly).
program inplace
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i
  double precision :: x(4)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  do i = 1, 4
    x(i) = dble(rank + 1) * dble(i)
  end do
  do i = 1, 100
    call MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    x = x / dble(nprocs)
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write(*, '(A, 4F14.6)') 'result', x
  end if
  call MPI_Finalize(ierr)
end program inplace
