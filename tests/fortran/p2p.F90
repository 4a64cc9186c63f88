! Point-to-point from Fortran (mpif.h with FMPL_TEST_MPIF_H, else `use mpi`):
! blocking and nonblocking transfers around a ring, statuses and
! MPI_STATUS(ES)_IGNORE, 1-based request indices, LOGICAL flags, probes.
program p2p
#include "interface.inc"
  integer, parameter :: n = 100
  integer :: ierr, rank, nranks, right, left, i, cnt, idx
  integer :: sbuf(n), rbuf(n), reqs(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2)
  double complex :: z(3)
  double precision :: d(n)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  ! Blocking ring: Sendrecv with a status.
  sbuf = [(rank * 1000 + i, i = 1, n)]
  rbuf = -1
  call MPI_Sendrecv(sbuf, n, MPI_INTEGER, right, 11, rbuf, n, MPI_INTEGER, left, 11, &
                    MPI_COMM_WORLD, st, ierr)
  call check(ierr == MPI_SUCCESS, 'sendrecv ierr')
  call check(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 11, 'sendrecv status')
  call MPI_Get_count(st, MPI_INTEGER, cnt, ierr)
  call check(cnt == n, 'get_count')
  do i = 1, n
    call check(rbuf(i) == left * 1000 + i, 'sendrecv data')
  end do

  ! Nonblocking ring with MPI_STATUSES_IGNORE, then Waitany's index.
  rbuf = -1
  call MPI_Irecv(rbuf, n, MPI_INTEGER, left, 12, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, n, MPI_INTEGER, right, 12, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. all(reqs == MPI_REQUEST_NULL), 'waitall')
  call check(all(rbuf == [(left * 1000 + i, i = 1, n)]), 'isend/irecv data')

  d = [(rank + i * 0.5d0, i = 1, n)]
  call MPI_Irecv(rbuf, n, MPI_INTEGER, left, 13, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send(sbuf, n, MPI_INTEGER, right, 13, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(1, reqs, idx, st, ierr)
  call check(idx == 1, 'waitany index is 1-based')
  call MPI_Waitany(1, reqs, idx, MPI_STATUS_IGNORE, ierr)
  call check(idx == MPI_UNDEFINED, 'waitany on null requests')

  ! Testall's LOGICAL flag.
  call MPI_Irecv(d, n, MPI_DOUBLE_PRECISION, left, 14, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(d, 0, MPI_DOUBLE_PRECISION, right, 15, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Send([(right + i * 0.25d0, i = 1, n)], n, MPI_DOUBLE_PRECISION, right, 14, &
                MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(2, reqs, flag, sts, ierr)
  end do
  call check(sts(MPI_SOURCE, 1) == left .and. sts(MPI_TAG, 1) == 14, 'testall statuses')
  call check(all(d == [(rank + i * 0.25d0, i = 1, n)]), 'testall data')
  call MPI_Recv(d, 0, MPI_DOUBLE_PRECISION, left, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)

  ! Probe, then Sendrecv_replace on DOUBLE COMPLEX.
  z = [(cmplx(rank, -i, kind(z)), i = 1, 3)]
  call MPI_Send(z, 3, MPI_DOUBLE_COMPLEX, right, 16, MPI_COMM_WORLD, ierr)
  call MPI_Probe(left, 16, MPI_COMM_WORLD, st, ierr)
  call MPI_Get_count(st, MPI_DOUBLE_COMPLEX, cnt, ierr)
  call check(cnt == 3 .and. st(MPI_SOURCE) == left, 'probe')
  call MPI_Recv(z, 3, MPI_DOUBLE_COMPLEX, left, 16, MPI_COMM_WORLD, st, ierr)
  call check(all(z == [(cmplx(left, -i, kind(z)), i = 1, 3)]), 'double complex data')
  call MPI_Sendrecv_replace(z, 3, MPI_DOUBLE_COMPLEX, right, 17, left, 17, MPI_COMM_WORLD, &
                            st, ierr)
  call check(all(z == [(cmplx(mod(left + nranks - 1, nranks), -i, kind(z)), i = 1, 3)]), &
             'sendrecv_replace')

  call MPI_Finalize(ierr)
contains
  include 'check.inc'
end program p2p
