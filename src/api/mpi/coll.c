/* MPI collectives on FMPL's collective core (the same algorithms as
 * fmpl.h's).  Contiguous data only in this version. */
#include "api/mpi/mpi_impl.h"
#include "collectives/collectives.h"

int PMPI_Barrier(MPI_Comm comm)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Barrier",
                              "invalid communicator 0x%x", (unsigned)comm);
    return fmpl_coll_barrier(c->team) == FMPL_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
}
FMPL_MPI_WEAK(Barrier)

int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Bcast",
                              "invalid communicator 0x%x", (unsigned)comm);
    MPI_Aint size;
    int contiguous;
    if (count < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, "MPI_Bcast", "count %d is negative", count);
    if (fmpl_mpi_type_layout(type, &size, &contiguous) != MPI_SUCCESS)
        return fmpl_mpi_error(comm, MPI_ERR_TYPE, "MPI_Bcast", "invalid or unsupported datatype");
    if (root < 0 || root >= c->team->size)
        return fmpl_mpi_error(comm, MPI_ERR_ROOT, "MPI_Bcast", "root %d is outside 0 .. %d",
                              root, c->team->size - 1);
    int rc = fmpl_coll_bcast(c->team, buf, (int64_t)count * size, root);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), "MPI_Bcast",
                                               "broadcast failed");
}
FMPL_MPI_WEAK(Bcast)
