! Error handling from Fortran (mpif.h with FMPL_TEST_MPIF_H, else `use mpi`):
! MPI_ERRORS_RETURN codes and classes, error strings, a Fortran error
! handler called with the communicator and the code, MPI_Comm_call_errhandler.
module handler_calls
  implicit none
  integer :: calls = 0, last_code = 0
end module handler_calls

program errors
  use handler_calls
#include "interface.inc"
  integer :: ierr, rank, nranks, cls, nlen, eh, buf(1)
  character(len=MPI_MAX_ERROR_STRING) :: msg
  external :: count_errors

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(buf, 1, MPI_INTEGER, nranks, 0, MPI_COMM_WORLD, ierr)
  call check(ierr /= MPI_SUCCESS, 'send to a rank out of range fails')
  call MPI_Error_class(ierr, cls, ierr)
  call check(cls == MPI_ERR_RANK, 'its class is MPI_ERR_RANK')
  call MPI_Error_string(MPI_ERR_RANK, msg, nlen, ierr)
  call check(ierr == MPI_SUCCESS .and. nlen > 0 .and. nlen == len_trim(msg), 'error string')
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  call check(cls == MPI_ERR_COUNT, 'negative count: MPI_ERR_COUNT')
  call MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  call check(cls == MPI_ERR_TYPE, 'null datatype: MPI_ERR_TYPE')

  ! A handler written in Fortran.
  call MPI_Comm_create_errhandler(count_errors, eh, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh, ierr)
  call MPI_Send(buf, 1, MPI_INTEGER, nranks + 3, 0, MPI_COMM_WORLD, ierr)
  call check(calls == 1, 'Fortran handler called')
  call MPI_Error_class(last_code, cls, ierr)
  call check(cls == MPI_ERR_RANK, 'handler got the code')
  call MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER, ierr)
  call check(calls == 2 .and. last_code == MPI_ERR_OTHER, 'MPI_Comm_call_errhandler')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_Errhandler_free(eh, ierr)
  call check(eh == MPI_ERRHANDLER_NULL, 'errhandler_free')
  call MPI_Finalize(ierr)
contains
  include 'check.inc'
end program errors

subroutine count_errors(comm, code)
  use handler_calls
  implicit none
  integer :: comm, code
  calls = calls + 1
  last_code = code
  if (comm == 0) calls = -100   ! a real handle is never 0
end subroutine count_errors
