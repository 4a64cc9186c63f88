! A `use mpi_f08` program for both modules: built in-tree with FMPL's
! (fortran.mpich_f08_<n>) and by MPICH's mpif90.mpich with MPICH's module,
! then run on FMPL's libraries (fortran.mpich_binary): MPICH's module passes
! choice buffers as array descriptors to its mpi_<name>_f08ts_ entries and
! its own sentinels (MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE ...).
! Covers point-to-point (blocking, nonblocking with TYPE(MPI_Request) and
! status fields, non-contiguous array sections), collectives with
! MPI_IN_PLACE, one-sided, derived datatypes, MPI_Comm_split/dup, handle
! comparisons, an error returned with MPI_ERRORS_RETURN, and
! MPI_Buffer_detach returning the attached address (TYPE(C_PTR)).
program mpich_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_loc
  implicit none
  integer, parameter :: n = 40
  integer :: rank, nranks, right, left, i, j, cnt, ierr, sz
  integer :: sbuf(n), rbuf(n), grid(3, n), col(n)
  integer, asynchronous :: abuf(n)
  real(kind=8) :: d(n), dsum(n)
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st, sts(2)
  type(MPI_Comm) :: dup, half
  type(MPI_Datatype) :: vec
  type(MPI_Win) :: win
  integer(kind=MPI_ADDRESS_KIND) :: winsize
  integer, target :: wbuf(n)
  character(len=1), target :: bsendbuf(4096)
  type(c_ptr) :: detached
  integer :: hrank, hsize, errclass

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call check(ierr == MPI_SUCCESS, 'ierror present')
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  ! Blocking point-to-point, status fields.
  sbuf = [(rank * 1000 + i, i = 1, n)]
  rbuf = -1
  call MPI_Sendrecv(sbuf, n, MPI_INTEGER, right, 1, rbuf, n, MPI_INTEGER, left, 1, &
                    MPI_COMM_WORLD, st)
  call check(st%MPI_SOURCE == left .and. st%MPI_TAG == 1, 'sendrecv status fields')
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(cnt == n .and. all(rbuf == [(left * 1000 + i, i = 1, n)]), 'sendrecv data')

  ! Nonblocking, MPI_Wait and MPI_Waitall on TYPE(MPI_Request).
  d = -1
  call MPI_Irecv(d, n, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, reqs(1))
  dsum = [(rank + i * 0.25d0, i = 1, n)]
  call MPI_Isend(dsum, n, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, reqs(2))
  call MPI_Wait(reqs(1), st)
  call check(reqs(1) == MPI_REQUEST_NULL, 'wait frees the request')
  call check(st%MPI_SOURCE == left .and. st%MPI_TAG == 2, 'wait status fields')
  call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt)
  call check(cnt == n, 'wait count')
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
  call check(all(d == [(left + i * 0.25d0, i = 1, n)]), 'isend/irecv data')
  abuf = -1
  call MPI_Irecv(abuf, n, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, n, MPI_INTEGER, right, 3, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call check(all(reqs == MPI_REQUEST_NULL), 'waitall frees the requests')
  call check(all(abuf == [(left * 1000 + i, i = 1, n)]), 'waitall data')
  call MPI_Irecv(abuf, n, MPI_INTEGER, left, 4, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, n, MPI_INTEGER, right, 4, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, sts)
  call check(sts(1)%MPI_SOURCE == left .and. sts(1)%MPI_TAG == 4, 'waitall statuses')

  ! Array sections: a row of grid (stride 3) sent and received in place.
  grid = 0
  grid(2, :) = [(rank * 100 + i, i = 1, n)]
  call MPI_Sendrecv(grid(2, :), n, MPI_INTEGER, right, 5, col, n, MPI_INTEGER, left, 5, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(all(col == [(left * 100 + i, i = 1, n)]), 'section sent')
  call MPI_Sendrecv(col, n, MPI_INTEGER, right, 6, grid(3, :), n, MPI_INTEGER, left, 6, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(all(grid(3, :) == [(mod(left + nranks - 1, nranks) * 100 + i, i = 1, n)]) .and. &
             all(grid(1, :) == 0), 'section received')

  ! Collectives with MPI_IN_PLACE.
  sbuf = [(rank + i, i = 1, n)]
  call MPI_Allreduce(MPI_IN_PLACE, sbuf, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(all(sbuf == [(nranks * (nranks - 1) / 2 + nranks * i, i = 1, n)]), &
             'allreduce in place')
  rbuf = -1
  rbuf(rank + 1) = rank * 7
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, 1, MPI_INTEGER, MPI_COMM_WORLD)
  call check(all(rbuf(1:nranks) == [(i * 7, i = 0, nranks - 1)]), 'allgather in place')
  dsum = [(rank * 1.5d0 + i, i = 1, n)]
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, dsum, n, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
    call check(all(dsum == [(1.5d0 * nranks * (nranks - 1) / 2 + nranks * i, i = 1, n)]), &
               'reduce in place')
  else
    call MPI_Reduce(dsum, dsum, n, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
  end if
  i = merge(42, -1, rank == 0)
  call MPI_Bcast(i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call check(i == 42, 'bcast of a scalar')

  ! Derived datatypes: a vector of every other element.
  call MPI_Type_vector(n / 2, 1, 2, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  sbuf = [(rank * 1000 + i, i = 1, n)]
  rbuf = -1
  call MPI_Sendrecv(sbuf, 1, vec, right, 7, rbuf, n / 2, MPI_INTEGER, left, 7, &
                    MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(cnt == n / 2 .and. all(rbuf(1:n / 2) == [(left * 1000 + 2 * i - 1, i = 1, n / 2)]) &
             .and. all(rbuf(n / 2 + 1:) == -1), 'vector type')
  call MPI_Type_free(vec)
  call check(vec == MPI_DATATYPE_NULL, 'type freed')

  ! One-sided: each rank puts into its right neighbour's window.
  wbuf = -1
  winsize = n * 4
  call MPI_Win_create(wbuf, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_fence(0, win)
  sbuf = [(rank * 10 + i, i = 1, n)]
  call MPI_Put(sbuf, n, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(all(wbuf == [(left * 10 + i, i = 1, n)]), 'put')
  rbuf = -1
  call MPI_Get(rbuf, n, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(all(rbuf == [(rank * 10 + i, i = 1, n)]), 'get')
  call MPI_Accumulate(sbuf, n, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, &
                      MPI_SUM, win)
  call MPI_Win_fence(0, win)
  call check(all(wbuf == [(2 * (left * 10 + i), i = 1, n)]), 'accumulate')
  call MPI_Win_free(win)
  call check(win == MPI_WIN_NULL, 'window freed')

  ! Communicators: split into even and odd ranks, dup.
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  call MPI_Comm_rank(half, hrank)
  call MPI_Comm_size(half, hsize)
  call check(hrank == rank / 2 .and. hsize == (nranks + 1 - mod(rank, 2)) / 2, 'split')
  call MPI_Comm_dup(half, dup)
  call check(dup /= half .and. dup /= MPI_COMM_NULL, 'dup is a new communicator')
  j = rank
  call MPI_Allreduce(MPI_IN_PLACE, j, 1, MPI_INTEGER, MPI_MAX, dup)
  call check(j == nranks - 1 - mod(nranks - 1 - rank, 2), 'allreduce on the dup')
  call MPI_Comm_free(dup)
  call MPI_Comm_free(half)
  call check(dup == MPI_COMM_NULL .and. half == MPI_COMM_NULL, 'communicators freed')

  ! An error returned: a send to a rank that does not exist.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(sbuf, 1, MPI_INTEGER, nranks + 5, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, errclass)
  call check(ierr /= MPI_SUCCESS .and. errclass == MPI_ERR_RANK, 'invalid rank returns MPI_ERR_RANK')
  ! A section whose count is shared with another buffer (more in
  ! f08_sections.f90): copied in by the compiler (FMPL's module) or by the
  ! library (MPICH's).
  grid(1, :) = [(rank + i, i = 1, n)]
  col = -1
  call MPI_Allreduce(grid(1, :), col, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. &
             all(col == [(nranks * (nranks - 1) / 2 + nranks * i, i = 1, n)]), &
             'allreduce of a section')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)

  ! MPI_Buffer_detach gives back the attached buffer's address.
  call MPI_Buffer_attach(bsendbuf, size(bsendbuf))
  call MPI_Bsend(rank, 1, MPI_INTEGER, right, 8, MPI_COMM_WORLD)
  call MPI_Recv(i, 1, MPI_INTEGER, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(i == left, 'bsend')
  call MPI_Buffer_detach(detached, sz)
  call check(sz == size(bsendbuf), 'detach size')
  ! (compared as integers: gfortran 12 fails on c_associated with MPICH's module)
  call check(transfer(detached, 0_MPI_ADDRESS_KIND) == &
             transfer(c_loc(bsendbuf), 0_MPI_ADDRESS_KIND), 'detach returns the address')

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'mpich_f08: ok (', nranks, ' ranks)'
  call MPI_Finalize()

contains

  include 'check.inc'

end program mpich_f08
