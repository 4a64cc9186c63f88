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
 *   Reduce_scatter   as Allreduce, then a local scatter of the remote result
 *
 * One body serves the blocking, nonblocking and persistent forms: while a
 * schedule is captured (coll_nbc.h), the local collectives become its
 * steps on the hidden local and span teams (lanes of their own, sched.h),
 * and the messages between the groups (a `pairs` batch below) become its
 * SEND and RECV steps on the intercommunicator's view, whose peers are the
 * remote group.  Temporary buffers are then the schedule's. */
#include "api/mpi/intercomm.h"
#include "api/mpi/coll_nbc.h"
#include "collectives/collectives.h"

#include <stdlib.h>
#include <string.h>

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

static int check_count(fmpl_mpi_comm *c, const char *func, MPI_Count count)
{
    if (count < 0)
        return fmpl_mpi_error(c->handle, MPI_ERR_COUNT, func, "count %lld is negative",
                              (long long)count);
    return MPI_SUCCESS;
}

/* Memory the body needs until the collective completes: the schedule's
 * while capturing (*base = NULL), else malloc'd (*base: what to free). */
static void *body_alloc(size_t bytes, void **base)
{
    *base = NULL;
    if (fmpl_mpi_capturing())
        return fmpl_mpi_coll_scratch(bytes);
    return *base = malloc(bytes ? bytes : 1);
}

/* A buffer for count elements of t in *buf; *base is what to free.
 * MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int temp_buffer(MPI_Datatype t, MPI_Count count, void **buf, void **base)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    *base = *buf = NULL;
    if (PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &true_lb, &true_extent) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    MPI_Aint bytes = count > 0 ? true_extent + (MPI_Aint)(count - 1) * extent : 0;
    char *mem = body_alloc((size_t)(bytes > 0 ? bytes : 1), base);
    if (!mem)
        return MPI_ERR_NO_MEM;
    *buf = mem - true_lb;
    return MPI_SUCCESS;
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, extent = 0;
    PMPI_Type_get_extent(t, &lb, &extent);
    return extent;
}

/* Element r of a count or displacement array, or the uniform value. */
static MPI_Count at_or(fmpl_mpi_array a, int r, MPI_Count uniform)
{
    return a.p ? (MPI_Count)fmpl_mpi_array_at(a, r) : uniform;
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

/* ------------------------------------------------------------ pairs */

/* The messages between the groups in one step of a collective. */
typedef struct pair_msg {
    int send;
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
    int peer;                  /* remote rank */
} pair_msg;

/* The leaders' exchanges have one or two messages: those need no memory. */
#define PAIRS_INLINE 2

typedef struct pairs {
    fmpl_mpi_comm *c;
    const char *func;
    int n, cap;
    pair_msg *m;               /* `small` or malloc'd */
    int rc;                    /* MPI_ERR_NO_MEM once an add failed */
    pair_msg small[PAIRS_INLINE];
} pairs;

static void pairs_init(pairs *p, fmpl_mpi_comm *c, const char *func)
{
    p->c = c;
    p->func = func;
    p->n = 0;
    p->cap = PAIRS_INLINE;
    p->m = p->small;
    p->rc = MPI_SUCCESS;
}

static void pairs_add(pairs *p, int send, const void *buf, MPI_Count count, MPI_Datatype type,
                      int peer)
{
    if (p->rc != MPI_SUCCESS)
        return;
    if (p->n == p->cap) {
        int cap = 2 * p->cap;
        pair_msg *m = malloc((size_t)cap * sizeof *m);
        if (!m) {
            p->rc = MPI_ERR_NO_MEM;
            return;
        }
        memcpy(m, p->m, (size_t)p->n * sizeof *m);
        if (p->m != p->small)
            free(p->m);
        p->m = m;
        p->cap = cap;
    }
    p->m[p->n++] = (pair_msg){send, (void *)buf, count, type, peer};
}

/* Blocking: nonblocking messages on the hidden collective
 * intercommunicator (receives first), all waited for. */
static int pairs_exchange(pairs *p)
{
    MPI_Request small[PAIRS_INLINE];
    MPI_Request *reqs = p->n <= PAIRS_INLINE ? small : malloc((size_t)p->n * sizeof *reqs);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    MPI_Comm coll = p->c->inter->coll;
    int rc = MPI_SUCCESS, posted = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < p->n && rc == MPI_SUCCESS; i++) {
            pair_msg *m = &p->m[i];
            if (m->send != pass)
                continue;
            rc = m->send ? PMPI_Isend_c(m->buf, m->count, m->type, m->peer, COLL_TAG, coll,
                                        &reqs[posted])
                         : PMPI_Irecv_c(m->buf, m->count, m->type, m->peer, COLL_TAG, coll,
                                        &reqs[posted]);
            if (rc == MPI_SUCCESS)
                posted++;
        }
    int rc2 = wait_all(posted, reqs);
    if (reqs != small)
        free(reqs);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* Captured: one round of SEND and RECV steps on the view, the packing of
 * non-contiguous sends in the round before, the unpacking after. */
static int pairs_schedule(pairs *p)
{
    fmpl_sched *s = fmpl_coll_capture;
    fmpl_mpi_buf *b = malloc((size_t)(p->n ? p->n : 1) * sizeof *b);
    if (!b)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    fmpl_sched_phase(s);
    for (int i = 0; i < p->n && rc == MPI_SUCCESS; i++) {
        pair_msg *m = &p->m[i];
        /* described on the hidden communicator: the caller reports (done) */
        rc = fmpl_mpi_buf_describe(p->c->inter->coll, p->func, m->buf, (MPI_Aint)m->count,
                                   m->type, 0, &b[i]);
        if (rc == MPI_SUCCESS)
            rc = fmpl_mpi_coll_buf_stage(&b[i], m->send);
    }
    fmpl_sched_bind(s, p->c->team);
    for (int i = 0; i < p->n && rc == MPI_SUCCESS; i++) {
        if (p->m[i].send)
            fmpl_sched_send(s, 1, b[i].data, (int64_t)b[i].bytes, p->m[i].peer);
        else
            fmpl_sched_recv(s, 1, b[i].data, (int64_t)b[i].bytes, p->m[i].peer);
    }
    for (int i = 0; i < p->n && rc == MPI_SUCCESS; i++)
        if (!p->m[i].send)
            fmpl_mpi_coll_buf_unstage(&b[i], b[i].bytes);
    fmpl_sched_phase(s);
    free(b);
    return rc;
}

/* Move the batch's messages (or schedule them); MPI_SUCCESS or an error
 * class, not reported. */
static int pairs_run(pairs *p)
{
    int rc = p->rc;
    if (rc == MPI_SUCCESS && p->n)
        rc = fmpl_mpi_capturing() ? pairs_schedule(p) : pairs_exchange(p);
    if (p->m != p->small)
        free(p->m);
    return rc;
}

/* One message of its own. */
static int pair_one(fmpl_mpi_comm *c, const char *func, int send, const void *buf,
                    MPI_Count count, MPI_Datatype type, int peer)
{
    pairs p;
    pairs_init(&p, c, func);
    pairs_add(&p, send, buf, count, type, peer);
    return pairs_run(&p);
}

/* ------------------------------------------------------------ collectives */

int fmpl_mpi_inter_barrier(fmpl_mpi_comm *c)
{
    int rc = fmpl_coll_barrier(c->inter->span);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(c->handle, fmpl_mpi_error_class_of(rc),
                                               "MPI_Barrier", "barrier failed");
}

int fmpl_mpi_inter_bcast(fmpl_mpi_comm *c, const char *func, void *buf, MPI_Count count,
                         MPI_Datatype type, int root)
{
    fmpl_mpi_inter *in = c->inter;
    int role = ROLE_IDLE, rc = role_of(c, func, root, &role);
    if (rc == MPI_SUCCESS)
        rc = check_count(c, func, count);
    if (rc != MPI_SUCCESS || role == ROLE_IDLE)
        return rc;
    if ((rc = fmpl_mpi_type_check(c->handle, type, func)) != MPI_SUCCESS)
        return rc;
    if (role == ROLE_ROOT)
        return done(c, func, pair_one(c, func, 1, buf, count, type, 0));
    if (c->team->rank == 0)
        rc = pair_one(c, func, 0, buf, count, type, root);
    int rc2 = PMPI_Bcast_c(buf, count, type, 0, in->local);
    return done(c, func, rc != MPI_SUCCESS ? rc : rc2);
}

/* Gather and scatter: the root posts one transfer per remote process
 * (`to_root`: receives), every member of the other group one. */
static int rooted(fmpl_mpi_comm *c, const char *func, int to_root, void *rootbuf,
                  fmpl_mpi_array counts, fmpl_mpi_array displs, MPI_Count count,
                  MPI_Datatype roottype, void *leafbuf, MPI_Count leafcount,
                  MPI_Datatype leaftype, int root)
{
    int role = ROLE_IDLE, rc = role_of(c, func, root, &role);
    if (rc != MPI_SUCCESS || role == ROLE_IDLE)
        return rc;
    if (role == ROLE_LEAF) {
        if ((rc = check_count(c, func, leafcount)) != MPI_SUCCESS ||
            (rc = fmpl_mpi_type_check(c->handle, leaftype, func)) != MPI_SUCCESS)
            return rc;
        return done(c, func, pair_one(c, func, to_root, leafbuf, leafcount, leaftype, root));
    }
    int n = c->team->size;
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
        rc = check_count(c, func, at_or(counts, r, count));
    if (rc != MPI_SUCCESS || (rc = fmpl_mpi_type_check(c->handle, roottype, func)) != MPI_SUCCESS)
        return rc;
    MPI_Aint extent = extent_of(roottype);
    pairs p;
    pairs_init(&p, c, func);
    for (int r = 0; r < n; r++)
        pairs_add(&p, !to_root, (char *)rootbuf + (MPI_Aint)at_or(displs, r, r * count) * extent,
                  at_or(counts, r, count), roottype, r);
    return done(c, func, pairs_run(&p));
}

int fmpl_mpi_inter_gatherv(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                           MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                           fmpl_mpi_array recvcounts, fmpl_mpi_array displs, MPI_Count recvcount,
                           MPI_Datatype recvtype, int root)
{
    return rooted(c, func, 1, recvbuf, recvcounts, displs, recvcount, recvtype,
                  (void *)sendbuf, sendcount, sendtype, root);
}

int fmpl_mpi_inter_scatterv(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                            fmpl_mpi_array sendcounts, fmpl_mpi_array displs,
                            MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, int root)
{
    return rooted(c, func, 0, (void *)sendbuf, sendcounts, displs, sendcount, sendtype,
                  recvbuf, recvcount, recvtype, root);
}

/* One side of an exchange with every remote process: per rank r, the
 * count, the byte displacement and the type. */
typedef struct side_args {
    fmpl_mpi_array counts;
    MPI_Count count;           /* without counts */
    fmpl_mpi_array displs;     /* elements (or bytes: in_bytes); absent: r * count */
    int in_bytes;
    int same_block;            /* allgather's send: one block for everybody */
    MPI_Datatype type;         /* without types */
    const MPI_Datatype *types;
} side_args;

static MPI_Count side_count(const side_args *s, int r) { return at_or(s->counts, r, s->count); }
static MPI_Datatype side_type(const side_args *s, int r) { return s->types ? s->types[r] : s->type; }
static MPI_Aint side_disp(const side_args *s, int r)
{
    if (s->same_block)
        return 0;
    MPI_Aint d = (MPI_Aint)at_or(s->displs, r, r * s->count);
    return s->in_bytes ? d : d * extent_of(side_type(s, r));
}

/* One send to and one receive from every remote process. */
static int exchange(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                    const side_args *s, void *recvbuf, const side_args *r)
{
    int n = c->team->size, rc = MPI_SUCCESS;
    for (int p = 0; p < n && rc == MPI_SUCCESS; p++) {
        if ((rc = check_count(c, func, side_count(s, p))) != MPI_SUCCESS ||
            (rc = check_count(c, func, side_count(r, p))) != MPI_SUCCESS ||
            (rc = fmpl_mpi_type_check(c->handle, side_type(s, p), func)) != MPI_SUCCESS ||
            (rc = fmpl_mpi_type_check(c->handle, side_type(r, p), func)) != MPI_SUCCESS)
            return rc;
    }
    pairs msgs;
    pairs_init(&msgs, c, func);
    for (int p = 0; p < n; p++) {
        pairs_add(&msgs, 0, (char *)recvbuf + side_disp(r, p), side_count(r, p), side_type(r, p),
                  p);
        pairs_add(&msgs, 1, (const char *)sendbuf + side_disp(s, p), side_count(s, p),
                  side_type(s, p), p);
    }
    return done(c, func, pairs_run(&msgs));
}

int fmpl_mpi_inter_allgather(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                             MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             fmpl_mpi_array recvcounts, fmpl_mpi_array displs,
                             MPI_Count recvcount, MPI_Datatype recvtype)
{
    side_args s = {.counts = FMPL_MPI_NO_ARRAY, .count = sendcount, .displs = FMPL_MPI_NO_ARRAY,
                   .same_block = 1, .type = sendtype};
    side_args r = {.counts = recvcounts, .count = recvcount, .displs = displs, .type = recvtype};
    return exchange(c, func, sendbuf, &s, recvbuf, &r);
}

int fmpl_mpi_inter_alltoall(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                            fmpl_mpi_array sendcounts, fmpl_mpi_array sdispls,
                            MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            fmpl_mpi_array recvcounts, fmpl_mpi_array rdispls,
                            MPI_Count recvcount, MPI_Datatype recvtype)
{
    side_args s = {.counts = sendcounts, .count = sendcount, .displs = sdispls,
                   .type = sendtype};
    side_args r = {.counts = recvcounts, .count = recvcount, .displs = rdispls,
                   .type = recvtype};
    return exchange(c, func, sendbuf, &s, recvbuf, &r);
}

int fmpl_mpi_inter_alltoallw(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                             fmpl_mpi_array sendcounts, fmpl_mpi_array sdispls,
                             const MPI_Datatype *sendtypes, void *recvbuf,
                             fmpl_mpi_array recvcounts, fmpl_mpi_array rdispls,
                             const MPI_Datatype *recvtypes)
{
    side_args s = {.counts = sendcounts, .displs = sdispls, .in_bytes = 1, .types = sendtypes};
    side_args r = {.counts = recvcounts, .displs = rdispls, .in_bytes = 1, .types = recvtypes};
    return exchange(c, func, sendbuf, &s, recvbuf, &r);
}

/* The local group's reduction of count elements, at the local leader in
 * a temporary buffer (*base: what to free; NULL elsewhere). */
static int local_reduce(fmpl_mpi_comm *c, const void *sendbuf, MPI_Count count,
                        MPI_Datatype type, MPI_Op op, void **result, void **base)
{
    *result = *base = NULL;
    int rc;
    if (c->team->rank == 0 && (rc = temp_buffer(type, count, result, base)) != MPI_SUCCESS)
        return rc;
    return PMPI_Reduce_c(sendbuf, *result, count, type, op, 0, c->inter->local);
}

int fmpl_mpi_inter_reduce(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                          void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                          int root)
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
        return done(c, func, pair_one(c, func, 0, recvbuf, count, type, 0));
    void *result, *base;
    rc = local_reduce(c, sendbuf, count, type, op, &result, &base);
    if (rc == MPI_SUCCESS && c->team->rank == 0) {
        pairs p;
        pairs_init(&p, c, func);
        if (root == FMPL_MPI_INTER_ALL)
            pairs_add(&p, 0, recvbuf, count, type, 0);
        pairs_add(&p, 1, result, count, type, root == FMPL_MPI_INTER_ALL ? 0 : root);
        rc = pairs_run(&p);
    }
    free(base);
    if (root == FMPL_MPI_INTER_ALL) {
        int rc2 = PMPI_Bcast_c(recvbuf, count, type, 0, in->local);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    return done(c, func, rc);
}

int fmpl_mpi_inter_reduce_scatter(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                                  void *recvbuf, fmpl_mpi_array recvcounts,
                                  MPI_Count recvcount, MPI_Datatype type, MPI_Op op)
{
    fmpl_mpi_inter *in = c->inter;
    int n = in->local_size, me = c->team->rank, rc = MPI_SUCCESS;
    /* the local scatter's arrays (while capturing, the schedule's: the
     * scatter may read them when it runs) */
    void *arrays_base;
    MPI_Count *counts = body_alloc((size_t)n * (sizeof(MPI_Count) + sizeof(MPI_Aint)),
                                   &arrays_base), total = 0;
    if (!counts)
        return fmpl_mpi_error(c->handle, MPI_ERR_NO_MEM, func, "no memory");
    MPI_Aint *displs = (MPI_Aint *)(counts + n);
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++) {
        counts[r] = at_or(recvcounts, r, recvcount);
        displs[r] = (MPI_Aint)total;
        total += counts[r];
        rc = check_count(c, func, counts[r]);
    }
    if (rc == MPI_SUCCESS)
        rc = fmpl_mpi_type_check(c->handle, type, func);
    if (rc != MPI_SUCCESS) {
        free(arrays_base);
        return rc;
    }
    /* The standard makes the two groups' totals equal. */
    void *result, *base, *remote = NULL, *remote_base = NULL;
    rc = local_reduce(c, sendbuf, total, type, op, &result, &base);
    if (rc == MPI_SUCCESS && me == 0 &&
        (rc = temp_buffer(type, total, &remote, &remote_base)) == MPI_SUCCESS) {
        pairs p;
        pairs_init(&p, c, func);
        pairs_add(&p, 0, remote, total, type, 0);
        pairs_add(&p, 1, result, total, type, 0);
        rc = pairs_run(&p);
    }
    int rc2 = PMPI_Scatterv_c(remote, counts, displs, type, recvbuf, counts[me], type, 0,
                              in->local);
    free(base);
    free(remote_base);
    free(arrays_base);
    return done(c, func, rc != MPI_SUCCESS ? rc : rc2);
}
