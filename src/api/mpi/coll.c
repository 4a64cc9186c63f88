/* MPI collectives on FMPL's collective core (the same algorithms as
 * fmpl.h's).  Plain contiguous datatypes only in this version. */
#include "api/mpi/mpi_impl.h"
#include "collectives/collectives.h"

#include <stdlib.h>
#include <string.h>

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
        return fmpl_mpi_type_check(comm, type, "MPI_Bcast");
    int prc = fmpl_mpi_plain_type(comm, type, contiguous, "MPI_Bcast");
    if (prc != MPI_SUCCESS)
        return prc;
    if (root < 0 || root >= c->team->size)
        return fmpl_mpi_error(comm, MPI_ERR_ROOT, "MPI_Bcast", "root %d is outside 0 .. %d",
                              root, c->team->size - 1);
    int rc = fmpl_coll_bcast(c->team, buf, (int64_t)count * size, root);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), "MPI_Bcast",
                                               "broadcast failed");
}
FMPL_MPI_WEAK(Bcast)

/* Grow-only scratch for reductions: a non-root's input copy and the tree
 * algorithms' work buffer.  Allocated once per size increase, not per call. */
static void *scratch(size_t bytes)
{
    static void *buf;
    static size_t have;
    if (bytes > have) {
        void *p = realloc(buf, bytes);
        if (!p)
            return NULL;
        buf = p;
        have = bytes;
    }
    return buf;
}

static int reduce_common(const char *func, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    if (count < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "count %d is negative", count);
    if (root >= 0 && root >= c->team->size)
        return fmpl_mpi_error(comm, MPI_ERR_ROOT, func, "root %d is outside 0 .. %d", root,
                              c->team->size - 1);
    fmpl_op o;
    fmpl_mpi_user_ctx ctx;
    int rc = fmpl_mpi_op_make(op, type, &o, &ctx);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, func, "operation 0x%x is not defined on datatype 0x%x",
                              (unsigned)op, (unsigned)type);
    size_t bytes = (size_t)count * fmpl_op_elem_size(&o);
    int is_root = root < 0 || root == c->team->rank;
    char *work = scratch(2 * bytes + 64);
    if (!work && bytes)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for %zu bytes", bytes);
    /* The result lands in recvbuf on the root(s); others reduce a copy. */
    char *buf = is_root ? recvbuf : work + bytes;
    if (sendbuf != MPI_IN_PLACE || !is_root)
        memmove(buf, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, bytes);
    rc = root < 0 ? fmpl_coll_allreduce(c->team, buf, count, &o, work)
                  : fmpl_coll_reduce(c->team, buf, count, &o, root, work);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                                               "reduction failed");
}

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm)
{
    if (root < 0)
        return fmpl_mpi_error(comm, MPI_ERR_ROOT, "MPI_Reduce", "root %d is negative", root);
    return reduce_common("MPI_Reduce", sendbuf, recvbuf, count, type, op, root, comm);
}
FMPL_MPI_WEAK(Reduce)

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce", sendbuf, recvbuf, count, type, op, -1, comm);
}
FMPL_MPI_WEAK(Allreduce)
