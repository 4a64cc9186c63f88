! Non-contiguous array sections as choice buffers of `use mpi_f08`, built
! with FMPL's module (fortran.f08_sections_<n>) and with MPICH's
! (mpif90.mpich, run on FMPL's libraries by fortran.mpich_binary).
!
! MPICH's module passes every section as it is (MPI_SUBARRAYS_SUPPORTED is
! .TRUE.): the library copies it to a contiguous temporary around a blocking
! call, keeps the copy with the request of a nonblocking or persistent one,
! and describes it with a datatype for one-sided calls.  FMPL's module says
! .FALSE.: the compiler copies sections in and out around the call, which
! the standard allows for blocking calls only, so the nonblocking and
! one-sided parts run with MPICH's module alone.
!
! Every check compares data element by element, inside the sections and
! around them (what a call must not touch).  Sections are strided in every
! dimension (cube(1:4:3, 2:5:2, 1:6:2)), reversed (line(12:1:-1)), gapped
! (two(1:3, :) of two(4, :)) or a component of an array of derived type
! (pts(:)%y).
program f08_sections
  use mpi_f08
  implicit none
  integer, parameter :: m = 12          ! elements in each section below
  type :: point
    real(kind=8) :: x, y, z
  end type point
  integer :: rank, nranks, right, left, root, i, s, round, cnt, errclass, ierr
  integer :: cube(4, 5, 6), grid(6, 8), line(m), expect(m)
  integer, allocatable :: a2(:, :), two(:, :), gbuf(:)
  integer, target :: wbuf(m)
  type(point) :: pts(m)
  type(MPI_Datatype) :: vec
  type(MPI_Request) :: reqs(2), preq(2)
  type(MPI_Status) :: st, sts(2)
  type(MPI_Win) :: win
  logical :: flag

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  allocate(a2(2, 3 * nranks), two(4, nranks), gbuf(2 * m * nranks))
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  ! ---- blocking collectives
  ! Allreduce: a section in, another out.
  call fill_cube(rank * 100)
  grid = -1
  call MPI_Allreduce(cube(1:4:3, 2:5:2, 1:6:2), grid(2:6:2, 1:8:2), m, MPI_INTEGER, MPI_SUM, &
                     MPI_COMM_WORLD)
  expect = [(100 * nranks * (nranks - 1) / 2 + nranks * i, i = 1, m)]
  call check_grid(expect, -1, 'allreduce of sections')
  call check_cube(rank * 100, 'allreduce leaves its send section alone')

  ! Reduce into a reversed section at the root.
  root = nranks - 1
  line = -2
  call MPI_Reduce(cube(1:4:3, 2:5:2, 1:6:2), line(m:1:-1), m, MPI_INTEGER, MPI_MAX, root, &
                  MPI_COMM_WORLD)
  if (rank == root) then
    call check(all(line == [((nranks - 1) * 100 + m + 1 - i, i = 1, m)]), 'reduce reversed')
  else
    call check(all(line == -2), 'reduce: no output off the root')
  end if

  ! Scan.
  grid = -1
  call MPI_Scan(cube(1:4:3, 2:5:2, 1:6:2), grid(2:6:2, 1:8:2), m, MPI_INTEGER, MPI_SUM, &
                MPI_COMM_WORLD)
  call check_grid([(100 * rank * (rank + 1) / 2 + (rank + 1) * i, i = 1, m)], -1, 'scan')

  ! Alltoall: a count per rank over a strided row, into a gapped block.
  a2 = -4
  a2(2, :) = [(rank * 1000 + i, i = 1, 3 * nranks)]
  two = -5
  call MPI_Alltoall(a2(2, :), 3, MPI_INTEGER, two(1:3, :), 3, MPI_INTEGER, MPI_COMM_WORLD)
  do s = 0, nranks - 1
    call check(all(two(1:3, s + 1) == [(s * 1000 + 3 * rank + i, i = 1, 3)]), 'alltoall data')
  end do
  call check(all(two(4, :) == -5) .and. all(a2(1, :) == -4), 'alltoall: gaps untouched')

  ! Gather at rank 0 into every other element.
  gbuf = -6
  call MPI_Gather(cube(1:4:3, 2:5:2, 1:6:2), m, MPI_INTEGER, gbuf(1::2), m, MPI_INTEGER, 0, &
                  MPI_COMM_WORLD)
  if (rank == 0) then
    do s = 0, nranks - 1
      call check(all(gbuf(2 * s * m + 1:2 * (s + 1) * m:2) == [(s * 100 + i, i = 1, m)]), &
                 'gather data')
    end do
  end if
  call check(all(gbuf(2::2) == -6), 'gather: gaps untouched')

  ! Bcast: a section both read (root) and written (the others).
  if (rank == 0) then
    grid = -1
    grid(2:6:2, 1:8:2) = reshape([(7000 + i, i = 1, m)], [3, 4])
  else
    grid = -1
    grid(2:6:2, 1:8:2) = -9
  end if
  call MPI_Bcast(grid(2:6:2, 1:8:2), m, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call check_grid([(7000 + i, i = 1, m)], -1, 'bcast of a section')

  ! A component of an array of derived type, in place.
  pts = [(point(-1d0, rank + i * 0.5d0, -3d0), i = 1, m)]
  call MPI_Allreduce(MPI_IN_PLACE, pts(:)%y, m, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call check(all(pts(:)%y == [(nranks * (nranks - 1) / 2d0 + nranks * i * 0.5d0, i = 1, m)]) &
             .and. all(pts(:)%x == -1d0) .and. all(pts(:)%z == -3d0), 'component section')

  ! ---- blocking point-to-point
  call fill_cube(rank * 100)
  grid = -1
  call MPI_Sendrecv(cube(1:4:3, 2:5:2, 1:6:2), m, MPI_INTEGER, right, 1, grid(2:6:2, 1:8:2), &
                    m, MPI_INTEGER, left, 1, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(cnt == m .and. st%MPI_SOURCE == left, 'sendrecv status')
  call check_grid([(left * 100 + i, i = 1, m)], -1, 'sendrecv of sections')

  ! A shorter message: the rest of the receiving section keeps its values.
  grid = -1
  grid(2:6:2, 1:8:2) = -3
  call MPI_Sendrecv(cube(1:4:3, 2:5:2, 1:6:2), 5, MPI_INTEGER, right, 2, grid(2:6:2, 1:8:2), &
                    m, MPI_INTEGER, left, 2, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(cnt == 5, 'short message count')
  call check_grid([(left * 100 + i, i = 1, 5), (-3, i = 6, m)], -1, 'short message data')

  ! A datatype means over a section what it means over a contiguous array:
  ! every other element of the section's elements in array element order.
  call MPI_Type_vector(m / 2, 1, 2, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  line = -1
  call MPI_Sendrecv(cube(1:4:3, 2:5:2, 1:6:2), 1, vec, right, 3, line, m / 2, MPI_INTEGER, &
                    left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(all(line(1:m / 2) == [(left * 100 + 2 * i - 1, i = 1, m / 2)]) .and. &
             all(line(m / 2 + 1:) == -1), 'vector type over a send section')
  grid = -1
  grid(2:6:2, 1:8:2) = -3
  line = [(rank * 10 + i, i = 1, m)]
  call MPI_Sendrecv(line, m / 2, MPI_INTEGER, right, 4, grid(2:6:2, 1:8:2), 1, vec, left, 4, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check_grid([(merge(left * 10 + ishft(i + 1, -1), -3, mod(i, 2) == 1), i = 1, m)], -1, &
                  'vector type over a receive section')
  call MPI_Type_free(vec)

  ! Sendrecv_replace: the same section out and in.
  call fill_cube(rank * 100)
  call MPI_Sendrecv_replace(cube(1:4:3, 2:5:2, 1:6:2), m, MPI_INTEGER, right, 5, left, 5, &
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check_cube(left * 100, 'sendrecv_replace of a section')

  ! ---- calls that keep the buffer: MPICH's module only
  if (MPI_SUBARRAYS_SUPPORTED) then
    ! Nonblocking collective.
    call fill_cube(rank * 100)
    grid = -1
    call MPI_Iallreduce(cube(1:4:3, 2:5:2, 1:6:2), grid(2:6:2, 1:8:2), m, MPI_INTEGER, &
                        MPI_SUM, MPI_COMM_WORLD, reqs(1))
    call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
    call check(reqs(1) == MPI_REQUEST_NULL, 'iallreduce request freed')
    call check_grid([(100 * nranks * (nranks - 1) / 2 + nranks * i, i = 1, m)], -1, &
                    'iallreduce of sections')
    call check_cube(rank * 100, 'iallreduce leaves its send section alone')

    ! Nonblocking point-to-point, statuses through the wrapping request.
    grid = -1
    call MPI_Irecv(grid(2:6:2, 1:8:2), m, MPI_INTEGER, left, 6, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(cube(1:4:3, 2:5:2, 1:6:2), m, MPI_INTEGER, right, 6, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, sts)
    call MPI_Get_count(sts(1), MPI_INTEGER, cnt)
    call check(cnt == m .and. sts(1)%MPI_SOURCE == left .and. sts(1)%MPI_TAG == 6, &
               'irecv status')
    call check_grid([(left * 100 + i, i = 1, m)], -1, 'isend/irecv of sections')

    ! Completed by MPI_Test.
    two = -5
    call MPI_Ialltoall(a2(2, :), 3, MPI_INTEGER, two(1:3, :), 3, MPI_INTEGER, &
                       MPI_COMM_WORLD, reqs(1))
    flag = .false.
    do while (.not. flag)
      call MPI_Test(reqs(1), flag, MPI_STATUS_IGNORE)
    end do
    do s = 0, nranks - 1
      call check(all(two(1:3, s + 1) == [(s * 1000 + 3 * rank + i, i = 1, 3)]), &
                 'ialltoall data')
    end do
    call check(all(two(4, :) == -5), 'ialltoall: gaps untouched')

    ! Ibcast of a section.
    grid = -1
    grid(2:6:2, 1:8:2) = merge(reshape([(8000 + i, i = 1, m)], [3, 4]), -9, rank == 0)
    call MPI_Ibcast(grid(2:6:2, 1:8:2), m, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(1))
    call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
    call check_grid([(8000 + i, i = 1, m)], -1, 'ibcast of a section')

    ! Persistent: each start reads the send section as it is then.
    call MPI_Allreduce_init(cube(1:4:3, 2:5:2, 1:6:2), grid(2:6:2, 1:8:2), m, MPI_INTEGER, &
                            MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, preq(1))
    call MPI_Send_init(cube(4, 1:5:2, 2:6:2), 9, MPI_INTEGER, right, 7, MPI_COMM_WORLD, preq(2))
    do round = 1, 3
      call fill_cube(rank * 100 + round * 10000)
      cube(4, 1:5:2, 2:6:2) = reshape([(round * 100 + rank * 10 + i, i = 1, 9)], [3, 3])
      grid = -1
      line = -1
      call MPI_Irecv(line(m:4:-1), 9, MPI_INTEGER, left, 7, MPI_COMM_WORLD, reqs(1))
      call MPI_Startall(2, preq)
      call MPI_Waitall(2, preq, MPI_STATUSES_IGNORE)
      call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
      call check_grid([(nranks * round * 10000 + 100 * nranks * (nranks - 1) / 2 + &
                        nranks * i, i = 1, m)], -1, 'persistent allreduce of sections')
      call check(all(line(m:4:-1) == [(round * 100 + left * 10 + i, i = 1, 9)]) .and. &
                 all(line(1:3) == -1), 'persistent send of a section')
    end do
    call MPI_Request_free(preq(1))
    call MPI_Request_free(preq(2))

    ! A cancelled receive leaves its section as it was.
    grid = -1
    grid(2:6:2, 1:8:2) = -8
    call MPI_Irecv(grid(2:6:2, 1:8:2), m, MPI_INTEGER, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &
                   reqs(1))
    call MPI_Cancel(reqs(1))
    call MPI_Wait(reqs(1), st)
    call MPI_Test_cancelled(st, flag)
    call check(flag, 'receive cancelled')
    call check_grid([(-8, i = 1, m)], -1, 'cancelled receive')

    ! One-sided: the origin section is described by a datatype when the
    ! call's count fills it, and refused otherwise.
    wbuf = -1
    call MPI_Win_create(wbuf, int(m * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, &
                        MPI_COMM_WORLD, win)
    call MPI_Win_fence(0, win)
    call fill_cube(rank * 100)
    call MPI_Put(cube(1:4:3, 2:5:2, 1:6:2), m, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, m, &
                 MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    call check(all(wbuf == [(left * 100 + i, i = 1, m)]), 'put from a section')
    grid = -1
    call MPI_Get(grid(2:6:2, 1:8:2), m, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, m, &
                 MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    call check_grid([(rank * 100 + i, i = 1, m)], -1, 'get into a section')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    call MPI_Put(cube(1:4:3, 2:5:2, 1:6:2), 5, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 5, &
                 MPI_INTEGER, win, ierr)
    call MPI_Error_class(ierr, errclass)
    call check(errclass == MPI_ERR_UNSUPPORTED_OPERATION, 'put of part of a section refused')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
    call MPI_Win_fence(0, win)
    call check(all(wbuf == [(left * 100 + i, i = 1, m)]), 'refused put changed nothing')
    call MPI_Win_free(win)
  end if

  deallocate(a2, two, gbuf)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,l1,a,i0,a)', 'f08_sections: ok (subarrays ', &
                         MPI_SUBARRAYS_SUPPORTED, ', ', nranks, ' ranks)'
  call MPI_Finalize()

contains

  include 'check.inc'

  ! cube: -7 around the section, base + 1 ... base + m in it.
  subroutine fill_cube(base)
    integer, intent(in) :: base
    cube = -7
    cube(1:4:3, 2:5:2, 1:6:2) = reshape([(base + i, i = 1, m)], [2, 2, 3])
  end subroutine fill_cube

  subroutine check_cube(base, what)
    integer, intent(in) :: base
    character(len=*), intent(in) :: what
    integer :: saved(2, 2, 3)
    saved = cube(1:4:3, 2:5:2, 1:6:2)
    call check(all(reshape(saved, [m]) == [(base + i, i = 1, m)]), what)
    cube(1:4:3, 2:5:2, 1:6:2) = -7
    call check(all(cube == -7), what // ' (around the section)')
    cube(1:4:3, 2:5:2, 1:6:2) = saved
  end subroutine check_cube

  ! grid's section holds want (array element order), the rest `around`.
  subroutine check_grid(want, around, what)
    integer, intent(in) :: want(:), around
    character(len=*), intent(in) :: what
    integer :: saved(3, 4)
    saved = grid(2:6:2, 1:8:2)
    call check(all(reshape(saved, [m]) == want), what)
    grid(2:6:2, 1:8:2) = around
    call check(all(grid == around), what // ' (around the section)')
    grid(2:6:2, 1:8:2) = saved
  end subroutine check_grid

end program f08_sections
