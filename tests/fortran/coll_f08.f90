! Collectives on Fortran datatypes with `use mpi_f08`: reductions on
! INTEGER, REAL8, DOUBLE COMPLEX and LOGICAL, MPI_IN_PLACE, MAXLOC pairs.
program coll_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, total, iv(2), ir(2), pair(2), best(2)
  real(kind=8) :: dv(3)
  double complex :: z, zr
  logical :: l, lr

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  total = nranks * (nranks - 1) / 2

  iv = [rank, 1]
  call MPI_Allreduce(iv, ir, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(all(ir == [total, nranks]), 'allreduce INTEGER')
  dv = [dble(rank), 0.5d0, -dble(rank)]
  call MPI_Allreduce(MPI_IN_PLACE, dv, 3, MPI_REAL8, MPI_MAX, MPI_COMM_WORLD)
  call check(all(dv == [dble(nranks - 1), 0.5d0, 0d0]), 'MPI_IN_PLACE REAL8 max')
  z = cmplx(rank, 1, kind(z))
  call MPI_Reduce(z, zr, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) call check(zr == cmplx(total, nranks, kind(zr)), 'reduce DOUBLE COMPLEX')
  l = rank == 0
  call MPI_Allreduce(l, lr, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)
  call check(lr, 'allreduce LOGICAL')
  pair = [10 - rank, rank]
  call MPI_Allreduce(pair, best, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD)
  call check(best(1) == 11 - nranks .and. best(2) == nranks - 1, 'minloc 2INTEGER')
  call MPI_Bcast(iv, 2, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD)
  call check(all(iv == [nranks - 1, 1]), 'bcast')
  call MPI_Finalize()
contains
  include 'check.inc'
end program coll_f08
