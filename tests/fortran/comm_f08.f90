! Communicators with `use mpi_f08`: TYPE(MPI_Comm)/(MPI_Group)/(MPI_Info),
! split, dup and compare, names, a Cartesian ring with LOGICAL periods,
! attributes (MPI_TAG_UB, a keyval copied by MPI_COMM_DUP_FN), groups, info.
program comm_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, i, j, res, nlen, keyval, src, dst
  integer :: dims(1), coords(1), tr(1)
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  logical :: periods(1), flag
  type(MPI_Comm) :: half, dup, dup2, cart
  type(MPI_Group) :: wgroup, g
  type(MPI_Info) :: info
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=20) :: value

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB')
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half)
  call MPI_Comm_size(half, i)
  call check(i == (nranks + 1 - mod(rank, 2)) / 2, 'split size')
  call MPI_Comm_rank(half, i)
  call check(i == count([(mod(j, 2) == mod(rank, 2) .and. j > rank, j = 0, nranks - 1)]), &
             'split rank order')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_compare(MPI_COMM_WORLD, dup, res)
  call check(res == MPI_CONGRUENT, 'compare dup')
  call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, res)
  call check(res == MPI_IDENT, 'compare itself')
  call MPI_Comm_set_name(dup, 'my dup  ')
  call MPI_Comm_get_name(dup, name, nlen)
  call check(name == 'my dup' .and. nlen == 6, 'comm name')

  extra = 5
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, extra)
  call MPI_Comm_set_attr(dup, keyval, 12345_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, dup2)
  val = 0
  call MPI_Comm_get_attr(dup2, keyval, val, flag)
  call check(flag .and. val == 12345, 'attribute copied by MPI_COMM_DUP_FN')
  call MPI_Comm_delete_attr(dup2, keyval)
  call MPI_Comm_get_attr(dup2, keyval, val, flag)
  call check(.not. flag, 'attribute deleted')
  call MPI_Comm_free(dup2)
  call MPI_Comm_free_keyval(keyval)

  dims = 0
  call MPI_Dims_create(nranks, 1, dims)
  periods = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart)
  call MPI_Cart_coords(cart, rank, 1, coords)
  call check(coords(1) == rank, 'cart coords')
  call MPI_Cart_shift(cart, 0, 1, src, dst)
  call check(src == mod(rank + nranks - 1, nranks) .and. dst == mod(rank + 1, nranks), &
             'cart shift')
  periods = .false.
  call MPI_Cart_get(cart, 1, dims, periods, coords)
  call check(periods(1) .and. dims(1) == nranks, 'cart_get LOGICAL periods')

  call MPI_Comm_group(MPI_COMM_WORLD, wgroup)
  call MPI_Group_incl(wgroup, 1, [nranks - 1], g)
  tr = -5
  call MPI_Group_translate_ranks(g, 1, [0], wgroup, tr)
  call check(tr(1) == nranks - 1, 'group translate')
  call MPI_Group_free(g)
  call check(g == MPI_GROUP_NULL, 'group_free')
  call MPI_Group_free(wgroup)

  call MPI_Info_create(info)
  call MPI_Info_set(info, 'color', 'blue')
  call MPI_Info_get(info, 'color', len(value), value, flag)
  call check(flag .and. value == 'blue', 'info get')
  call MPI_Info_get(info, 'shape', len(value), value, flag)
  call check(.not. flag, 'info missing key')
  call MPI_Info_free(info)
  call check(info == MPI_INFO_NULL, 'info_free')

  call MPI_Comm_free(cart)
  call MPI_Comm_free(dup)
  call MPI_Comm_free(half)
  call check(half == MPI_COMM_NULL, 'comm_free')
  call MPI_Finalize()
contains
  include 'check.inc'
end program comm_f08
