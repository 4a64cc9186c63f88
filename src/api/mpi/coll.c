/* MPI collectives on FMPL's collective core (the same algorithms as
 * fmpl.h's): barrier, bcast, reduce, allreduce.  The same bodies build the
 * nonblocking and persistent forms' schedules (coll_nbc.h): data moved
 * around the algorithm goes through the fmpl_mpi_coll_* helpers.  Any committed datatype: a
 * contiguous one is the user's bytes (from true_lb); a non-contiguous one
 * is packed into a staging buffer (dt_staging.c) around the byte-level
 * algorithm, and reductions see datatypes through fmpl_mpi_reduction
 * (op.c). */
#include "api/mpi/coll_nbc.h"
#include "api/mpi/intercomm.h"
#include "api/mpi/mpi_impl.h"
#include "base/scratch.h"
#include "collectives/collectives.h"

#include <stdlib.h>
#include <string.h>

int PMPI_Barrier(MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_barrier(ic)); /* intercomm_coll.c */
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Barrier",
                              "invalid communicator 0x%x", (unsigned)comm);
    return fmpl_coll_barrier(c->team) == FMPL_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
}
FMPL_MPI_WEAK(Barrier)

static int bcast(const char *func, void *buf, MPI_Count count, MPI_Datatype type, int root,
                 MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_bcast(ic, func, buf, count, type, root)); /* intercomm_coll.c */
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func,
                              "invalid communicator 0x%x", (unsigned)comm);
    if (count < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "count %lld is negative", (long long)count);
    if (root < 0 || root >= c->team->size)
        return fmpl_mpi_error(comm, MPI_ERR_ROOT, func, "root %d is outside 0 .. %d",
                              root, c->team->size - 1);
    fmpl_mpi_buf b;
    int rc = fmpl_mpi_buf_describe(comm, func, buf, count, type, 0, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    int is_root = c->team->rank == root;
    if (fmpl_mpi_coll_buf_stage(&b, is_root) != MPI_SUCCESS)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func,
                              "no memory for a %ld-byte staging buffer", (long)b.bytes);
    rc = fmpl_coll_bcast(c->team, b.data, b.bytes, root);
    fmpl_mpi_coll_buf_unstage(&b, is_root || rc != FMPL_SUCCESS ? 0 : b.bytes);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                                               "broadcast failed");
}
int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return bcast("MPI_Bcast", buf, count, type, root, comm);
}
FMPL_MPI_WEAK(Bcast)

int PMPI_Bcast_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return bcast("MPI_Bcast_c", buf, count, type, root, comm);
}
FMPL_MPI_WEAK(Bcast_c)

/* Grow-only scratch for reductions: a non-root's input copy and the tree
 * algorithms' work buffer (base/scratch.h: per thread, no malloc per call). */
static void *scratch(size_t bytes)
{
    return fmpl_scratch(FMPL_SCRATCH_REDUCE, bytes);
}

static int reduce_common(const char *func, const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_reduce(ic, func, sendbuf, recvbuf, count, type, op, root < 0 ? FMPL_MPI_INTER_ALL : root)); /* intercomm_coll.c */
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    if (count < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "count %lld is negative",
                              (long long)count);
    if (root >= 0 && root >= c->team->size)
        return fmpl_mpi_error(comm, MPI_ERR_ROOT, func, "root %d is outside 0 .. %d", root,
                              c->team->size - 1);
    fmpl_mpi_reduction r;
    int rc = fmpl_mpi_reduction_make(op, type, &r);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, func, "operation 0x%x on datatype 0x%x: %s",
                              (unsigned)op, (unsigned)type, r.why);
    int64_t n = fmpl_mpi_reduction_count(&r, count);
    size_t bytes = fmpl_mpi_reduction_bytes(&r, count);
    int is_root = root < 0 || root == c->team->rank;
    char *work = fmpl_mpi_capturing() ? fmpl_mpi_coll_scratch(2 * bytes + 64)
                                      : scratch(2 * bytes + 64);
    const fmpl_mpi_reduction *rr = fmpl_mpi_coll_reduction(&r);
    if (!work && bytes)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for %zu bytes", bytes);
    /* The result lands in recvbuf on the root(s) (staged: in a copy that is
     * then unpacked); others reduce a copy. */
    const char *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    char *buf = work + bytes;
    if (!r.type) {
        if (is_root)
            buf = (char *)recvbuf + r.offset;
        if (sendbuf != MPI_IN_PLACE || !is_root)
            fmpl_mpi_coll_copy(buf, in + r.offset, bytes);
    } else {
        fmpl_mpi_coll_reduction_in(rr, in, count, buf);
    }
    rc = root < 0 ? fmpl_coll_allreduce(c->team, buf, n, &rr->op, work)
                  : fmpl_coll_reduce(c->team, buf, n, &rr->op, root, work);
    if (r.type && is_root && rc == FMPL_SUCCESS)
        fmpl_mpi_coll_reduction_out(rr, buf, count, recvbuf);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                                               "reduction failed");
}

static int reduce(const char *func, const void *sendbuf, void *recvbuf, MPI_Count count,
                  MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_reduce(ic, func, sendbuf, recvbuf, count, type, op, root)); /* intercomm_coll.c */
    if (root < 0)
        return fmpl_mpi_error(comm, MPI_ERR_ROOT, func, "root %d is negative", root);
    return reduce_common(func, sendbuf, recvbuf, count, type, op, root, comm);
}

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return reduce("MPI_Reduce", sendbuf, recvbuf, count, type, op, root, comm);
}
FMPL_MPI_WEAK(Reduce)

int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                  MPI_Op op, int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return reduce("MPI_Reduce_c", sendbuf, recvbuf, count, type, op, root, comm);
}
FMPL_MPI_WEAK(Reduce_c)

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return reduce_common("MPI_Allreduce", sendbuf, recvbuf, count, type, op, -1, comm);
}
FMPL_MPI_WEAK(Allreduce)

int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                     MPI_Op op, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return reduce_common("MPI_Allreduce_c", sendbuf, recvbuf, count, type, op, -1, comm);
}
FMPL_MPI_WEAK(Allreduce_c)
