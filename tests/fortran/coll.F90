! Collectives on Fortran datatypes (mpif.h with FMPL_TEST_MPIF_H, else
! `use mpi`): reductions on INTEGER, INTEGER2/8, REAL, REAL8,
! DOUBLE PRECISION, COMPLEX, DOUBLE COMPLEX, LOGICAL and the pair types,
! MPI_IN_PLACE, a Fortran user operation, rooted and all-to-all moves.
program coll
#include "interface.inc"
  integer :: ierr, rank, nranks, i, op, total
  integer :: iv(3), ir(3), sv(4), pairs(2, 2), gathered(10), counts(4), displs(4)
  integer(kind=2) :: i2(2), r2(2)
  integer(kind=8) :: i8, r8
  real :: rv(2), rr(2)
  real(kind=8) :: dv(2), dr(2), dpair(2), dmax(2)
  complex :: cv, cr
  double complex :: zv, zr
  logical :: lv(2), lr(2)
  character(len=5) :: word
  external :: fortran_sum

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  total = nranks * (nranks + 1) / 2          ! sum of rank+1

  iv = [rank + 1, 2 * (rank + 1), -rank]
  call MPI_Allreduce(iv, ir, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all(ir == [total, 2 * total, -(total - nranks)]), 'allreduce INTEGER sum')
  i2 = [int(rank, 2), int(-rank, 2)]
  call MPI_Allreduce(i2, r2, 2, MPI_INTEGER2, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(r2(1) == nranks - 1 .and. r2(2) == 0, 'allreduce INTEGER2 max')
  i8 = 2_8**40 + rank
  call MPI_Allreduce(i8, r8, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(r8 == nranks * 2_8**40 + total - nranks, 'allreduce INTEGER8')
  rv = [real(rank + 1), 0.5]
  call MPI_Allreduce(rv, rr, 2, MPI_REAL, MPI_PROD, MPI_COMM_WORLD, ierr)
  call check(rr(1) == product([(real(i), i = 1, nranks)]) .and. rr(2) == 0.5**nranks, &
             'allreduce REAL prod')
  dv = [rank * 1.5d0, -1d0]
  call MPI_Allreduce(dv, dr, 2, MPI_DOUBLE_PRECISION, MPI_MIN, MPI_COMM_WORLD, ierr)
  call check(dr(1) == 0d0 .and. dr(2) == -1d0, 'allreduce DOUBLE PRECISION min')
  call MPI_Allreduce(MPI_IN_PLACE, dv, 2, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(dv(1) == 1.5d0 * (total - nranks) .and. dv(2) == -nranks, 'MPI_IN_PLACE REAL8')
  cv = cmplx(rank, 1.0)
  call MPI_Allreduce(cv, cr, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(cr == cmplx(total - nranks, nranks), 'allreduce COMPLEX')
  zv = cmplx(1d0, rank, kind(zv))
  call MPI_Reduce(zv, zr, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(zr == cmplx(nranks, total - nranks, kind(zr)), &
                            'reduce DOUBLE COMPLEX')
  lv = [rank == 0, .true.]
  call MPI_Allreduce(lv, lr, 2, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(lr(1) .eqv. (nranks == 1) .and. lr(2), 'allreduce LOGICAL land')
  call MPI_Allreduce(lv, lr, 2, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(lr(1) .and. lr(2), 'allreduce LOGICAL lor')

  ! MAXLOC on pairs: value then location.
  pairs(:, 1) = [mod(rank, 2) * 10 + rank, rank]
  call MPI_Allreduce(pairs(:, 1), pairs(:, 2), 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check(pairs(2, 2) == merge(nranks - 1 - mod(nranks, 2), 0, nranks > 1), &
             'maxloc 2INTEGER location')
  dpair = [-dble(rank), dble(rank)]
  call MPI_Allreduce(dpair, dmax, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call check(dmax(1) == -(nranks - 1) .and. dmax(2) == nranks - 1, 'minloc 2DOUBLE_PRECISION')

  ! A reduction written in Fortran.
  call MPI_Op_create(fortran_sum, .true., op, ierr)
  iv = [rank, 1, 2]
  call MPI_Allreduce(iv, ir, 3, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  call check(all(ir == [total - nranks, nranks, 2 * nranks]), 'Fortran user op')
  call MPI_Op_free(op, ierr)
  call check(op == MPI_OP_NULL, 'op_free')

  ! Bcast of CHARACTER, Gather, Scatterv, Alltoall, Scan.
  word = 'nope '
  if (rank == nranks - 1) word = 'hello'
  call MPI_Bcast(word, 5, MPI_CHARACTER, nranks - 1, MPI_COMM_WORLD, ierr)
  call check(word == 'hello', 'bcast CHARACTER')
  gathered = -1
  call MPI_Gather(rank * 3, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(all(gathered(1:nranks) == [(3 * i, i = 0, nranks - 1)]), 'gather')
  counts = [(i, i = 1, 4)]
  displs = [(i * (i - 1) / 2, i = 1, 4)]
  gathered = [(100 + i, i = 1, 10)]
  sv = -1
  call MPI_Scatterv(gathered, counts, displs, MPI_INTEGER, sv, rank + 1, MPI_INTEGER, 0, &
                    MPI_COMM_WORLD, ierr)
  call check(all(sv(1:rank + 1) == [(100 + displs(rank + 1) + i, i = 1, rank + 1)]), 'scatterv')
  gathered(1:nranks) = [(rank * 10 + i, i = 0, nranks - 1)]
  call MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(gathered(1:nranks) == [(i * 10 + rank, i = 0, nranks - 1)]), 'alltoall in place')
  call MPI_Scan(rank + 1, i, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(i == (rank + 1) * (rank + 2) / 2, 'scan')

  call MPI_Finalize(ierr)
contains
  include 'check.inc'
end program coll

subroutine fortran_sum(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype, i
  integer :: invec(len), inoutvec(len)
  do i = 1, len
    inoutvec(i) = inoutvec(i) + invec(i)
  end do
end subroutine fortran_sum
