/* MPI data-movement and reduction collectives beyond barrier, bcast,
 * reduce and allreduce: gather(v), scatter(v), allgather(v), alltoall(v,w),
 * reduce_scatter(_block), scan, exscan.  Checks, handle conversion, counts
 * turned into bytes, then the collective core.
 *
 * Any committed datatype: each buffer argument is a set of blocks
 * (coll_stage.h).  Contiguous types (derived ones from their true_lb) go to
 * the byte-level algorithms as they are; a non-contiguous one is packed
 * into a staging buffer before the algorithm and unpacked after, and the
 * send and receive sides may use different types with the same signature.
 * MPI_IN_PLACE packs the part of the receive buffer that is input (the
 * root's block of gather, the own block of allgather, the whole buffer of
 * alltoall).  Reductions see datatypes through fmpl_mpi_reduction (op.c):
 * staged operands are converted to the operation's stream and back.
 * The same bodies build the nonblocking and persistent forms' schedules
 * (coll_nbc.h): data moved around the algorithm goes through the
 * fmpl_mpi_coll_* helpers. */
#include "api/mpi/coll_nbc.h"
#include "api/mpi/intercomm.h"
#include "base/scratch.h"
#include "collectives/collectives.h"
#include "collectives/op.h"

#include <stdlib.h>
#include <string.h>

/* Grow-only arrays for per-member byte counts and displacements, one set
 * per thread (base/scratch.h). */
static int64_t *counts_scratch(int n, int which)
{
    return fmpl_scratch((fmpl_scratch_slot)(FMPL_SCRATCH_COUNTS0 + which), (size_t)n * sizeof(int64_t));
}

#define TRY(expr)                                                                  \
    do {                                                                           \
        int r_ = (expr);                                                           \
        if (r_ != MPI_SUCCESS)                                                     \
            return r_;                                                             \
    } while (0)

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

static int check_type(ctx *x, MPI_Datatype t)
{
    MPI_Aint size;
    int contiguous;
    if (fmpl_mpi_type_layout(t, &size, &contiguous) != MPI_SUCCESS)
        return fmpl_mpi_type_check(x->comm, t, x->func);
    return MPI_SUCCESS;
}

/* Every count of an argument that matters on this member is >= 0. */
static int check_counts(ctx *x, const fmpl_mpi_blocks *b)
{
    for (int p = 0; b && p < (b->counts.p ? b->n : 1); p++) {
        int64_t c = b->counts.p ? fmpl_mpi_array_at(b->counts, p) : b->count;
        if (c < 0 && b->counts.p)
            return fmpl_mpi_error(x->comm, MPI_ERR_COUNT, x->func,
                                  "count %lld for member %d is negative", (long long)c, p);
        if (c < 0)
            return fmpl_mpi_error(x->comm, MPI_ERR_COUNT, x->func, "count %lld is negative",
                                  (long long)c);
    }
    return MPI_SUCCESS;
}

/* Stage the blocks of up to two arguments (a NULL one is skipped); on
 * failure nothing stays staged. */
static int stage(ctx *x, fmpl_mpi_blocks *a, fmpl_mpi_blocks *b)
{
    TRY(check_counts(x, a));
    TRY(check_counts(x, b));
    int rc = a ? fmpl_mpi_blocks_init(a) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && b)
        rc = fmpl_mpi_blocks_init(b);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (a)
        fmpl_mpi_blocks_done(a);
    if (b)
        fmpl_mpi_blocks_done(b);
    return fmpl_mpi_error(x->comm, MPI_ERR_NO_MEM, x->func,
                          "no memory for a staging buffer (non-contiguous datatype)");
}

/* After the algorithm: unpack the receive side (when it succeeded) and
 * give the staging back. */
static int unstage(ctx *x, int rc, fmpl_mpi_blocks *send, fmpl_mpi_blocks *recv)
{
    fmpl_mpi_coll_unstage_blocks(rc, send, recv);
    return finish(x, rc);
}


/* ------------------------------------------------------------ gather, scatter */

static int gather_body(const char *func, const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_gatherv(ic, func, sendbuf, sendcount, sendtype, recvbuf, FMPL_MPI_NO_ARRAY, FMPL_MPI_NO_ARRAY, recvcount, recvtype, root)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    TRY(check_root(&x, root));
    int n = x.c->team->size, me_root = x.c->team->rank == root;
    int in_place = me_root && sendbuf == MPI_IN_PLACE;
    if (!in_place)
        TRY(check_type(&x, sendtype));
    if (me_root)
        TRY(check_type(&x, recvtype));
    fmpl_mpi_blocks s = {.user = (char *)sendbuf, .n = 1, .count = sendcount, .type = sendtype};
    fmpl_mpi_blocks r = {.user = recvbuf, .n = n, .count = recvcount, .type = recvtype};
    TRY(stage(&x, in_place ? NULL : &s, me_root ? &r : NULL));
    if (!in_place)
        fmpl_mpi_coll_pack_all(&s);
    if (in_place)
        fmpl_mpi_coll_pack(&r, root);
    int64_t bytes = me_root ? r.total / n : s.total;
    int rc = fmpl_coll_gather(x.c->team, in_place ? sendbuf : s.base, me_root ? r.base : recvbuf,
                              bytes, root, in_place ? FMPL_COLL_IN_PLACE : 0);
    return unstage(&x, rc, in_place ? NULL : &s, me_root ? &r : NULL);
}

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return gather_body("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                       root, comm);
}
FMPL_MPI_WEAK(Gather)

int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return gather_body("MPI_Gather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                       root, comm);
}
FMPL_MPI_WEAK(Gather_c)

static int gatherv_body(const char *func, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf, fmpl_mpi_array recvcounts,
                        fmpl_mpi_array displs, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_gatherv(ic, func, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, root)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    TRY(check_root(&x, root));
    int n = x.c->team->size, me_root = x.c->team->rank == root;
    int in_place = me_root && sendbuf == MPI_IN_PLACE;
    if (!in_place)
        TRY(check_type(&x, sendtype));
    int64_t *rc = NULL, *rd = NULL;
    if (me_root) {
        TRY(check_type(&x, recvtype));
        rc = counts_scratch(n, 0);
        rd = counts_scratch(n, 1);
        if (!rc || !rd)
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    }
    fmpl_mpi_blocks s = {.user = (char *)sendbuf, .n = 1, .count = sendcount, .type = sendtype};
    fmpl_mpi_blocks r = {.user = recvbuf, .n = n, .counts = recvcounts, .displs = displs,
                         .type = recvtype, .bcounts = rc, .bdispls = rd};
    TRY(stage(&x, in_place ? NULL : &s, me_root ? &r : NULL));
    if (!in_place)
        fmpl_mpi_coll_pack_all(&s);
    if (in_place)
        fmpl_mpi_coll_pack(&r, root);
    int err = fmpl_coll_gatherv(x.c->team, in_place ? sendbuf : s.base, in_place ? 0 : s.total,
                                me_root ? r.base : recvbuf, rc, rd, root,
                                in_place ? FMPL_COLL_IN_PLACE : 0);
    return unstage(&x, err, in_place ? NULL : &s, me_root ? &r : NULL);
}

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return gatherv_body("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf,
                        FMPL_MPI_INTS(recvcounts), FMPL_MPI_INTS(displs), recvtype, root, comm);
}
FMPL_MPI_WEAK(Gatherv)

int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return gatherv_body("MPI_Gatherv_c", sendbuf, sendcount, sendtype, recvbuf,
                        FMPL_MPI_COUNTS(recvcounts), FMPL_MPI_AINTS(displs), recvtype, root, comm);
}
FMPL_MPI_WEAK(Gatherv_c)

static int scatter_body(const char *func, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_scatterv(ic, func, sendbuf, FMPL_MPI_NO_ARRAY, FMPL_MPI_NO_ARRAY, sendcount, sendtype, recvbuf, recvcount, recvtype, root)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    TRY(check_root(&x, root));
    int n = x.c->team->size, me_root = x.c->team->rank == root;
    int in_place = me_root && recvbuf == MPI_IN_PLACE;
    if (me_root)
        TRY(check_type(&x, sendtype));
    if (!in_place)
        TRY(check_type(&x, recvtype));
    fmpl_mpi_blocks s = {.user = (char *)sendbuf, .n = n, .count = sendcount, .type = sendtype};
    fmpl_mpi_blocks r = {.user = recvbuf, .n = 1, .count = recvcount, .type = recvtype};
    TRY(stage(&x, me_root ? &s : NULL, in_place ? NULL : &r));
    if (me_root)
        fmpl_mpi_coll_pack_all(&s);
    int64_t bytes = me_root ? s.total / n : r.total;
    int rc = fmpl_coll_scatter(x.c->team, me_root ? s.base : sendbuf, in_place ? recvbuf : r.base,
                               bytes, root, in_place ? FMPL_COLL_IN_PLACE : 0);
    return unstage(&x, rc, me_root ? &s : NULL, in_place ? NULL : &r);
}

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return scatter_body("MPI_Scatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                        root, comm);
}
FMPL_MPI_WEAK(Scatter)

int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return scatter_body("MPI_Scatter_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                        root, comm);
}
FMPL_MPI_WEAK(Scatter_c)

static int scatterv_body(const char *func, const void *sendbuf, fmpl_mpi_array sendcounts,
                         fmpl_mpi_array displs, MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_scatterv(ic, func, sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount, recvtype, root)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    TRY(check_root(&x, root));
    int n = x.c->team->size, me_root = x.c->team->rank == root;
    int in_place = me_root && recvbuf == MPI_IN_PLACE;
    if (!in_place)
        TRY(check_type(&x, recvtype));
    int64_t *sc = NULL, *sd = NULL;
    if (me_root) {
        TRY(check_type(&x, sendtype));
        sc = counts_scratch(n, 0);
        sd = counts_scratch(n, 1);
        if (!sc || !sd)
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    }
    fmpl_mpi_blocks s = {.user = (char *)sendbuf, .n = n, .counts = sendcounts, .displs = displs,
                         .type = sendtype, .bcounts = sc, .bdispls = sd};
    fmpl_mpi_blocks r = {.user = recvbuf, .n = 1, .count = recvcount, .type = recvtype};
    TRY(stage(&x, me_root ? &s : NULL, in_place ? NULL : &r));
    if (me_root)
        fmpl_mpi_coll_pack_all(&s);
    int rc = fmpl_coll_scatterv(x.c->team, me_root ? s.base : sendbuf, sc, sd,
                                in_place ? recvbuf : r.base, in_place ? 0 : r.total, root,
                                in_place ? FMPL_COLL_IN_PLACE : 0);
    return unstage(&x, rc, me_root ? &s : NULL, in_place ? NULL : &r);
}

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return scatterv_body("MPI_Scatterv", sendbuf, FMPL_MPI_INTS(sendcounts),
                         FMPL_MPI_INTS(displs), sendtype, recvbuf, recvcount, recvtype, root, comm);
}
FMPL_MPI_WEAK(Scatterv)

int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return scatterv_body("MPI_Scatterv_c", sendbuf, FMPL_MPI_COUNTS(sendcounts),
                         FMPL_MPI_AINTS(displs), sendtype, recvbuf, recvcount, recvtype, root,
                         comm);
}
FMPL_MPI_WEAK(Scatterv_c)

/* ------------------------------------------------------------ allgather, alltoall */

static int allgather_body(const char *func, const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_allgather(ic, func, sendbuf, sendcount, sendtype, recvbuf, FMPL_MPI_NO_ARRAY, FMPL_MPI_NO_ARRAY, recvcount, recvtype)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    TRY(check_type(&x, recvtype));
    int n = x.c->team->size, in_place = sendbuf == MPI_IN_PLACE;
    if (!in_place)
        TRY(check_type(&x, sendtype));
    fmpl_mpi_blocks s = {.user = (char *)sendbuf, .n = 1, .count = sendcount, .type = sendtype};
    fmpl_mpi_blocks r = {.user = recvbuf, .n = n, .count = recvcount, .type = recvtype};
    TRY(stage(&x, in_place ? NULL : &s, &r));
    if (in_place)
        fmpl_mpi_coll_pack(&r, x.c->team->rank);
    else
        fmpl_mpi_coll_pack_all(&s);
    int rc = fmpl_coll_allgather(x.c->team, in_place ? sendbuf : s.base, r.base, r.total / n,
                                 in_place ? FMPL_COLL_IN_PLACE : 0);
    return unstage(&x, rc, in_place ? NULL : &s, &r);
}

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return allgather_body("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm);
}
FMPL_MPI_WEAK(Allgather)

int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return allgather_body("MPI_Allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm);
}
FMPL_MPI_WEAK(Allgather_c)

static int allgatherv_body(const char *func, const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf, fmpl_mpi_array recvcounts,
                           fmpl_mpi_array displs, MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_allgather(ic, func, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    TRY(check_type(&x, recvtype));
    int n = x.c->team->size, in_place = sendbuf == MPI_IN_PLACE;
    if (!in_place)
        TRY(check_type(&x, sendtype));
    int64_t *rc = counts_scratch(n, 0), *rd = counts_scratch(n, 1);
    if (!rc || !rd)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    fmpl_mpi_blocks s = {.user = (char *)sendbuf, .n = 1, .count = sendcount, .type = sendtype};
    fmpl_mpi_blocks r = {.user = recvbuf, .n = n, .counts = recvcounts, .displs = displs,
                         .type = recvtype, .bcounts = rc, .bdispls = rd};
    TRY(stage(&x, in_place ? NULL : &s, &r));
    if (in_place)
        fmpl_mpi_coll_pack(&r, x.c->team->rank);
    else
        fmpl_mpi_coll_pack_all(&s);
    int err = fmpl_coll_allgatherv(x.c->team, in_place ? sendbuf : s.base, r.base, rc, rd,
                                   in_place ? FMPL_COLL_IN_PLACE : 0);
    return unstage(&x, err, in_place ? NULL : &s, &r);
}

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return allgatherv_body("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf,
                           FMPL_MPI_INTS(recvcounts), FMPL_MPI_INTS(displs), recvtype, comm);
}
FMPL_MPI_WEAK(Allgatherv)

int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return allgatherv_body("MPI_Allgatherv_c", sendbuf, sendcount, sendtype, recvbuf,
                           FMPL_MPI_COUNTS(recvcounts), FMPL_MPI_AINTS(displs), recvtype, comm);
}
FMPL_MPI_WEAK(Allgatherv_c)

/* MPI_IN_PLACE for alltoall: the core wants separate buffers, so the
 * receive side's bytes (the user's, or their packed copy) are copied
 * aside first. */
static void *in_place_copy(const void *from, size_t bytes)
{
    void *buf = fmpl_scratch(FMPL_SCRATCH_ALLTOALL_COPY, bytes);
    if (!buf && bytes)
        return NULL;
    if (bytes)
        memcpy(buf, from, bytes);
    return buf;
}

/* Alltoall, alltoallv and alltoallw: the blocks of both sides described,
 * the rest is common.  In place, the receive blocks are the input. */
static int alltoall_blocks(ctx *x, fmpl_mpi_blocks *s, fmpl_mpi_blocks *r, int uniform)
{
    int n = x->c->team->size, in_place = s->user == MPI_IN_PLACE;
    TRY(stage(x, in_place ? NULL : s, r));
    const void *sendbuf = s->base;
    if (in_place) {
        fmpl_mpi_coll_pack_all(r);
        int64_t extent = r->total;
        for (int p = 0; r->bcounts && p < n; p++)
            if (r->bdispls[p] + r->bcounts[p] > extent)
                extent = r->bdispls[p] + r->bcounts[p];
        sendbuf = fmpl_mpi_capturing() ? fmpl_mpi_coll_scratch((size_t)extent)
                                        : in_place_copy(r->base, (size_t)extent);
        if (fmpl_mpi_capturing() && sendbuf)
            fmpl_mpi_coll_copy((void *)sendbuf, r->base, (size_t)extent);
        if (!sendbuf && extent) {
            fmpl_mpi_blocks_done(r);
            return fmpl_mpi_error(x->comm, MPI_ERR_NO_MEM, x->func, "no memory");
        }
        if (s->bcounts) {
            memcpy(s->bcounts, r->bcounts, (size_t)n * sizeof *s->bcounts);
            memcpy(s->bdispls, r->bdispls, (size_t)n * sizeof *s->bdispls);
        }
    } else {
        fmpl_mpi_coll_pack_all(s);
    }
    int rc = uniform ? fmpl_coll_alltoall(x->c->team, sendbuf, r->base, r->total / n, 0)
                     : fmpl_coll_alltoallv(x->c->team, sendbuf, s->bcounts, s->bdispls, r->base,
                                           r->bcounts, r->bdispls, 0);
    return unstage(x, rc, in_place ? NULL : s, r);
}

static int alltoall_body(const char *func, const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_alltoall(ic, func, sendbuf, FMPL_MPI_NO_ARRAY, FMPL_MPI_NO_ARRAY, sendcount, sendtype, recvbuf, FMPL_MPI_NO_ARRAY, FMPL_MPI_NO_ARRAY, recvcount, recvtype)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    TRY(check_type(&x, recvtype));
    if (sendbuf != MPI_IN_PLACE)
        TRY(check_type(&x, sendtype));
    int n = x.c->team->size;
    fmpl_mpi_blocks s = {.user = (char *)sendbuf, .n = n, .count = sendcount, .type = sendtype};
    fmpl_mpi_blocks r = {.user = recvbuf, .n = n, .count = recvcount, .type = recvtype};
    return alltoall_blocks(&x, &s, &r, 1);
}

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return alltoall_body("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         comm);
}
FMPL_MPI_WEAK(Alltoall)

int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return alltoall_body("MPI_Alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm);
}
FMPL_MPI_WEAK(Alltoall_c)

static int alltoallv_body(const char *func, const void *sendbuf, fmpl_mpi_array sendcounts,
                          fmpl_mpi_array sdispls, MPI_Datatype sendtype, void *recvbuf,
                          fmpl_mpi_array recvcounts, fmpl_mpi_array rdispls, MPI_Datatype recvtype,
                          MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_alltoall(ic, func, sendbuf, sendcounts, sdispls, 0, sendtype, recvbuf, recvcounts, rdispls, 0, recvtype)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    TRY(check_type(&x, recvtype));
    if (sendbuf != MPI_IN_PLACE)
        TRY(check_type(&x, sendtype));
    int n = x.c->team->size;
    int64_t *sc = counts_scratch(n, 0), *sd = counts_scratch(n, 1);
    int64_t *rc = counts_scratch(n, 2), *rd = counts_scratch(n, 3);
    if (!sc || !sd || !rc || !rd)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    fmpl_mpi_blocks s = {.user = (char *)sendbuf, .n = n, .counts = sendcounts,
                         .displs = sdispls, .type = sendtype, .bcounts = sc, .bdispls = sd};
    fmpl_mpi_blocks r = {.user = recvbuf, .n = n, .counts = recvcounts, .displs = rdispls,
                         .type = recvtype, .bcounts = rc, .bdispls = rd};
    return alltoall_blocks(&x, &s, &r, 0);
}

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return alltoallv_body("MPI_Alltoallv", sendbuf, FMPL_MPI_INTS(sendcounts),
                          FMPL_MPI_INTS(sdispls), sendtype, recvbuf, FMPL_MPI_INTS(recvcounts),
                          FMPL_MPI_INTS(rdispls), recvtype, comm);
}
FMPL_MPI_WEAK(Alltoallv)

int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return alltoallv_body("MPI_Alltoallv_c", sendbuf, FMPL_MPI_COUNTS(sendcounts),
                          FMPL_MPI_AINTS(sdispls), sendtype, recvbuf, FMPL_MPI_COUNTS(recvcounts),
                          FMPL_MPI_AINTS(rdispls), recvtype, comm);
}
FMPL_MPI_WEAK(Alltoallv_c)

/* Displacements in bytes, a datatype per block. */
static int alltoallw_body(const char *func, const void *sendbuf, fmpl_mpi_array sendcounts,
                          fmpl_mpi_array sdispls, const MPI_Datatype sendtypes[], void *recvbuf,
                          fmpl_mpi_array recvcounts, fmpl_mpi_array rdispls,
                          const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_alltoallw(ic, func, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    int n = x.c->team->size;
    for (int p = 0; p < n; p++) {
        TRY(check_type(&x, recvtypes[p]));
        if (sendbuf != MPI_IN_PLACE)
            TRY(check_type(&x, sendtypes[p]));
    }
    int64_t *sc = counts_scratch(n, 0), *sd = counts_scratch(n, 1);
    int64_t *rc = counts_scratch(n, 2), *rd = counts_scratch(n, 3);
    if (!sc || !sd || !rc || !rd)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    fmpl_mpi_blocks s = {.user = (char *)sendbuf, .n = n, .counts = sendcounts,
                         .displs = sdispls, .displs_in_bytes = 1, .types = sendtypes,
                         .bcounts = sc, .bdispls = sd};
    fmpl_mpi_blocks r = {.user = recvbuf, .n = n, .counts = recvcounts, .displs = rdispls,
                         .displs_in_bytes = 1, .types = recvtypes, .bcounts = rc,
                         .bdispls = rd};
    return alltoall_blocks(&x, &s, &r, 0);
}

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return alltoallw_body("MPI_Alltoallw", sendbuf, FMPL_MPI_INTS(sendcounts),
                          FMPL_MPI_INTS(sdispls), sendtypes, recvbuf, FMPL_MPI_INTS(recvcounts),
                          FMPL_MPI_INTS(rdispls), recvtypes, comm);
}
FMPL_MPI_WEAK(Alltoallw)

int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return alltoallw_body("MPI_Alltoallw_c", sendbuf, FMPL_MPI_COUNTS(sendcounts),
                          FMPL_MPI_AINTS(sdispls), sendtypes, recvbuf, FMPL_MPI_COUNTS(recvcounts),
                          FMPL_MPI_AINTS(rdispls), recvtypes, comm);
}
FMPL_MPI_WEAK(Alltoallw_c)

/* ------------------------------------------------------------ reductions */

static int make_reduction(ctx *x, MPI_Op op, MPI_Datatype type, fmpl_mpi_reduction *r)
{
    int rc = fmpl_mpi_reduction_make(op, type, r);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(x->comm, rc, x->func, "operation 0x%x on datatype 0x%x: %s",
                              (unsigned)op, (unsigned)type, r->why);
    return MPI_SUCCESS;
}

/* The reductions below with a staged datatype: the input (in_count
 * elements, from sendbuf or in place from recvbuf) is converted into one
 * staging buffer, the algorithm runs out of place into another, and
 * out_count elements are converted back into recvbuf. */
typedef struct staged_io {
    char *in, *out;
} staged_io;

static int stage_io(ctx *x, const fmpl_mpi_reduction *r, const void *sendbuf, void *recvbuf,
                    int64_t in_count, int64_t out_count, staged_io *io)
{
    io->in = fmpl_mpi_stage_get(fmpl_mpi_reduction_bytes(r, in_count));
    io->out = fmpl_mpi_stage_get(fmpl_mpi_reduction_bytes(r, out_count));
    if (!io->in || !io->out) {
        fmpl_mpi_stage_put(io->in);
        fmpl_mpi_stage_put(io->out);
        return fmpl_mpi_error(x->comm, MPI_ERR_NO_MEM, x->func,
                              "no memory for staged operands (non-contiguous datatype)");
    }
    fmpl_mpi_coll_reduction_in(r, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, in_count, io->in);
    return MPI_SUCCESS;
}

static int unstage_io(ctx *x, int rc, const fmpl_mpi_reduction *r, staged_io *io,
                      int64_t out_count, void *recvbuf, int write_back)
{
    if (rc == FMPL_SUCCESS && write_back)
        fmpl_mpi_coll_reduction_out(r, io->out, out_count, recvbuf);
    fmpl_mpi_coll_stage_put(io->in);
    fmpl_mpi_coll_stage_put(io->out);
    return finish(x, rc);
}

static const void *offset_in(const void *sendbuf, MPI_Aint offset)
{
    return sendbuf == MPI_IN_PLACE ? sendbuf : (const char *)sendbuf + offset;
}

static int reduce_scatter_body(const char *func, const void *sendbuf, void *recvbuf,
                               fmpl_mpi_array recvcounts, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, fmpl_mpi_inter_reduce_scatter(ic, func, sendbuf, recvbuf, recvcounts, 0, type, op)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    fmpl_mpi_reduction made;
    TRY(make_reduction(&x, op, type, &made));
    const fmpl_mpi_reduction *r = fmpl_mpi_coll_reduction(&made);
    int n = x.c->team->size, me = x.c->team->rank;
    int64_t *counts = counts_scratch(n, 0);
    if (!counts)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, x.func, "no memory");
    int64_t total = 0;
    for (int p = 0; p < n; p++) {
        if (fmpl_mpi_array_at(recvcounts, p) < 0)
            return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "recvcounts[%d] = %lld is negative",
                                  p, (long long)fmpl_mpi_array_at(recvcounts, p));
        counts[p] = fmpl_mpi_reduction_count(r, fmpl_mpi_array_at(recvcounts, p));
        total += fmpl_mpi_array_at(recvcounts, p);
    }
    if (!r->type)
        return finish(&x, fmpl_coll_reduce_scatter(x.c->team, offset_in(sendbuf, r->offset),
                                                   (char *)recvbuf + r->offset, counts, &r->op,
                                                   sendbuf == MPI_IN_PLACE ? FMPL_COLL_IN_PLACE
                                                                           : 0));
    staged_io io;
    TRY(stage_io(&x, r, sendbuf, recvbuf, total, fmpl_mpi_array_at(recvcounts, me), &io));
    int rc = fmpl_coll_reduce_scatter(x.c->team, io.in, io.out, counts, &r->op, 0);
    return unstage_io(&x, rc, r, &io, fmpl_mpi_array_at(recvcounts, me), recvbuf, 1);
}

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return reduce_scatter_body("MPI_Reduce_scatter", sendbuf, recvbuf,
                               FMPL_MPI_INTS(recvcounts), type, op, comm);
}
FMPL_MPI_WEAK(Reduce_scatter)

int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return reduce_scatter_body("MPI_Reduce_scatter_c", sendbuf, recvbuf,
                               FMPL_MPI_COUNTS(recvcounts), type, op, comm);
}
FMPL_MPI_WEAK(Reduce_scatter_c)

/* Reduce_scatter_block, Scan and Exscan differ only in the core call and
 * in how much input there is: Reduce_scatter_block's is count per member. */
typedef int (*elementwise_fn)(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t count,
                              const fmpl_op *op, int flags);

static int elementwise(const char *func, elementwise_fn run, const void *sendbuf, void *recvbuf,
                       MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    FMPL_MPI_INTER_HOOK(comm, ic, run == fmpl_coll_reduce_scatter_block ? fmpl_mpi_inter_reduce_scatter(ic, func, sendbuf, recvbuf, FMPL_MPI_NO_ARRAY, count, type, op) : fmpl_mpi_inter_invalid(ic, func)); /* intercomm_coll.c */
    ctx x;
    TRY(enter(&x, comm, func));
    if (count < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "count %lld is negative",
                              (long long)count);
    fmpl_mpi_reduction made;
    TRY(make_reduction(&x, op, type, &made));
    const fmpl_mpi_reduction *r = fmpl_mpi_coll_reduction(&made);
    int64_t n = fmpl_mpi_reduction_count(r, count);
    if (!r->type)
        return finish(&x, run(x.c->team, offset_in(sendbuf, r->offset), (char *)recvbuf + r->offset,
                              n, &r->op, sendbuf == MPI_IN_PLACE ? FMPL_COLL_IN_PLACE : 0));
    int64_t in_count = run == fmpl_coll_reduce_scatter_block ? (int64_t)count * x.c->team->size
                                                             : count;
    staged_io io;
    TRY(stage_io(&x, r, sendbuf, recvbuf, in_count, count, &io));
    int rc = run(x.c->team, io.in, io.out, n, &r->op, 0);
    /* exscan leaves member 0's recvbuf alone */
    int write_back = !(run == fmpl_coll_exscan && x.c->team->rank == 0);
    return unstage_io(&x, rc, r, &io, count, recvbuf, write_back);
}

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return elementwise("MPI_Reduce_scatter_block", fmpl_coll_reduce_scatter_block, sendbuf,
                       recvbuf, recvcount, type, op, comm);
}
FMPL_MPI_WEAK(Reduce_scatter_block)

int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return elementwise("MPI_Reduce_scatter_block_c", fmpl_coll_reduce_scatter_block, sendbuf,
                       recvbuf, recvcount, type, op, comm);
}
FMPL_MPI_WEAK(Reduce_scatter_block_c)

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return elementwise("MPI_Scan", fmpl_coll_scan, sendbuf, recvbuf, count, type, op, comm);
}
FMPL_MPI_WEAK(Scan)

int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return elementwise("MPI_Scan_c", fmpl_coll_scan, sendbuf, recvbuf, count, type, op, comm);
}
FMPL_MPI_WEAK(Scan_c)

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return elementwise("MPI_Exscan", fmpl_coll_exscan, sendbuf, recvbuf, count, type, op, comm);
}
FMPL_MPI_WEAK(Exscan)

int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                  MPI_Op op, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return elementwise("MPI_Exscan_c", fmpl_coll_exscan, sendbuf, recvbuf, count, type, op, comm);
}
FMPL_MPI_WEAK(Exscan_c)
