! MPI_Sizeof from a program built with MPICH's modules (mpif90.mpich), run
! on FMPL's libraries by fortran.mpich_binary: with `use mpi`
! (MPICH's specifics in module mpi_sizeofs: scalars and rank-1 arrays) and,
! built with -DFMPL_TEST_F08, `use mpi_f08` (module mpi_f08_types: any rank).
! Each specific is a procedure of the library (__<module>_MOD_mpi_sizeof_*),
! so the program loads only if every one it names is exported.  The answer
! is the storage size of one element; a CHARACTER's is 1 whatever its
! length (MPICH's specifics take CHARACTER(LEN=1)).
program mpich_sizeof
#ifdef FMPL_TEST_F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer :: rank, sz, ierr
  integer(kind=1) :: i1, i1v(3)
  integer(kind=2) :: i2, i2v(3)
  integer(kind=4) :: i4, i4v(3)
  integer(kind=8) :: i8, i8v(3)
  real(kind=4) :: r4, r4v(3)
  real(kind=8) :: r8, r8v(3)
  complex(kind=4) :: c4, c4v(3)
  logical :: l, lv(3)
  character(len=5) :: ch, chv(3)
#ifdef FMPL_TEST_F08
  integer(kind=8) :: i8m(2, 3)
  real(kind=16) :: r16, r16m(2, 2, 2)
  complex(kind=8) :: c8
  complex(kind=16) :: c16v(4)
#endif

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  ierr = -1
  call MPI_Sizeof(i1, sz, ierr)
  call check(sz == 1 .and. ierr == MPI_SUCCESS, 'INTEGER(1)')
  call MPI_Sizeof(i1v, sz, ierr)
  call check(sz == 1, 'INTEGER(1) array')
  call MPI_Sizeof(i2, sz, ierr)
  call check(sz == 2, 'INTEGER(2)')
  call MPI_Sizeof(i2v, sz, ierr)
  call check(sz == 2, 'INTEGER(2) array')
  call MPI_Sizeof(i4, sz, ierr)
  call check(sz == 4, 'INTEGER')
  call MPI_Sizeof(i4v, sz, ierr)
  call check(sz == 4, 'INTEGER array')
  call MPI_Sizeof(i8, sz, ierr)
  call check(sz == 8, 'INTEGER(8)')
  call MPI_Sizeof(i8v, sz, ierr)
  call check(sz == 8, 'INTEGER(8) array')
  call MPI_Sizeof(r4, sz, ierr)
  call check(sz == 4, 'REAL')
  call MPI_Sizeof(r4v, sz, ierr)
  call check(sz == 4, 'REAL array')
  call MPI_Sizeof(r8, sz, ierr)
  call check(sz == 8, 'DOUBLE PRECISION')
  call MPI_Sizeof(r8v, sz, ierr)
  call check(sz == 8, 'DOUBLE PRECISION array')
  call MPI_Sizeof(c4, sz, ierr)
  call check(sz == 8, 'COMPLEX')
  call MPI_Sizeof(c4v, sz, ierr)
  call check(sz == 8, 'COMPLEX array')
  call MPI_Sizeof(l, sz, ierr)
  call check(sz == 4, 'LOGICAL')
  call MPI_Sizeof(lv, sz, ierr)
  call check(sz == 4, 'LOGICAL array')
  call MPI_Sizeof(ch, sz, ierr)
  call check(sz == 1, 'CHARACTER(5)')
  call MPI_Sizeof(chv, sz, ierr)
  call check(sz == 1, 'CHARACTER(5) array')
#ifdef FMPL_TEST_F08
  call MPI_Sizeof(i8m, sz)
  call check(sz == 8, 'INTEGER(8) matrix, no ierror')
  call MPI_Sizeof(r16, sz, ierr)
  call check(sz == 16, 'REAL(16)')
  call MPI_Sizeof(r16m, sz, ierr)
  call check(sz == 16, 'REAL(16) rank 3')
  call MPI_Sizeof(c8, sz, ierr)
  call check(sz == 16, 'COMPLEX(8)')
  call MPI_Sizeof(c16v, sz, ierr)
  call check(sz == 32, 'COMPLEX(16) array')
#endif

  if (rank == 0) print '(a)', 'mpich_sizeof: ok'
  call MPI_Finalize(ierr)

contains

  include 'check.inc'

end program mpich_sizeof
