/* mpi.h in strict ISO C99 with every warning an error (built, not run). */
#include <mpi.h>

int main(void)
{
    MPI_Status status;
    status.MPI_ERROR = MPI_SUCCESS;
    return status.MPI_ERROR;
}
