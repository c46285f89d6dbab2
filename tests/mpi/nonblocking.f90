! Nonblocking collectives from Fortran on a communicator made by MPI_Comm_split, completed by
! MPI_Wait, MPI_Waitall, an MPI_Testany loop and an MPI_Waitsome loop: the results must be
! identical with and without the noisetool library, and every start is a timed instance at its
! own line (Open MPI: the library's Fortran entry points convert the requests and indices).
program nonblocking
  use mpi
  implicit none
  integer, parameter :: n = 50
  integer :: ierr, rank, nprocs, sub, i, idx, done, total
  integer :: req(3), indices(3)
  logical :: flag
  double precision :: x, sum1, sum2, mx
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - rank, sub, ierr)
  total = 0
  do i = 1, n
    x = dble(rank + i)
    call MPI_Iallreduce(x, sum1, 1, MPI_DOUBLE_PRECISION, MPI_SUM, sub, req(1), ierr) ! site W
    call MPI_Wait(req(1), MPI_STATUS_IGNORE, ierr)
    call MPI_Ibarrier(sub, req(1), ierr) ! site A
    call MPI_Iallreduce(x, mx, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, req(2), ierr) ! site B
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    call MPI_Iallreduce(x, sum2, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req(1), ierr) ! site T
    flag = .false.
    do while (.not. flag)
      call MPI_Testany(1, req, idx, flag, MPI_STATUS_IGNORE, ierr)
    end do
    call MPI_Ibcast(total, 1, MPI_INTEGER, 0, sub, req(1), ierr) ! site S
    call MPI_Ibarrier(MPI_COMM_WORLD, req(2), ierr) ! site Z
    req(3) = MPI_REQUEST_NULL
    done = 0
    do while (done /= MPI_UNDEFINED)
      call MPI_Waitsome(3, req, done, indices, MPI_STATUSES_IGNORE, ierr)
    end do
    total = total + int(sum1 + sum2 + mx)
  end do
  call MPI_Comm_free(sub, ierr)
  if (rank == 0) then
    write(*, '(A, I12)') 'result', total
  end if
  call MPI_Finalize(ierr)
end program nonblocking
