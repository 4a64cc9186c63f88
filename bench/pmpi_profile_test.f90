! The Fortran program of the test bench_pmpi_profile: known calls through
! mpif.h, as NPB makes them, at 2 ranks with bench/pmpi_profile.c preloaded;
! bench/pmpi_profile_check.py compares the report with the calls made here
! (EXPECTED_FORTRAN there: keep the two in step).  Each call must be counted
! once: by the profiler's Fortran wrapper, not again by its C one.  Data are
! checked; a mismatch stops the program with exit status 1.
program pmpi_profile_test
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nranks, peer, i, k
  integer :: ints(4), reqs(4), a2a_out(4), a2a_in(4), counts(2), displs(2), sr(2), rs(2)
  double precision :: dout(8, 2), din(8, 2), b(5), x(2), total(2)
  integer :: v(3), vsum(3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (nranks /= 2) then
    print *, 'pmpi_profile_test: run at 2 ranks'
    stop 1
  end if
  peer = 1 - rank

  ! 3 x MPI_Send of 4 integers from rank 0, 3 x MPI_Recv on rank 1.
  do k = 1, 3
    if (rank == 0) then
      ints = [(100 * k + i, i = 1, 4)]
      call MPI_Send(ints, 4, MPI_INTEGER, 1, k, MPI_COMM_WORLD, ierr)
    else
      ints = -1
      call MPI_Recv(ints, 4, MPI_INTEGER, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call check(all(ints == [(100 * k + i, i = 1, 4)]), 'send/recv')
    end if
  end do

  ! 2 x (MPI_Irecv + MPI_Isend) of 8 doubles each way, one MPI_Waitall.
  do k = 1, 2
    dout(:, k) = [(rank * 1000 + k * 10 + i, i = 1, 8)]
    call MPI_Irecv(din(1, k), 8, MPI_DOUBLE_PRECISION, peer, 20 + k, MPI_COMM_WORLD, &
                   reqs(k), ierr)
    call MPI_Isend(dout(1, k), 8, MPI_DOUBLE_PRECISION, peer, 20 + k, MPI_COMM_WORLD, &
                   reqs(2 + k), ierr)
  end do
  call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
  do k = 1, 2
    call check(all(din(:, k) == [(peer * 1000 + k * 10 + i, i = 1, 8)]), 'isend/irecv')
  end do

  ! One MPI_Sendrecv of 2 integers each way.
  sr = [rank, 7]
  rs = -1
  call MPI_Sendrecv(sr, 2, MPI_INTEGER, peer, 30, rs, 2, MPI_INTEGER, peer, 30, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(rs(1) == peer .and. rs(2) == 7, 'sendrecv')

  ! Collectives: 3 barriers, 2 broadcasts of 5 doubles, 4 allreduces of 2
  ! doubles, a reduction of 3 integers, an alltoall of 2 integers per rank,
  ! an alltoallv of 1 integer per rank.
  do k = 1, 3
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  do k = 1, 2
    b = -1
    if (rank == 0) b = [(k + i, i = 1, 5)]
    call MPI_Bcast(b, 5, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
    call check(b(5) == k + 5, 'bcast')
  end do
  do k = 1, 4
    x = [dble(rank), dble(k)]
    call MPI_Allreduce(x, total, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(total(1) == 1 .and. total(2) == 2 * k, 'allreduce')
  end do
  v = [rank, rank, 1]
  call MPI_Reduce(v, vsum, 3, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(vsum(3) == 2, 'reduce')
  a2a_out = [rank, rank, 10 + rank, 10 + rank]
  call MPI_Alltoall(a2a_out, 2, MPI_INTEGER, a2a_in, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(a2a_in(2 * peer + 1) == 10 * rank + peer, 'alltoall')
  counts = 1
  displs = [0, 1]
  ints(1:2) = rank
  call MPI_Alltoallv(ints, counts, displs, MPI_INTEGER, a2a_in, counts, displs, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  call check(a2a_in(peer + 1) == peer, 'alltoallv')

  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      print *, 'pmpi_profile_test: wrong data: ', what
      stop 1
    end if
  end subroutine check

end program pmpi_profile_test
