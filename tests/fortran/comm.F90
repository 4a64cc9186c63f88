! Communicators from Fortran (mpif.h with FMPL_TEST_MPIF_H, else `use mpi`):
! split, dup and compare, names (CHARACTER), a Cartesian topology with
! LOGICAL periods, groups, attributes with a Fortran copy callback and the
! predefined MPI_TAG_UB, info strings.
program comm
#include "interface.inc"
  integer :: ierr, rank, nranks, half, dup, cart, res, nlen, i, j, keyval, dup2, info
  integer :: dims(1), coords(1), src, dst, wgroup, g, ranks(1), tr(1)
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  logical :: periods(1), flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=20) :: value

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB')
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call MPI_Comm_size(half, i, ierr)
  call check(i == (nranks + 1 - mod(rank, 2)) / 2, 'split size')
  call MPI_Comm_rank(half, i, ierr)
  ! Keys -rank: ranks in the reverse order of MPI_COMM_WORLD's.
  call check(i == count([(mod(j, 2) == mod(rank, 2) .and. j > rank, j = 0, nranks - 1)]), &
             'split rank order')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_compare(MPI_COMM_WORLD, dup, res, ierr)
  call check(res == MPI_CONGRUENT, 'compare dup')
  call MPI_Comm_set_name(dup, 'my dup  ', ierr)
  call MPI_Comm_get_name(dup, name, nlen, ierr)
  call check(name == 'my dup' .and. nlen == 6, 'comm name')

  ! Attributes: a Fortran-copied keyval follows MPI_Comm_dup.
  extra = 5
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, extra, ierr)
  call MPI_Comm_set_attr(dup, keyval, 12345_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  val = 0
  call MPI_Comm_get_attr(dup2, keyval, val, flag, ierr)
  call check(flag .and. val == 12345, 'attribute copied by MPI_COMM_DUP_FN')
  call MPI_Comm_delete_attr(dup2, keyval, ierr)
  call MPI_Comm_get_attr(dup2, keyval, val, flag, ierr)
  call check(.not. flag, 'attribute deleted')
  call MPI_Comm_free(dup2, ierr)
  call MPI_Comm_free_keyval(keyval, ierr)

  ! A periodic ring.
  dims = 0
  call MPI_Dims_create(nranks, 1, dims, ierr)
  periods = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call MPI_Cart_coords(cart, rank, 1, coords, ierr)
  call check(coords(1) == rank, 'cart coords')
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  call check(src == mod(rank + nranks - 1, nranks) .and. dst == mod(rank + 1, nranks), &
             'cart shift')
  periods = .false.
  call MPI_Cart_get(cart, 1, dims, periods, coords, ierr)
  call check(periods(1) .and. dims(1) == nranks, 'cart_get LOGICAL periods')

  ! Groups.
  call MPI_Comm_group(MPI_COMM_WORLD, wgroup, ierr)
  ranks = nranks - 1
  call MPI_Group_incl(wgroup, 1, ranks, g, ierr)
  tr = -5
  call MPI_Group_translate_ranks(g, 1, [0], wgroup, tr, ierr)
  call check(tr(1) == nranks - 1, 'group translate')
  call MPI_Group_free(g, ierr)
  call MPI_Group_free(wgroup, ierr)

  ! Info strings.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'color', 'blue', ierr)
  call MPI_Info_get(info, 'color', len(value), value, flag, ierr)
  call check(flag .and. value == 'blue', 'info get')
  call MPI_Info_get(info, 'shape', len(value), value, flag, ierr)
  call check(.not. flag, 'info missing key')
  call MPI_Info_free(info, ierr)

  call MPI_Comm_free(cart, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(half, ierr)
  call check(half == MPI_COMM_NULL, 'comm_free')
  call MPI_Finalize(ierr)
contains
  include 'check.inc'
end program comm
