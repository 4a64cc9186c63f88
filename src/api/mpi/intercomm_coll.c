/* Blocking collectives on intercommunicators (MPI-4.0 6.2.2), composed of
 * the intracommunicator collectives on the hidden local communicator and
 * point-to-point messages on the hidden collective intercommunicator
 * (intercomm.h), both through the PMPI calls, so every datatype works as
 * it does there.  Correctness first: data crosses between the groups
 * directly (gather, scatter, all-to-all: one message per pair) or once
 * between the leaders (local rank 0 of each side) around a local reduce
 * and broadcast.
 *
 * Rooted operations: root is MPI_ROOT at the root, MPI_PROC_NULL at the
 * other members of its group, and the root's rank in the remote group at
 * the members of the other group.
 *
 *   Barrier          a barrier of the span team (both groups)
 *   Bcast            root -> remote leader; local broadcast
 *   Gather(v)        every member -> root;  Scatter(v): root -> every member
 *   Allgather(v),
 *   Alltoall(v,w)    every member <-> every remote member
 *   Reduce           local reduce to the leader; leader -> root
 *   Allreduce        local reduce to the leaders; they swap; local broadcast
 *   Reduce_scatter   as Allreduce, then a local scatter of the remote result */
#include "api/mpi/intercomm.h"
#include "collectives/collectives.h"

#include <stdlib.h>

#define COLL_TAG 2

enum { ROLE_ROOT, ROLE_IDLE, ROLE_LEAF };

static int role_of(fmpl_mpi_comm *c, const char *func, int root, int *role)
{
    if (root == MPI_ROOT)
        *role = ROLE_ROOT;
    else if (root == MPI_PROC_NULL)
        *role = ROLE_IDLE;
    else if (root >= 0 && root < c->team->size)
        *role = ROLE_LEAF;
    else
        return fmpl_mpi_error(c->handle, MPI_ERR_ROOT, func,
                              "root %d of an intercommunicator is not MPI_ROOT, MPI_PROC_NULL "
                              "or a remote rank 0 .. %d", root, c->team->size - 1);
    return MPI_SUCCESS;
}

/* Report a failure of a hidden step on the user's communicator. */
static int done(fmpl_mpi_comm *c, const char *func, int rc)
{
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    int cls = rc;
    PMPI_Error_class(rc, &cls);
    return fmpl_mpi_error(c->handle, cls, func, "the intercommunicator collective failed");
}

static int check_count(fmpl_mpi_comm *c, const char *func, int count)
{
    if (count < 0)
        return fmpl_mpi_error(c->handle, MPI_ERR_COUNT, func, "count %d is negative", count);
    return MPI_SUCCESS;
}

/* A buffer for count elements of t; *base is what to free. */
static void *temp_buffer(MPI_Datatype t, MPI_Aint count, void **base)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    *base = NULL;
    if (PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &true_lb, &true_extent) != MPI_SUCCESS)
        return NULL;
    MPI_Aint bytes = count > 0 ? true_extent + (count - 1) * extent : 0;
    *base = malloc((size_t)(bytes > 0 ? bytes : 1));
    return *base ? (char *)*base - true_lb : NULL;
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, extent = 0;
    PMPI_Type_get_extent(t, &lb, &extent);
    return extent;
}

int fmpl_mpi_inter_barrier(fmpl_mpi_comm *c)
{
    int rc = fmpl_coll_barrier(c->inter->span);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(c->handle, fmpl_mpi_error_class_of(rc),
                                               "MPI_Barrier", "barrier failed");
}

int fmpl_mpi_inter_bcast(fmpl_mpi_comm *c, void *buf, int count, MPI_Datatype type, int root)
{
    static const char func[] = "MPI_Bcast";
    fmpl_mpi_inter *in = c->inter;
    int role = ROLE_IDLE, rc = role_of(c, func, root, &role);
    if (rc == MPI_SUCCESS)
        rc = check_count(c, func, count);
    if (rc != MPI_SUCCESS || role == ROLE_IDLE)
        return rc;
    if ((rc = fmpl_mpi_type_check(c->handle, type, func)) != MPI_SUCCESS)
        return rc;
    if (role == ROLE_ROOT)
        return done(c, func, PMPI_Send(buf, count, type, 0, COLL_TAG, in->coll));
    if (c->team->rank == 0)
        rc = PMPI_Recv(buf, count, type, root, COLL_TAG, in->coll, MPI_STATUS_IGNORE);
    int rc2 = PMPI_Bcast(buf, count, type, 0, in->local);
    return done(c, func, rc != MPI_SUCCESS ? rc : rc2);
}

/* Wait for n requests; the first error. */
static int wait_all(int n, MPI_Request *reqs)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        int r = PMPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = r;
    }
    return rc;
}

/* Gather and scatter: the root posts one transfer per remote process
 * (`to_root`: receives), every member of the other group one. */
static int rooted(fmpl_mpi_comm *c, const char *func, int to_root, void *rootbuf,
                  const int *counts, const int *displs, int count, MPI_Datatype roottype,
                  void *leafbuf, int leafcount, MPI_Datatype leaftype, int root)
{
    fmpl_mpi_inter *in = c->inter;
    int role = ROLE_IDLE, rc = role_of(c, func, root, &role);
    if (rc != MPI_SUCCESS || role == ROLE_IDLE)
        return rc;
    if (role == ROLE_LEAF) {
        if ((rc = check_count(c, func, leafcount)) != MPI_SUCCESS ||
            (rc = fmpl_mpi_type_check(c->handle, leaftype, func)) != MPI_SUCCESS)
            return rc;
        rc = to_root ? PMPI_Send(leafbuf, leafcount, leaftype, root, COLL_TAG, in->coll)
                     : PMPI_Recv(leafbuf, leafcount, leaftype, root, COLL_TAG, in->coll,
                                 MPI_STATUS_IGNORE);
        return done(c, func, rc);
    }
    if (!counts && (rc = check_count(c, func, count)) != MPI_SUCCESS)
        return rc;
    if ((rc = fmpl_mpi_type_check(c->handle, roottype, func)) != MPI_SUCCESS)
        return rc;
    int n = c->team->size;
    MPI_Aint extent = extent_of(roottype);
    MPI_Request *reqs = malloc((size_t)n * sizeof *reqs);
    if (!reqs)
        return fmpl_mpi_error(c->handle, MPI_ERR_NO_MEM, func, "no memory");
    int posted = 0;
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++, posted++) {
        int cnt = counts ? counts[r] : count;
        char *at = (char *)rootbuf + (MPI_Aint)(displs ? displs[r] : r * count) * extent;
        rc = to_root ? PMPI_Irecv(at, cnt, roottype, r, COLL_TAG, in->coll, &reqs[r])
                     : PMPI_Isend(at, cnt, roottype, r, COLL_TAG, in->coll, &reqs[r]);
    }
    if (rc != MPI_SUCCESS)
        posted--;
    int rc2 = wait_all(posted, reqs);
    free(reqs);
    return done(c, func, rc != MPI_SUCCESS ? rc : rc2);
}

int fmpl_mpi_inter_gatherv(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                           int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const int *recvcounts, const int *displs, int recvcount,
                           MPI_Datatype recvtype, int root)
{
    return rooted(c, func, 1, recvbuf, recvcounts, displs, recvcount, recvtype,
                  (void *)sendbuf, sendcount, sendtype, root);
}

int fmpl_mpi_inter_scatterv(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                            const int *sendcounts, const int *displs, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root)
{
    return rooted(c, func, 0, (void *)sendbuf, sendcounts, displs, sendcount, sendtype,
                  recvbuf, recvcount, recvtype, root);
}

/* One send to and one receive from every remote process: send r is
 * scount[r] of stype[r] at sendbuf + sdisp[r] bytes, receive likewise. */
static int exchange(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                    const int *scount, const MPI_Aint *sdisp, const MPI_Datatype *stype,
                    void *recvbuf, const int *rcount, const MPI_Aint *rdisp,
                    const MPI_Datatype *rtype)
{
    fmpl_mpi_inter *in = c->inter;
    int n = c->team->size, rc = MPI_SUCCESS, posted = 0;
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++) {
        if (scount[r] < 0 || rcount[r] < 0)
            return fmpl_mpi_error(c->handle, MPI_ERR_COUNT, func, "a count for rank %d is "
                                  "negative", r);
        if ((rc = fmpl_mpi_type_check(c->handle, stype[r], func)) != MPI_SUCCESS ||
            (rc = fmpl_mpi_type_check(c->handle, rtype[r], func)) != MPI_SUCCESS)
            return rc;
    }
    MPI_Request *reqs = malloc((size_t)(2 * n) * sizeof *reqs);
    if (!reqs)
        return fmpl_mpi_error(c->handle, MPI_ERR_NO_MEM, func, "no memory");
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
        if ((rc = PMPI_Irecv((char *)recvbuf + rdisp[r], rcount[r], rtype[r], r, COLL_TAG,
                             in->coll, &reqs[posted])) == MPI_SUCCESS)
            posted++;
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
        if ((rc = PMPI_Isend((const char *)sendbuf + sdisp[r], scount[r], stype[r], r, COLL_TAG,
                             in->coll, &reqs[posted])) == MPI_SUCCESS)
            posted++;
    int rc2 = wait_all(posted, reqs);
    free(reqs);
    return done(c, func, rc != MPI_SUCCESS ? rc : rc2);
}

/* The per-rank arrays of exchange(), from the arguments of the v and
 * uniform forms. */
typedef struct side_args {
    int *count;
    MPI_Aint *disp;
    MPI_Datatype *type;
} side_args;

static int side_make(int n, side_args *s, const int *counts, const int *displs, int count,
                     MPI_Datatype type, int same_block)
{
    s->count = malloc((size_t)n * sizeof *s->count);
    s->disp = malloc((size_t)n * sizeof *s->disp);
    s->type = malloc((size_t)n * sizeof *s->type);
    if (!s->count || !s->disp || !s->type)
        return MPI_ERR_NO_MEM;
    MPI_Aint extent = extent_of(type);
    for (int r = 0; r < n; r++) {
        s->count[r] = counts ? counts[r] : count;
        s->disp[r] = same_block ? 0 : (MPI_Aint)(displs ? displs[r] : r * count) * extent;
        s->type[r] = type;
    }
    return MPI_SUCCESS;
}

static void side_free(side_args *s)
{
    free(s->count);
    free(s->disp);
    free(s->type);
}

static int exchange_sides(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                          const int *sendcounts, const int *sdispls, int sendcount,
                          MPI_Datatype sendtype, int send_same_block, void *recvbuf,
                          const int *recvcounts, const int *rdispls, int recvcount,
                          MPI_Datatype recvtype)
{
    int n = c->team->size;
    if ((!sendcounts && sendcount < 0) || (!recvcounts && recvcount < 0))
        return fmpl_mpi_error(c->handle, MPI_ERR_COUNT, func, "a count is negative");
    side_args s = {0}, r = {0};
    int rc = side_make(n, &s, sendcounts, sdispls, sendcount, sendtype, send_same_block);
    if (rc == MPI_SUCCESS)
        rc = side_make(n, &r, recvcounts, rdispls, recvcount, recvtype, 0);
    if (rc == MPI_SUCCESS)
        rc = exchange(c, func, sendbuf, s.count, s.disp, s.type, recvbuf, r.count, r.disp,
                      r.type);
    else
        rc = fmpl_mpi_error(c->handle, rc, func, "no memory");
    side_free(&s);
    side_free(&r);
    return rc;
}

int fmpl_mpi_inter_allgather(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                             int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int *recvcounts, const int *displs, int recvcount,
                             MPI_Datatype recvtype)
{
    return exchange_sides(c, func, sendbuf, NULL, NULL, sendcount, sendtype, 1, recvbuf,
                          recvcounts, displs, recvcount, recvtype);
}

int fmpl_mpi_inter_alltoall(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                            const int *sendcounts, const int *sdispls, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                            const int *rdispls, int recvcount, MPI_Datatype recvtype)
{
    return exchange_sides(c, func, sendbuf, sendcounts, sdispls, sendcount, sendtype, 0,
                          recvbuf, recvcounts, rdispls, recvcount, recvtype);
}

int fmpl_mpi_inter_alltoallw(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                             const int *sendcounts, const int *sdispls,
                             const MPI_Datatype *sendtypes, void *recvbuf,
                             const int *recvcounts, const int *rdispls,
                             const MPI_Datatype *recvtypes)
{
    int n = c->team->size;
    MPI_Aint *sd = malloc((size_t)n * sizeof *sd), *rd = malloc((size_t)n * sizeof *rd);
    int rc;
    if (!sd || !rd) {
        rc = fmpl_mpi_error(c->handle, MPI_ERR_NO_MEM, func, "no memory");
    } else {
        for (int r = 0; r < n; r++) {
            sd[r] = sdispls[r];
            rd[r] = rdispls[r];
        }
        rc = exchange(c, func, sendbuf, sendcounts, sd, sendtypes, recvbuf, recvcounts, rd,
                      recvtypes);
    }
    free(sd);
    free(rd);
    return rc;
}

/* The local group's reduction of count elements, at the local leader in
 * a temporary buffer (*base: what to free; NULL elsewhere). */
static int local_reduce(fmpl_mpi_comm *c, const void *sendbuf, int count, MPI_Datatype type,
                        MPI_Op op, void **result, void **base)
{
    *result = *base = NULL;
    if (c->team->rank == 0) {
        *result = temp_buffer(type, count, base);
        if (!*base)
            return MPI_ERR_NO_MEM;
    }
    return PMPI_Reduce(sendbuf, *result, count, type, op, 0, c->inter->local);
}

int fmpl_mpi_inter_reduce(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                          void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root)
{
    fmpl_mpi_inter *in = c->inter;
    int role = ROLE_LEAF, rc = MPI_SUCCESS;
    if (root != FMPL_MPI_INTER_ALL && (rc = role_of(c, func, root, &role)) != MPI_SUCCESS)
        return rc;
    if ((rc = check_count(c, func, count)) != MPI_SUCCESS || role == ROLE_IDLE)
        return rc;
    if ((rc = fmpl_mpi_type_check(c->handle, type, func)) != MPI_SUCCESS)
        return rc;
    if (role == ROLE_ROOT)
        return done(c, func, PMPI_Recv(recvbuf, count, type, 0, COLL_TAG, in->coll,
                                       MPI_STATUS_IGNORE));
    void *result, *base;
    rc = local_reduce(c, sendbuf, count, type, op, &result, &base);
    if (rc == MPI_SUCCESS && c->team->rank == 0)
        rc = root == FMPL_MPI_INTER_ALL
                 ? PMPI_Sendrecv(result, count, type, 0, COLL_TAG, recvbuf, count, type, 0,
                                 COLL_TAG, in->coll, MPI_STATUS_IGNORE)
                 : PMPI_Send(result, count, type, root, COLL_TAG, in->coll);
    free(base);
    if (root == FMPL_MPI_INTER_ALL) {
        int rc2 = PMPI_Bcast(recvbuf, count, type, 0, in->local);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    return done(c, func, rc);
}

int fmpl_mpi_inter_reduce_scatter(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                                  void *recvbuf, const int *recvcounts, int recvcount,
                                  MPI_Datatype type, MPI_Op op)
{
    fmpl_mpi_inter *in = c->inter;
    int n = in->local_size, me = c->team->rank, total = 0, rc;
    int *counts = malloc((size_t)n * sizeof *counts), *displs = malloc((size_t)n * sizeof *displs);
    if (!counts || !displs) {
        free(counts);
        free(displs);
        return fmpl_mpi_error(c->handle, MPI_ERR_NO_MEM, func, "no memory");
    }
    for (int r = 0; r < n; r++) {
        counts[r] = recvcounts ? recvcounts[r] : recvcount;
        displs[r] = total;
        total += counts[r];
    }
    rc = counts[me] < 0 ? fmpl_mpi_error(c->handle, MPI_ERR_COUNT, func, "a count is negative")
                        : fmpl_mpi_type_check(c->handle, type, func);
    if (rc != MPI_SUCCESS) {
        free(counts);
        free(displs);
        return rc;
    }
    /* The standard makes the two groups' totals equal. */
    void *result, *base, *remote = NULL, *remote_base = NULL;
    rc = local_reduce(c, sendbuf, total, type, op, &result, &base);
    if (rc == MPI_SUCCESS && me == 0) {
        remote = temp_buffer(type, total, &remote_base);
        rc = remote_base ? PMPI_Sendrecv(result, total, type, 0, COLL_TAG, remote, total, type,
                                         0, COLL_TAG, in->coll, MPI_STATUS_IGNORE)
                         : MPI_ERR_NO_MEM;
    }
    int rc2 = PMPI_Scatterv(remote, counts, displs, type, recvbuf, counts[me], type, 0,
                            in->local);
    free(base);
    free(remote_base);
    free(counts);
    free(displs);
    return done(c, func, rc != MPI_SUCCESS ? rc : rc2);
}
