! One-sided communication from Fortran (mpif.h with FMPL_TEST_MPIF_H, else
! `use mpi`): a window on an INTEGER array, Put/Get/Accumulate under fences
! and passive-target locks, the window's attributes.
program rma
#include "interface.inc"
  integer, parameter :: n = 8
  integer :: ierr, rank, nranks, right, left, win, i, disp_unit
  integer :: local(n), got(n)
  real(kind=8) :: acc(2)
  integer :: accwin
  integer(kind=MPI_ADDRESS_KIND) :: wsize, attr
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  local = -1
  wsize = 4 * n
  call MPI_Win_create(local, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call check(ierr == MPI_SUCCESS, 'win_create')
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, attr, flag, ierr)
  call check(flag .and. attr == 4 * n, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, attr, flag, ierr)
  disp_unit = int(attr)
  call check(flag .and. disp_unit == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_Win_get_attr(win, MPI_WIN_BASE, attr, flag, ierr)
  call MPI_Get_address(local, wsize, ierr)
  call check(flag .and. attr == wsize, 'MPI_WIN_BASE')

  ! Put my pattern at displacement 2 of my right neighbour.
  call MPI_Win_fence(0, win, ierr)
  call MPI_Put([(rank * 100 + i, i = 1, 4)], 4, MPI_INTEGER, right, 2_MPI_ADDRESS_KIND, 4, &
               MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(all(local(3:6) == [(left * 100 + i, i = 1, 4)]) .and. local(1) == -1 &
             .and. local(7) == -1, 'put')
  ! Get it back from the left neighbour's window.
  got = 0
  call MPI_Get(got, 4, MPI_INTEGER, left, 2_MPI_ADDRESS_KIND, 4, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(all(got(1:4) == [(mod(left + nranks - 1, nranks) * 100 + i, i = 1, 4)]), 'get')
  call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'win_free')

  ! Accumulate REAL8 sums into rank 0 under a passive-target lock.
  acc = 0
  call MPI_Win_create(acc, 16_MPI_ADDRESS_KIND, 8, MPI_INFO_NULL, MPI_COMM_WORLD, accwin, ierr)
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, accwin, ierr)
  call MPI_Accumulate([1.5d0, dble(rank)], 2, MPI_REAL8, 0, 0_MPI_ADDRESS_KIND, 2, &
                      MPI_REAL8, MPI_SUM, accwin, ierr)
  call MPI_Win_unlock(0, accwin, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, accwin, ierr)
    call check(acc(1) == 1.5d0 * nranks .and. acc(2) == nranks * (nranks - 1) / 2, &
               'accumulate')
    call MPI_Win_unlock(0, accwin, ierr)
  end if
  call MPI_Win_free(accwin, ierr)
  call MPI_Finalize(ierr)
contains
  include 'check.inc'
end program rma
