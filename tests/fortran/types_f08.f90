! Derived datatypes with `use mpi_f08`: TYPE(MPI_Datatype), a row of a
! column-major matrix (vector), a struct of two variables sent from
! MPI_BOTTOM by absolute address, size, extent and name, pack/unpack, and
! MPI_Sizeof for scalars and arrays of several kinds.
program types_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, right, left, i, j, sz, pos, nlen, ival, ival_in
  integer :: a(4, 5), row(5), blens(2)
  real(kind=8) :: dval, dval_in, darr(3)
  complex(kind=4) :: carr(2, 2)
  integer(kind=2) :: short
  logical :: flag
  type(MPI_Datatype) :: rowtype, sendtype, recvtype, mtypes(2)
  integer(kind=MPI_ADDRESS_KIND) :: displs(2), lb, extent
  character(len=64) :: name
  character(len=100) :: packed

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  call MPI_Type_vector(5, 1, 4, MPI_INTEGER, rowtype)
  call MPI_Type_commit(rowtype)
  call MPI_Type_size(rowtype, sz)
  call MPI_Type_get_extent(rowtype, lb, extent)
  call check(sz == 20 .and. lb == 0 .and. extent == 4 * 17, 'vector size/extent')
  call MPI_Type_set_name(rowtype, 'matrix row')
  call MPI_Type_get_name(rowtype, name, nlen)
  call check(name == 'matrix row' .and. nlen == 10, 'type name')
  a = reshape([(rank * 100 + i, i = 1, 20)], [4, 5])
  row = -1
  call MPI_Sendrecv(a(2, 1), 1, rowtype, right, 1, row, 5, MPI_INTEGER, left, 1, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(all(row == [(left * 100 + 2 + 4 * j, j = 0, 4)]), 'vector row')
  call MPI_Type_free(rowtype)
  call check(rowtype == MPI_DATATYPE_NULL, 'type_free')

  ival = rank + 7
  dval = rank * 0.5d0
  blens = [1, 1]
  mtypes = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Get_address(ival, displs(1))
  call MPI_Get_address(dval, displs(2))
  call MPI_Type_create_struct(2, blens, displs, mtypes, sendtype)
  call MPI_Type_commit(sendtype)
  call MPI_Get_address(ival_in, displs(1))
  call MPI_Get_address(dval_in, displs(2))
  call MPI_Type_create_struct(2, blens, displs, mtypes, recvtype)
  call MPI_Type_commit(recvtype)
  ival_in = -1
  dval_in = -1
  call MPI_Sendrecv(MPI_BOTTOM, 1, sendtype, right, 3, MPI_BOTTOM, 1, recvtype, left, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_F_sync_reg(ival_in)
  call MPI_F_sync_reg(dval_in)
  call check(ival_in == left + 7 .and. dval_in == left * 0.5d0, 'struct at MPI_BOTTOM')
  call MPI_Type_free(recvtype)
  call MPI_Type_free(sendtype)

  pos = 0
  call MPI_Pack(ival, 1, MPI_INTEGER, packed, len(packed), pos, MPI_COMM_WORLD)
  call MPI_Pack(dval, 1, MPI_DOUBLE_PRECISION, packed, len(packed), pos, MPI_COMM_WORLD)
  call check(pos == 12, 'pack position')
  pos = 0
  call MPI_Unpack(packed, len(packed), pos, ival_in, 1, MPI_INTEGER, MPI_COMM_WORLD)
  call MPI_Unpack(packed, len(packed), pos, dval_in, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
  call check(ival_in == ival .and. dval_in == dval .and. pos == 12, 'unpack')

  ! MPI_Sizeof: an array's answer is the size of one element.
  call MPI_Sizeof(ival, sz)
  call check(sz == 4, 'sizeof INTEGER')
  call MPI_Sizeof(darr, sz)
  call check(sz == 8, 'sizeof REAL(8) array')
  call MPI_Sizeof(carr, sz, i)
  call check(sz == 8 .and. i == MPI_SUCCESS, 'sizeof COMPLEX(4) matrix')
  call MPI_Sizeof(short, sz)
  call check(sz == 2, 'sizeof INTEGER(2)')
  call MPI_Sizeof(flag, sz)
  call check(sz == 4, 'sizeof LOGICAL')
  call MPI_Finalize()
contains
  include 'check.inc'
end program types_f08
