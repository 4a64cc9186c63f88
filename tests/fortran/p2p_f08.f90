! Point-to-point with `use mpi_f08`: TYPE(MPI_Comm)/(MPI_Request)/
! (MPI_Status), the optional ierror, handle comparisons, MPI_STATUS_IGNORE,
! the profiling interface's PMPI_ names, partitioned communication (5 send
! partitions into 2 receive partitions, LOGICAL flag of MPI_Parrived).
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
  type(MPI_Request) :: psend, precv
  logical :: arrived
  integer :: it
  ! MPI writes the receive buffer between calls that do not name it
  integer, asynchronous :: pbuf(n), parts(n)

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

  call MPI_Psend_init(pbuf, 5, 10_MPI_COUNT_KIND, MPI_INTEGER, right, 5, MPI_COMM_WORLD, &
                      MPI_INFO_NULL, psend)
  call MPI_Precv_init(parts, 2, 25_MPI_COUNT_KIND, MPI_INTEGER, left, 5, MPI_COMM_WORLD, &
                      MPI_INFO_NULL, precv)
  do it = 1, 3
    pbuf = [(rank * 1000 + it * 100 + i, i = 1, n)]
    parts = -1
    call MPI_Start(precv)
    call MPI_Start(psend)
    call MPI_Pready_list(2, [4, 2], psend)
    call MPI_Pready(3, psend)
    arrived = .false.
    do while (.not. arrived)
      call MPI_Parrived(precv, 1, arrived)
    end do
    call check(all(parts(26:n) == [(left * 1000 + it * 100 + i, i = 26, n)]), 'Parrived')
    call MPI_Pready_range(0, 1, psend)
    call MPI_Wait(psend, MPI_STATUS_IGNORE)
    call MPI_Wait(precv, st)
    call MPI_Get_count(st, MPI_INTEGER, cnt)
    call check(st%MPI_SOURCE == left .and. cnt == n, 'partitioned status')
    call check(all(parts == [(left * 1000 + it * 100 + i, i = 1, n)]), 'partitioned data')
  end do
  call MPI_Request_free(psend)
  call MPI_Request_free(precv)
  call check(psend == MPI_REQUEST_NULL .and. precv == MPI_REQUEST_NULL, 'partitioned free')
  call MPI_Finalize()
contains
  include 'check.inc'
end program p2p_f08
