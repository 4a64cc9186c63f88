/* MPI data-movement and reduction collectives beyond barrier, bcast,
 * reduce and allreduce: gather(v), scatter(v), allgather(v), alltoall(v,w),
 * reduce_scatter(_block), scan, exscan.  Checks, handle conversion, counts
 * turned into bytes, then the collective core.  Contiguous datatypes only in
 * this version (derived ones return MPI_ERR_TYPE until the datatype binding
 * is integrated). */
#include "api/mpi/mpi_impl.h"
#include "collectives/collectives.h"
#include "collectives/op.h"

#include <stdlib.h>
#include <string.h>

/* Grow-only arrays for per-member byte counts and displacements. */
static int64_t *counts_scratch(int n, int which)
{
    static int64_t *buf[4];
    static int have[4];
    if (n > have[which]) {
        int64_t *p = realloc(buf[which], (size_t)n * sizeof *p);
        if (!p)
            return NULL;
        buf[which] = p;
        have[which] = n;
    }
    return buf[which];
}

typedef struct ctx {
    fmpl_mpi_comm *c;
    MPI_Comm comm;
    const char *func;
} ctx;

static int enter(ctx *x, MPI_Comm comm, const char *func)
{
    x->comm = comm;
    x->func = func;
    x->c = fmpl_mpi_comm_get(comm);
    if (fmpl_mpi_state != FMPL_MPI_READY)
        return fmpl_mpi_error(comm, MPI_ERR_OTHER, func, "MPI is not initialized");
    if (!x->c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    return MPI_SUCCESS;
}

static int type_size(ctx *x, MPI_Datatype t, MPI_Aint *size)
{
    int contiguous;
    if (fmpl_mpi_type_layout(t, size, &contiguous) != MPI_SUCCESS)
        return fmpl_mpi_type_check(x->comm, t, x->func);
    return fmpl_mpi_plain_type(x->comm, t, contiguous, x->func);
}

static int check_root(ctx *x, int root)
{
    if (root < 0 || root >= x->c->team->size)
        return fmpl_mpi_error(x->comm, MPI_ERR_ROOT, x->func, "root %d is outside 0 .. %d", root,
                              x->c->team->size - 1);
    return MPI_SUCCESS;
}

static int finish(ctx *x, int rc)
{
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(x->comm, fmpl_mpi_error_class_of(rc), x->func,
                                               "the collective failed");
}

#define TRY(expr)                                                                  \
    do {                                                                           \
        int r_ = (expr);                                                           \
        if (r_ != MPI_SUCCESS)                                                     \
            return r_;                                                             \
    } while (0)

/* ------------------------------------------------------------ gather, scatter */

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Gather"));
    TRY(check_root(&x, root));
    int me_root = x.c->team->rank == root, in_place = me_root && sendbuf == MPI_IN_PLACE;
    MPI_Aint ss = 0, rs = 0;
    if (!in_place)
        TRY(type_size(&x, sendtype, &ss));
    if (me_root)
        TRY(type_size(&x, recvtype, &rs));
    int64_t bytes = me_root ? (int64_t)recvcount * rs : (int64_t)sendcount * ss;
    return finish(&x, fmpl_coll_gather(x.c->team, sendbuf, recvbuf, bytes, root,
                                       in_place ? FMPL_COLL_IN_PLACE : 0));
}
FMPL_MPI_WEAK(Gather)

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Gatherv"));
    TRY(check_root(&x, root));
    int n = x.c->team->size, me_root = x.c->team->rank == root;
    int in_place = me_root && sendbuf == MPI_IN_PLACE;
    MPI_Aint ss = 0, rs = 0;
    if (!in_place)
        TRY(type_size(&x, sendtype, &ss));
    int64_t *rc = NULL, *rd = NULL;
    if (me_root) {
        TRY(type_size(&x, recvtype, &rs));
        rc = counts_scratch(n, 0);
        rd = counts_scratch(n, 1);
        if (!rc || !rd)
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
        for (int p = 0; p < n; p++) {
            rc[p] = (int64_t)recvcounts[p] * rs;
            rd[p] = (int64_t)displs[p] * rs;
        }
    }
    return finish(&x, fmpl_coll_gatherv(x.c->team, sendbuf, (int64_t)sendcount * ss, recvbuf,
                                        rc, rd, root, in_place ? FMPL_COLL_IN_PLACE : 0));
}
FMPL_MPI_WEAK(Gatherv)

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Scatter"));
    TRY(check_root(&x, root));
    int me_root = x.c->team->rank == root, in_place = me_root && recvbuf == MPI_IN_PLACE;
    MPI_Aint ss = 0, rs = 0;
    if (me_root)
        TRY(type_size(&x, sendtype, &ss));
    if (!in_place)
        TRY(type_size(&x, recvtype, &rs));
    int64_t bytes = me_root ? (int64_t)sendcount * ss : (int64_t)recvcount * rs;
    return finish(&x, fmpl_coll_scatter(x.c->team, sendbuf, recvbuf, bytes, root,
                                        in_place ? FMPL_COLL_IN_PLACE : 0));
}
FMPL_MPI_WEAK(Scatter)

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Scatterv"));
    TRY(check_root(&x, root));
    int n = x.c->team->size, me_root = x.c->team->rank == root;
    int in_place = me_root && recvbuf == MPI_IN_PLACE;
    MPI_Aint ss = 0, rs = 0;
    if (!in_place)
        TRY(type_size(&x, recvtype, &rs));
    int64_t *sc = NULL, *sd = NULL;
    if (me_root) {
        TRY(type_size(&x, sendtype, &ss));
        sc = counts_scratch(n, 0);
        sd = counts_scratch(n, 1);
        if (!sc || !sd)
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
        for (int p = 0; p < n; p++) {
            sc[p] = (int64_t)sendcounts[p] * ss;
            sd[p] = (int64_t)displs[p] * ss;
        }
    }
    return finish(&x, fmpl_coll_scatterv(x.c->team, sendbuf, sc, sd, recvbuf,
                                         (int64_t)recvcount * rs, root,
                                         in_place ? FMPL_COLL_IN_PLACE : 0));
}
FMPL_MPI_WEAK(Scatterv)

/* ------------------------------------------------------------ allgather, alltoall */

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Allgather"));
    MPI_Aint rs;
    TRY(type_size(&x, recvtype, &rs));
    int in_place = sendbuf == MPI_IN_PLACE;
    if (!in_place) {
        MPI_Aint ss;
        TRY(type_size(&x, sendtype, &ss));
        (void)sendcount;
    }
    return finish(&x, fmpl_coll_allgather(x.c->team, sendbuf, recvbuf, (int64_t)recvcount * rs,
                                          in_place ? FMPL_COLL_IN_PLACE : 0));
}
FMPL_MPI_WEAK(Allgather)

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Allgatherv"));
    MPI_Aint rs;
    TRY(type_size(&x, recvtype, &rs));
    int in_place = sendbuf == MPI_IN_PLACE;
    if (!in_place) {
        MPI_Aint ss;
        TRY(type_size(&x, sendtype, &ss));
        (void)sendcount;
    }
    int n = x.c->team->size;
    int64_t *rc = counts_scratch(n, 0), *rd = counts_scratch(n, 1);
    if (!rc || !rd)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    for (int p = 0; p < n; p++) {
        rc[p] = (int64_t)recvcounts[p] * rs;
        rd[p] = (int64_t)displs[p] * rs;
    }
    return finish(&x, fmpl_coll_allgatherv(x.c->team, sendbuf, recvbuf, rc, rd,
                                           in_place ? FMPL_COLL_IN_PLACE : 0));
}
FMPL_MPI_WEAK(Allgatherv)

/* MPI_IN_PLACE for alltoall: the core wants separate buffers, so the
 * receive buffer's contents are copied aside first. */
static void *in_place_copy(const void *recvbuf, size_t bytes)
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
    if (bytes)
        memcpy(buf, recvbuf, bytes);
    return buf;
}

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Alltoall"));
    MPI_Aint rs;
    TRY(type_size(&x, recvtype, &rs));
    int64_t bytes = (int64_t)recvcount * rs;
    if (sendbuf == MPI_IN_PLACE) {
        sendbuf = in_place_copy(recvbuf, (size_t)(bytes * x.c->team->size));
        if (!sendbuf && bytes)
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    } else {
        MPI_Aint ss;
        TRY(type_size(&x, sendtype, &ss));
        (void)sendcount;
    }
    return finish(&x, fmpl_coll_alltoall(x.c->team, sendbuf, recvbuf, bytes, 0));
}
FMPL_MPI_WEAK(Alltoall)

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Alltoallv"));
    int n = x.c->team->size;
    MPI_Aint rs, ss;
    TRY(type_size(&x, recvtype, &rs));
    int64_t *sc = counts_scratch(n, 0), *sd = counts_scratch(n, 1);
    int64_t *rc = counts_scratch(n, 2), *rd = counts_scratch(n, 3);
    if (!sc || !sd || !rc || !rd)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    int64_t extent = 0;
    for (int p = 0; p < n; p++) {
        rc[p] = (int64_t)recvcounts[p] * rs;
        rd[p] = (int64_t)rdispls[p] * rs;
        if (rd[p] + rc[p] > extent)
            extent = rd[p] + rc[p];
    }
    if (sendbuf == MPI_IN_PLACE) {
        sendbuf = in_place_copy(recvbuf, (size_t)extent);
        if (!sendbuf && extent)
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
        memcpy(sc, rc, (size_t)n * sizeof *sc);
        memcpy(sd, rd, (size_t)n * sizeof *sd);
    } else {
        TRY(type_size(&x, sendtype, &ss));
        for (int p = 0; p < n; p++) {
            sc[p] = (int64_t)sendcounts[p] * ss;
            sd[p] = (int64_t)sdispls[p] * ss;
        }
    }
    return finish(&x, fmpl_coll_alltoallv(x.c->team, sendbuf, sc, sd, recvbuf, rc, rd, 0));
}
FMPL_MPI_WEAK(Alltoallv)

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Alltoallw"));
    int n = x.c->team->size;
    int64_t *sc = counts_scratch(n, 0), *sd = counts_scratch(n, 1);
    int64_t *rc = counts_scratch(n, 2), *rd = counts_scratch(n, 3);
    if (!sc || !sd || !rc || !rd)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    int64_t extent = 0;
    for (int p = 0; p < n; p++) {
        MPI_Aint rs;
        TRY(type_size(&x, recvtypes[p], &rs));
        rc[p] = (int64_t)recvcounts[p] * rs;
        rd[p] = rdispls[p]; /* alltoallw displacements are in bytes */
        if (rd[p] + rc[p] > extent)
            extent = rd[p] + rc[p];
    }
    if (sendbuf == MPI_IN_PLACE) {
        sendbuf = in_place_copy(recvbuf, (size_t)extent);
        if (!sendbuf && extent)
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
        memcpy(sc, rc, (size_t)n * sizeof *sc);
        memcpy(sd, rd, (size_t)n * sizeof *sd);
    } else {
        for (int p = 0; p < n; p++) {
            MPI_Aint ss;
            TRY(type_size(&x, sendtypes[p], &ss));
            sc[p] = (int64_t)sendcounts[p] * ss;
            sd[p] = sdispls[p];
        }
    }
    return finish(&x, fmpl_coll_alltoallv(x.c->team, sendbuf, sc, sd, recvbuf, rc, rd, 0));
}
FMPL_MPI_WEAK(Alltoallw)

/* ------------------------------------------------------------ reductions */

static int make_op(ctx *x, MPI_Op op, MPI_Datatype type, fmpl_op *o, fmpl_mpi_user_ctx *uc)
{
    int rc = fmpl_mpi_op_make(op, type, o, uc);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(x->comm, rc, x->func,
                              "operation 0x%x is not defined on datatype 0x%x", (unsigned)op,
                              (unsigned)type);
    return MPI_SUCCESS;
}

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, "MPI_Reduce_scatter"));
    fmpl_op o;
    fmpl_mpi_user_ctx uc;
    TRY(make_op(&x, op, type, &o, &uc));
    int n = x.c->team->size;
    int64_t *counts = counts_scratch(n, 0);
    if (!counts)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    for (int p = 0; p < n; p++)
        counts[p] = recvcounts[p];
    int in_place = sendbuf == MPI_IN_PLACE;
    return finish(&x, fmpl_coll_reduce_scatter(x.c->team, sendbuf, recvbuf, counts, &o,
                                               in_place ? FMPL_COLL_IN_PLACE : 0));
}
FMPL_MPI_WEAK(Reduce_scatter)

/* Reduce_scatter_block, Scan and Exscan differ only in the core call. */
typedef int (*elementwise_fn)(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t count,
                              const fmpl_op *op, int flags);

static int elementwise(const char *func, elementwise_fn run, const void *sendbuf, void *recvbuf,
                       int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    ctx x;
    TRY(enter(&x, comm, func));
    fmpl_op o;
    fmpl_mpi_user_ctx uc;
    TRY(make_op(&x, op, type, &o, &uc));
    int flags = sendbuf == MPI_IN_PLACE ? FMPL_COLL_IN_PLACE : 0;
    return finish(&x, run(x.c->team, sendbuf, recvbuf, count, &o, flags));
}

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return elementwise("MPI_Reduce_scatter_block", fmpl_coll_reduce_scatter_block, sendbuf,
                       recvbuf, recvcount, type, op, comm);
}
FMPL_MPI_WEAK(Reduce_scatter_block)

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm)
{
    return elementwise("MPI_Scan", fmpl_coll_scan, sendbuf, recvbuf, count, type, op, comm);
}
FMPL_MPI_WEAK(Scan)

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm)
{
    return elementwise("MPI_Exscan", fmpl_coll_exscan, sendbuf, recvbuf, count, type, op, comm);
}
FMPL_MPI_WEAK(Exscan)
