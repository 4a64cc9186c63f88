! One-sided communication with `use mpi_f08`: TYPE(MPI_Win), a window on an
! INTEGER array, Put/Get under fences, Accumulate of REAL8 under a
! passive-target lock, the window's attributes, MPI_WIN_NULL after free.
program rma_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 8
  integer :: rank, nranks, right, left, i, ierr
  integer :: local(n), got(n)
  real(kind=8) :: acc(2)
  type(MPI_Win) :: win, accwin
  integer(kind=MPI_ADDRESS_KIND) :: attr, base
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  local = -1
  call MPI_Win_create(local, int(4 * n, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, &
                      win, ierr)
  call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL, 'win_create')
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, attr, flag)
  call check(flag .and. attr == 4 * n, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, attr, flag)
  call check(flag .and. attr == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_Win_get_attr(win, MPI_WIN_BASE, attr, flag)
  call MPI_Get_address(local, base)
  call check(flag .and. attr == base, 'MPI_WIN_BASE')

  call MPI_Win_fence(0, win)
  call MPI_Put([(rank * 100 + i, i = 1, 4)], 4, MPI_INTEGER, right, 2_MPI_ADDRESS_KIND, 4, &
               MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(all(local(3:6) == [(left * 100 + i, i = 1, 4)]) .and. local(1) == -1 &
             .and. local(7) == -1, 'put')
  got = 0
  call MPI_Get(got, 4, MPI_INTEGER, left, 2_MPI_ADDRESS_KIND, 4, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(all(got(1:4) == [(mod(left + nranks - 1, nranks) * 100 + i, i = 1, 4)]) &
             .and. all(got(5:) == 0), 'get')
  call MPI_Win_free(win)
  call check(win == MPI_WIN_NULL, 'win_free')

  acc = 0
  call MPI_Win_create(acc, 16_MPI_ADDRESS_KIND, 8, MPI_INFO_NULL, MPI_COMM_WORLD, accwin)
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, accwin)
  call MPI_Accumulate([1.5d0, dble(rank)], 2, MPI_REAL8, 0, 0_MPI_ADDRESS_KIND, 2, &
                      MPI_REAL8, MPI_SUM, accwin)
  call MPI_Win_unlock(0, accwin)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, accwin)
    call check(acc(1) == 1.5d0 * nranks .and. acc(2) == nranks * (nranks - 1) / 2, &
               'accumulate')
    call MPI_Win_unlock(0, accwin)
  end if
  call MPI_Win_free(accwin)
  call MPI_Finalize()
contains
  include 'check.inc'
end program rma_f08
