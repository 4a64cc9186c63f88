! Derived datatypes from Fortran (mpif.h with FMPL_TEST_MPIF_H, else
! `use mpi`): a row of a column-major matrix (vector), a struct sent from
! MPI_BOTTOM with absolute addresses, sizes and extents, names, pack/unpack,
! MPI_Sizeof (use mpi).
program types
#include "interface.inc"
  integer :: ierr, rank, nranks, right, left, rowtype, structtype, i, j, sz, pos, nlen
  integer :: a(4, 5), row(5), blens(2), mtypes(2), ival, ival_in, sendtype
  real(kind=8) :: dval, dval_in
  integer(kind=MPI_ADDRESS_KIND) :: displs(2), lb, extent
  character(len=64) :: name
  character(len=100) :: packed

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  ! Row 2 of a 4x5 column-major INTEGER matrix: 5 elements, stride 4.
  call MPI_Type_vector(5, 1, 4, MPI_INTEGER, rowtype, ierr)
  call MPI_Type_commit(rowtype, ierr)
  call MPI_Type_size(rowtype, sz, ierr)
  call MPI_Type_get_extent(rowtype, lb, extent, ierr)
  call check(sz == 20 .and. lb == 0 .and. extent == 4 * 17, 'vector size/extent')
  call MPI_Type_set_name(rowtype, 'matrix row', ierr)
  call MPI_Type_get_name(rowtype, name, nlen, ierr)
  call check(name == 'matrix row' .and. nlen == 10, 'type name')
  a = reshape([(rank * 100 + i, i = 1, 20)], [4, 5])
  row = -1
  call MPI_Sendrecv(a(2, 1), 1, rowtype, right, 1, row, 5, MPI_INTEGER, left, 1, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(row == [(left * 100 + 2 + 4 * j, j = 0, 4)]), 'vector row')
  call MPI_Type_free(rowtype, ierr)
  call check(rowtype == MPI_DATATYPE_NULL, 'type_free')

  ! A struct {INTEGER, DOUBLE PRECISION} of two variables, by absolute address.
  ival = rank + 7
  dval = rank * 0.5d0
  call MPI_Get_address(ival, displs(1), ierr)
  call MPI_Get_address(dval, displs(2), ierr)
  blens = [1, 1]
  mtypes = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_create_struct(2, blens, displs, mtypes, structtype, ierr)
  call MPI_Type_commit(structtype, ierr)
  ! Sent from MPI_BOTTOM, received into the same layout of two other variables.
  call MPI_Type_free(structtype, ierr)
  call check(structtype == MPI_DATATYPE_NULL, 'struct freed')
  call MPI_Get_address(ival, displs(1), ierr)
  call MPI_Get_address(dval, displs(2), ierr)
  call MPI_Type_create_struct(2, blens, displs, mtypes, sendtype, ierr)
  call MPI_Type_commit(sendtype, ierr)
  call MPI_Get_address(ival_in, displs(1), ierr)
  call MPI_Get_address(dval_in, displs(2), ierr)
  call MPI_Type_create_struct(2, blens, displs, mtypes, structtype, ierr)
  call MPI_Type_commit(structtype, ierr)
  ival_in = -1
  dval_in = -1
  call MPI_Sendrecv(MPI_BOTTOM, 1, sendtype, right, 3, MPI_BOTTOM, 1, structtype, left, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  ! The compiler cannot see that the call wrote them (MPI-4.0 19.1.17).
  call MPI_F_sync_reg(ival_in)
  call MPI_F_sync_reg(dval_in)
  call check(ival_in == left + 7 .and. dval_in == left * 0.5d0, 'struct at MPI_BOTTOM')
  call MPI_Type_free(structtype, ierr)
  call MPI_Type_free(sendtype, ierr)

  ! Pack an INTEGER and a DOUBLE PRECISION, unpack them.
  pos = 0
  call MPI_Pack(ival, 1, MPI_INTEGER, packed, len(packed), pos, MPI_COMM_WORLD, ierr)
  call MPI_Pack(dval, 1, MPI_DOUBLE_PRECISION, packed, len(packed), pos, MPI_COMM_WORLD, ierr)
  call check(pos == 12, 'pack position')
  pos = 0
  call MPI_Unpack(packed, len(packed), pos, ival_in, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Unpack(packed, len(packed), pos, dval_in, 1, MPI_DOUBLE_PRECISION, &
                  MPI_COMM_WORLD, ierr)
  call check(ival_in == ival .and. dval_in == dval .and. pos == 12, 'unpack')
#ifndef FMPL_TEST_MPIF_H
  ! MPI_Sizeof (the mpi module's; mpif.h has no generics): an array's
  ! answer is the size of one element.
  call MPI_Sizeof(dval, sz, ierr)
  call check(sz == 8 .and. ierr == MPI_SUCCESS, 'sizeof DOUBLE PRECISION')
  call MPI_Sizeof(a, sz, ierr)
  call check(sz == 4, 'sizeof INTEGER matrix')
#endif
  call MPI_Finalize(ierr)
contains
  include 'check.inc'
end program types
