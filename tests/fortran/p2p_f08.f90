! Point-to-point with `use mpi_f08`: TYPE(MPI_Comm)/(MPI_Request)/
! (MPI_Status), the optional ierror, handle comparisons, MPI_STATUS_IGNORE,
! the profiling interface's PMPI_ names.
program p2p_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 50
  integer :: rank, nranks, right, left, i, cnt, ierr
  integer :: sbuf(n), rbuf(n)
  real(kind=8) :: d(n)
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st, sts(2)
  type(MPI_Comm) :: dup

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call check(ierr == MPI_SUCCESS, 'ierror present')
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  sbuf = [(rank * 1000 + i, i = 1, n)]
  call MPI_Sendrecv(sbuf, n, MPI_INTEGER, right, 1, rbuf, n, MPI_INTEGER, left, 1, &
                    MPI_COMM_WORLD, st)
  call check(st%MPI_SOURCE == left .and. st%MPI_TAG == 1, 'status fields')
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(cnt == n .and. all(rbuf == [(left * 1000 + i, i = 1, n)]), 'sendrecv')

  d = [(rank + i * 0.5d0, i = 1, n)]
  call MPI_Irecv(d, n, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend([(rank + i * 0.25d0, i = 1, n)], n, MPI_REAL8, right, 2, MPI_COMM_WORLD, &
                 reqs(2))
  call MPI_Waitall(2, reqs, sts)
  call check(all(reqs == MPI_REQUEST_NULL), 'requests freed')
  call check(sts(1)%MPI_SOURCE == left, 'waitall status')
  call check(all(d == [(left + i * 0.25d0, i = 1, n)]), 'isend/irecv REAL8')

  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call check(dup /= MPI_COMM_WORLD .and. dup /= MPI_COMM_NULL, 'handle comparison')
  call MPI_Send(sbuf, n, MPI_INTEGER, right, 3, dup)
  call MPI_Recv(rbuf, n, MPI_INTEGER, left, 3, dup, MPI_STATUS_IGNORE)
  call check(all(rbuf == [(left * 1000 + i, i = 1, n)]), 'recv on a dup')
  call MPI_Comm_free(dup)
  call check(dup == MPI_COMM_NULL, 'comm_free')

  ! The profiling interface: PMPI_ names reach the same routines.
  call PMPI_Comm_rank(MPI_COMM_WORLD, i, ierr)
  call check(i == rank .and. ierr == MPI_SUCCESS, 'PMPI_Comm_rank')
  call PMPI_Sendrecv(sbuf, n, MPI_INTEGER, right, 4, rbuf, n, MPI_INTEGER, left, 4, &
                     MPI_COMM_WORLD, st)
  call check(st%MPI_SOURCE == left .and. all(rbuf == [(left * 1000 + i, i = 1, n)]), &
             'PMPI_Sendrecv')
  call check(PMPI_Wtime() > 0, 'PMPI_Wtime')
  call MPI_Finalize()
contains
  include 'check.inc'
end program p2p_f08
