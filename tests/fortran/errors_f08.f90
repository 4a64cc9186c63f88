! Error handling with `use mpi_f08`: MPI_ERRORS_RETURN codes and classes
! (returned through the optional ierror), error strings, a Fortran error
! handler taking TYPE(MPI_Comm), MPI_Comm_call_errhandler, TYPE(MPI_Errhandler).
module handler_calls_f08
  implicit none
  integer :: calls = 0, last_code = 0
end module handler_calls_f08

program errors_f08
  use mpi_f08
  use handler_calls_f08
  implicit none
  integer :: ierr, rank, nranks, cls, nlen, buf(1)
  type(MPI_Errhandler) :: eh
  character(len=MPI_MAX_ERROR_STRING) :: msg
  external :: count_errors_f08

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(buf, 1, MPI_INTEGER, nranks, 0, MPI_COMM_WORLD, ierr)
  call check(ierr /= MPI_SUCCESS, 'send to a rank out of range fails')
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_RANK, 'its class is MPI_ERR_RANK')
  call MPI_Error_string(MPI_ERR_RANK, msg, nlen, ierr)
  call check(ierr == MPI_SUCCESS .and. nlen > 0 .and. nlen == len_trim(msg), 'error string')
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_COUNT, 'negative count: MPI_ERR_COUNT')
  call MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_TYPE, 'null datatype: MPI_ERR_TYPE')
  call MPI_Recv(buf, 1, MPI_INTEGER, 0, -5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_TAG, 'negative tag: MPI_ERR_TAG')

  call MPI_Comm_create_errhandler(count_errors_f08, eh)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh)
  call MPI_Send(buf, 1, MPI_INTEGER, nranks + 3, 0, MPI_COMM_WORLD)
  call check(calls == 1, 'Fortran handler called')
  call MPI_Error_class(last_code, cls)
  call check(cls == MPI_ERR_RANK, 'handler got the code')
  call MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER)
  call check(calls == 2 .and. last_code == MPI_ERR_OTHER, 'MPI_Comm_call_errhandler')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
  call MPI_Errhandler_free(eh)
  call check(eh == MPI_ERRHANDLER_NULL, 'errhandler_free')
  call MPI_Finalize()
contains
  include 'check.inc'
end program errors_f08

subroutine count_errors_f08(comm, code)
  use mpi_f08, only: MPI_Comm, MPI_COMM_WORLD, operator(==)
  use handler_calls_f08
  implicit none
  type(MPI_Comm) :: comm
  integer :: code
  calls = calls + 1
  last_code = code
  if (.not. (comm == MPI_COMM_WORLD)) calls = -100
end subroutine count_errors_f08
