! The entries MPICH's mpi_f08 module calls for routines with choice
! buffers (mpi_<name>_f08ts_), called the way that module calls them
! (TYPE(*), DIMENSION(..) dummies: gfortran passes its array descriptor),
! without MPICH installed: the interfaces below are MPICH's, the rest of the
! program uses FMPL's mpi_f08 (same handles, same MPI_Wait).  Non-contiguous
! sections go through a copy (blocking), a copy kept by the request
! (nonblocking, persistent: started three times) and a datatype (MPI_Put).
! fortran.mpich_binary runs f08_sections.f90, built with MPICH's module
! itself, for many more calls.
program mpich_f08ts
  use mpi_f08
  implicit none
  interface
    subroutine mpi_allreduce_f08ts(sendbuf, recvbuf, count, datatype, op, comm, ierror)
      import :: MPI_Datatype, MPI_Op, MPI_Comm
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      integer, intent(out) :: ierror
    end subroutine mpi_allreduce_f08ts
    subroutine mpi_iallreduce_f08ts(sendbuf, recvbuf, count, datatype, op, comm, request, &
                                    ierror)
      import :: MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request
      type(*), dimension(..), intent(in), asynchronous :: sendbuf
      type(*), dimension(..), asynchronous :: recvbuf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, intent(out) :: ierror
    end subroutine mpi_iallreduce_f08ts
    subroutine mpi_recv_init_f08ts(buf, count, datatype, source, tag, comm, request, ierror)
      import :: MPI_Datatype, MPI_Comm, MPI_Request
      type(*), dimension(..), asynchronous :: buf
      integer, intent(in) :: count, source, tag
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, intent(out) :: ierror
    end subroutine mpi_recv_init_f08ts
    subroutine mpi_put_f08ts(origin_addr, origin_count, origin_datatype, target_rank, &
                             target_disp, target_count, target_datatype, win, ierror)
      import :: MPI_Datatype, MPI_Win, MPI_ADDRESS_KIND
      type(*), dimension(..), intent(in), asynchronous :: origin_addr
      integer, intent(in) :: origin_count, target_rank, target_count
      type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
      integer(kind=MPI_ADDRESS_KIND), intent(in) :: target_disp
      type(MPI_Win), intent(in) :: win
      integer, intent(out) :: ierror
    end subroutine mpi_put_f08ts
  end interface
  integer, parameter :: m = 6
  integer :: rank, nranks, right, left, i, round, ierr
  integer :: rows(3, 2 * m), grid(4, m)
  integer, target :: wbuf(m)
  type(MPI_Request) :: req
  type(MPI_Win) :: win

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)

  ! Blocking: a section (stride 3 and 2) in, a gapped one out.
  call fill(rank * 10)
  grid = -1
  call mpi_allreduce_f08ts(rows(2, 1::2), grid(2, :), m, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                           ierr)
  call check(ierr == MPI_SUCCESS, 'allreduce returns')
  call check_grid([(10 * nranks * (nranks - 1) / 2 + nranks * i, i = 1, m)], 'allreduce')

  ! Nonblocking: the copies live until MPI_Wait, the output lands there.
  grid = -1
  call mpi_iallreduce_f08ts(rows(2, 1::2), grid(2, :), m, MPI_INTEGER, MPI_SUM, &
                            MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check_grid([(10 * nranks * (nranks - 1) / 2 + nranks * i, i = 1, m)], 'iallreduce')

  ! Persistent: each start refills the copy from the section (what a
  ! shorter message leaves alone), each completion copies it back.
  call mpi_recv_init_f08ts(grid(2, :), m, MPI_INTEGER, left, 1, MPI_COMM_WORLD, req, ierr)
  do round = 1, 3
    grid = -1
    grid(2, :) = -round
    call MPI_Start(req)
    call MPI_Send([(rank * 10 + round * 1000 + i, i = 1, m - 2)], m - 2, MPI_INTEGER, right, &
                  1, MPI_COMM_WORLD)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check_grid([(left * 10 + round * 1000 + i, i = 1, m - 2), -round, -round], &
                    'persistent receive')
  end do
  call MPI_Request_free(req)
  call check(req == MPI_REQUEST_NULL, 'persistent request freed')

  ! One-sided: the origin section described by a datatype.
  wbuf = -1
  call MPI_Win_create(wbuf, int(m * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_fence(0, win)
  call fill(rank * 10)
  call mpi_put_f08ts(rows(2, 1::2), m, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, m, MPI_INTEGER, &
                     win, ierr)
  call MPI_Win_fence(0, win)
  call check(all(wbuf == [(left * 10 + i, i = 1, m)]), 'put')
  call MPI_Win_free(win)

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'mpich_f08ts: ok (', nranks, ' ranks)'
  call MPI_Finalize()

contains

  include 'check.inc'

  ! rows(2, 1::2) holds base + 1 ... base + m, the rest of rows -7.
  subroutine fill(base)
    integer, intent(in) :: base
    rows = -7
    rows(2, 1::2) = [(base + i, i = 1, m)]
  end subroutine fill

  subroutine check_grid(want, what)
    integer, intent(in) :: want(:)
    character(len=*), intent(in) :: what
    call check(all(grid(2, :) == want), what)
    call check(all(grid(1, :) == -1) .and. all(grid(3:, :) == -1), what // ' (around)')
  end subroutine check_grid

end program mpich_f08ts
