/* MPI one-sided communication calls: argument and epoch checks, then the
 * one-sided layer (src/rma).  Every access is complete at the target when
 * the call returns, so the request-based forms return requests that are
 * complete already.  Blocking puts and gets of contiguous data into memory
 * that loads and stores reach take a fast path (put_get_fast): the same
 * checks as comparisons on cached values, then one memcpy; whatever it
 * does not take, errors included, goes through the checked general path.
 *
 * Accumulates run on the target's packed stream under the target's
 * accumulate mutex (fmpl_rma_update): the origin's elements, converted to
 * an array of the one basic type both sides are made of, are combined into
 * the target's with the kernel of the predefined operation (MPI_REPLACE and
 * MPI_NO_OP included).  Pair types (MPI_DOUBLE_INT ...) have padding in C
 * but none in the packed stream: they are converted to C layout around the
 * kernel. */
#include "api/mpi/win.h"
#include "collectives/op.h"

#include <stdlib.h>
#include <string.h>

typedef struct rma_target {
    fmpl_mpi_win *w;
    int rank;                 /* -1: MPI_PROC_NULL */
    int64_t disp;             /* bytes from the target's window base */
    int64_t count;            /* elements of ttype */
    fmpl_datatype *ttype;
} rma_target;

static int report(MPI_Win win, int fmpl_err, const char *func)
{
    return fmpl_mpi_error(win, fmpl_mpi_error_class_of(fmpl_err), func,
                          fmpl_err == FMPL_ERR_UNSUPPORTED
                              ? "the target's private memory cannot be reached (kernel-assisted "
                                "copies are not allowed here; allocate the window with "
                                "MPI_Win_allocate or MPI_Alloc_mem)"
                              : "the access failed");
}

/* One side's data: count and committed datatype. */
static int check_data(MPI_Win win, MPI_Count count, MPI_Datatype type, const char *what,
                      const char *func)
{
    if (count < 0)
        return fmpl_mpi_error(win, MPI_ERR_COUNT, func, "%s count %lld is negative", what,
                              (long long)count);
    return fmpl_mpi_type_check(win, type, func);
}

static int64_t data_bytes(MPI_Count count, MPI_Datatype type)
{
    return (int64_t)count * fmpl_dt_size(fmpl_mpi_datatype_get(type));
}

/* The target side: rank, epoch, displacement and range.  t->rank = -1 for
 * MPI_PROC_NULL (nothing to do).  `request`: a request-based call, which
 * MPI allows in passive-target epochs only. */
static int check_target(MPI_Win win, int rank, MPI_Aint disp, MPI_Count count,
                        MPI_Datatype type, int request, const char *func, rma_target *t)
{
    FMPL_GET_WIN(win, w, func);
    t->w = w;
    t->rank = -1;
    int rc = check_data(win, count, type, "target", func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->team->size)
        return fmpl_mpi_error(win, MPI_ERR_RANK, func, "target rank %d is not in [0, %d)", rank,
                              w->team->size);
    if (request ? !w->locks[rank] && !w->lock_all : !fmpl_mpi_win_may_access(w, rank))
        return fmpl_mpi_error(win, MPI_ERR_RMA_SYNC, func,
                              request ? "request-based calls need a passive-target epoch "
                                        "(MPI_Win_lock or MPI_Win_lock_all) on the target"
                                      : "no access epoch to target %d is open (fence, "
                                        "start or lock first)",
                              rank);
    if (disp < 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return fmpl_mpi_error(win, MPI_ERR_DISP, func, "target_disp %ld is negative",
                              (long)disp);
    t->ttype = fmpl_mpi_datatype_get(type);
    t->count = count;
    if (__builtin_mul_overflow((int64_t)disp, w->rma->peer[rank].disp_unit, &t->disp))
        return fmpl_mpi_error(win, MPI_ERR_RMA_RANGE, func,
                              "target_disp %lld is outside target %d's window", (long long)disp,
                              rank);
    if (count > 0) {
        int64_t lo = t->disp + fmpl_dt_true_lb(t->ttype);
        int64_t span = (count - 1) * fmpl_dt_extent(t->ttype) + fmpl_dt_true_extent(t->ttype);
        if (!fmpl_rma_in_window(w->rma, rank, lo, span))
            return fmpl_mpi_error(win, MPI_ERR_RMA_RANGE, func,
                                  "bytes [%lld, %lld) are outside target %d's window of %llu "
                                  "bytes",
                                  (long long)lo, (long long)(lo + span), rank,
                                  (unsigned long long)w->rma->peer[rank].size);
    }
    t->rank = rank;
    return MPI_SUCCESS;
}

static int same_size(MPI_Win win, int64_t a, int64_t b, const char *func)
{
    if (a != b)
        return fmpl_mpi_error(win, MPI_ERR_TYPE, func,
                              "the origin holds %lld bytes, the target %lld (the type "
                              "signatures must match)",
                              (long long)a, (long long)b);
    return MPI_SUCCESS;
}

/* The blocking calls pass this as their request: no request wanted.  A
 * request-based call passing NULL is an error. */
static MPI_Request no_request_slot;
#define NO_REQUEST (&no_request_slot)

static int check_request(MPI_Win win, MPI_Request *request, const char *func)
{
    if (!request)
        return fmpl_mpi_error(win, MPI_ERR_ARG, func, "request is NULL");
    return MPI_SUCCESS;
}

static int done_request(MPI_Win win, MPI_Request *request, const char *func)
{
    if (request == NO_REQUEST)
        return MPI_SUCCESS;
    fmpl_mpi_request *r = fmpl_mpi_request_new();
    if (!r)
        return fmpl_mpi_error(win, MPI_ERR_NO_MEM, func, "no memory for a request");
    r->kind = FMPL_MREQ_DONE;
    r->comm = MPI_COMM_WORLD;
    *request = r->handle;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ put, get */

/* A datatype whose elements are plain bytes: `size` bytes per element, n
 * elements at [buf + lb, + n * size).  size 0: not such a type (or one
 * without data). */
typedef struct byte_layout {
    int64_t size, lb;
} byte_layout;

/* The fast path of the blocking MPI_Put and MPI_Get for data laid out as
 * o and t (size > 0): a target whose memory loads and stores reach, inside
 * an access epoch: the checks of the general path in a few comparisons,
 * then one memcpy.  1 when done; 0 when the call is not this case or any
 * check fails, and the general path runs (and reports the error). */
__attribute__((always_inline)) static inline int
put_get_direct(void *obuf, MPI_Count ocount, byte_layout o, int rank, MPI_Aint disp,
               MPI_Count tcount, byte_layout t, MPI_Win win, int is_put)
{
    uint64_t bytes, obytes;
    if (fmpl_mpi_state != FMPL_MPI_READY || tcount <= 0 || ocount <= 0 || disp < 0 ||
        __builtin_mul_overflow((uint64_t)tcount, (uint64_t)t.size, &bytes) ||
        __builtin_mul_overflow((uint64_t)ocount, (uint64_t)o.size, &obytes) || bytes != obytes)
        return 0;
    fmpl_mpi_win *w = fmpl_mpi_win_lookup(win);
    if (!w || (unsigned)rank >= (unsigned)w->team->size || !fmpl_mpi_win_may_access(w, rank))
        return 0;
    char *mem = fmpl_rma_direct_span(w->rma, rank, disp, t.lb, bytes);
    if (!mem)
        return 0;
    char *data = (char *)((uintptr_t)obuf + (uintptr_t)o.lb); /* MPI_BOTTOM: absolute */
    if (is_put)
        memcpy(mem, data, bytes);
    else
        memcpy(data, mem, bytes);
    return 1;
}

/* The layout of a committed contiguous derived type (or pair type); size
 * 0 for any other handle. */
static byte_layout derived_layout(MPI_Datatype type)
{
    const fmpl_datatype *d = fmpl_mpi_datatype_get(type);
    if (!d || !fmpl_dt_is_contiguous(d))
        return (byte_layout){0, 0};
    return (byte_layout){fmpl_dt_size(d), fmpl_dt_true_lb(d)};
}

/* The fast path for contiguous derived types: out of line, so that the
 * builtin case inlined in the entry points stays short. */
__attribute__((noinline)) static int
put_get_derived(void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                MPI_Count tcount, MPI_Datatype ttype, MPI_Win win, int is_put)
{
    byte_layout o = derived_layout(otype), t = derived_layout(ttype);
    return o.size > 0 && t.size > 0 &&
           put_get_direct(obuf, ocount, o, rank, disp, tcount, t, win, is_put);
}

/* Builtin types (size in the handle, lb 0) on both sides inline, any
 * other through put_get_derived. */
__attribute__((always_inline)) static inline int
put_get_fast(void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
             MPI_Count tcount, MPI_Datatype ttype, MPI_Win win, int is_put)
{
    int os = fmpl_mpi_builtin_size(otype), ts = fmpl_mpi_builtin_size(ttype);
    if (os > 0 && ts > 0)
        return put_get_direct(obuf, ocount, (byte_layout){os, 0}, rank, disp, tcount,
                              (byte_layout){ts, 0}, win, is_put);
    return put_get_derived(obuf, ocount, otype, rank, disp, tcount, ttype, win, is_put);
}

/* The general path: every check with its error, any datatypes, any memory. */
__attribute__((noinline)) static int
put_get_checked(void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                MPI_Count tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *request,
                int is_put, const char *func)
{
    rma_target t;
    int rc = check_request(win, request, func);
    if (rc == MPI_SUCCESS)
        rc = check_target(win, rank, disp, tcount, ttype, request != NO_REQUEST, func, &t);
    if (rc == MPI_SUCCESS)
        rc = check_data(win, ocount, otype, "origin", func);
    if (rc == MPI_SUCCESS && t.rank >= 0)
        rc = same_size(win, data_bytes(ocount, otype), data_bytes(tcount, ttype), func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (t.rank >= 0) {
        fmpl_datatype *o = fmpl_mpi_datatype_get(otype);
        int err = is_put ? fmpl_rma_put(t.w->rma, t.rank, t.disp, obuf, ocount, o, tcount,
                                        t.ttype)
                         : fmpl_rma_get(t.w->rma, t.rank, t.disp, obuf, ocount, o, tcount,
                                        t.ttype);
        if (err)
            return report(win, err, func);
    }
    return done_request(win, request, func);
}

/* Inlined in each entry point: the fast path without a call. */
__attribute__((always_inline)) static inline int
put_get(void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
        MPI_Count tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *request, int is_put,
        const char *func)
{
    if (request == NO_REQUEST &&
        put_get_fast(obuf, ocount, otype, rank, disp, tcount, ttype, win, is_put))
        return MPI_SUCCESS;
    return put_get_checked(obuf, ocount, otype, rank, disp, tcount, ttype, win, request, is_put,
                           func);
}

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    FMPL_CORE_GUARD();
    return put_get((void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NO_REQUEST, 1, "MPI_Put");
}
FMPL_MPI_WEAK(Put)

int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    FMPL_CORE_GUARD();
    return put_get((void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NO_REQUEST, 1, "MPI_Put_c");
}
FMPL_MPI_WEAK(Put_c)

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    FMPL_CORE_GUARD();
    return put_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NO_REQUEST, 0, "MPI_Get");
}
FMPL_MPI_WEAK(Get)

int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    FMPL_CORE_GUARD();
    return put_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NO_REQUEST, 0, "MPI_Get_c");
}
FMPL_MPI_WEAK(Get_c)

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return put_get((void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request, 1, "MPI_Rput");
}
FMPL_MPI_WEAK(Rput)

int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return put_get((void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request, 1, "MPI_Rput_c");
}
FMPL_MPI_WEAK(Rput_c)

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return put_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request, 0, "MPI_Rget");
}
FMPL_MPI_WEAK(Rget)

int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return put_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request, 0, "MPI_Rget_c");
}
FMPL_MPI_WEAK(Rget_c)

/* ------------------------------------------------------------ accumulates */

/* What the update runs on the target's packed stream (fmpl_rma_update). */
typedef struct acc_update {
    fmpl_op op;               /* the kernel on one basic type */
    int no_op;                /* MPI_NO_OP: only fetch */
    const char *origin;       /* the origin's elements as a C array of the basic type */
    const char *compare;      /* Compare_and_swap: the value to compare with */
    int64_t n;                /* basic elements */
    fmpl_datatype *pair;      /* pair types: the basic type, to convert around the kernel */
    char *c_layout;           /* pair types: n elements in C layout */
    void *result;             /* fetching calls: where the old target data goes */
    int64_t rcount;
    fmpl_datatype *rtype;
} acc_update;

static void acc_apply(void *ctx, char *stream, int64_t bytes)
{
    acc_update *u = ctx;
    if (u->result)
        fmpl_dt_unpack(stream, bytes, u->result, u->rcount, u->rtype, 0, NULL);
    if (u->compare) {
        if (memcmp(stream, u->compare, (size_t)bytes) == 0)
            memcpy(stream, u->origin, (size_t)bytes);
        return;
    }
    if (u->no_op)
        return;
    if (!u->pair) {
        fmpl_op_apply(&u->op, u->origin, stream, u->n);
        return;
    }
    fmpl_dt_unpack(stream, bytes, u->c_layout, u->n, u->pair, 0, NULL);
    fmpl_op_apply(&u->op, u->origin, u->c_layout, u->n);
    fmpl_dt_pack(u->c_layout, u->n, u->pair, 0, stream, bytes, NULL);
}

static void combine_one(void *ctx, const void *in, void *inout)
{
    fmpl_op_apply(&((acc_update *)ctx)->op, in, inout, 1);
}

#define ACC_STACK 256

/* The atomic path (rma_atomic.c), when the target's elements allow it:
 * returns 1 if it ran (*err: how it went), 0 to take the mutex path. */
static int update_atomic(const rma_target *t, acc_update *u, int64_t bytes, size_t esize,
                         int *err)
{
    char small[ACC_STACK];
    char *fetched = !u->result ? NULL
                    : bytes <= ACC_STACK ? small
                                         : fmpl_mpi_stage_get((size_t)bytes);
    if (u->result && !fetched) {
        *err = FMPL_ERR_NO_MEMORY;
        return 1;
    }
    fmpl_rma_elements el = {.esize = esize, .combine = combine_one, .ctx = u,
                            .origin = u->no_op ? NULL : u->origin, .compare = u->compare,
                            .fetched = fetched};
    int done = fmpl_rma_update_atomic(t->w->rma, t->rank, t->disp, t->count, t->ttype, &el);
    if (done && fetched)
        *err = fmpl_dt_unpack(fetched, bytes, u->result, u->rcount, u->rtype, 0, NULL);
    if (fetched != small)
        fmpl_mpi_stage_put(fetched);
    return done;
}

/* The one basic type a datatype is made of, FMPL_BT_NONE if it mixes. */
static int basic_of(MPI_Datatype t)
{
    int bt = fmpl_mpi_basic_type(t);
    return bt != FMPL_BT_NONE ? bt : (int)fmpl_dt_homogeneous_basic(fmpl_mpi_datatype_get(t));
}

/* The common body of Accumulate, Get_accumulate, Fetch_and_op and
 * Compare_and_swap (and their request forms).  result NULL: no fetch;
 * compare non-NULL: compare-and-swap. */
typedef struct acc_call {
    const void *obuf;
    MPI_Count ocount;
    MPI_Datatype otype;
    void *rbuf;
    MPI_Count rcount;
    MPI_Datatype rtype;
    const void *compare;
    int rank;
    MPI_Aint disp;
    MPI_Count tcount;
    MPI_Datatype ttype;
    MPI_Op op;
    int fetch;              /* the result buffer is wanted */
} acc_call;

static int accumulate(const acc_call *a, MPI_Win win, MPI_Request *request, const char *func)
{
    rma_target t;
    int no_op = a->op == MPI_NO_OP;
    int rc = check_request(win, request, func);
    if (rc == MPI_SUCCESS)
        rc = check_target(win, a->rank, a->disp, a->tcount, a->ttype, request != NO_REQUEST,
                          func, &t);
    if (rc == MPI_SUCCESS && !no_op)
        rc = check_data(win, a->ocount, a->otype, "origin", func);
    if (rc == MPI_SUCCESS && a->fetch)
        rc = check_data(win, a->rcount, a->rtype, "result", func);
    if (rc == MPI_SUCCESS && a->fetch && !a->rbuf && data_bytes(a->rcount, a->rtype) > 0)
        rc = fmpl_mpi_error(win, MPI_ERR_BUFFER, func, "result_addr is NULL");
    if (rc != MPI_SUCCESS || t.rank < 0)
        return rc != MPI_SUCCESS ? rc : done_request(win, request, func);
    int64_t bytes = data_bytes(a->tcount, a->ttype);
    if (!no_op)
        rc = same_size(win, data_bytes(a->ocount, a->otype), bytes, func);
    if (rc == MPI_SUCCESS && a->fetch)
        rc = same_size(win, data_bytes(a->rcount, a->rtype), bytes, func);
    if (rc != MPI_SUCCESS || bytes == 0) /* nothing to combine: no type to check */
        return rc != MPI_SUCCESS ? rc : done_request(win, request, func);
    int bt = basic_of(a->ttype);
    if (bt == FMPL_BT_NONE || (!no_op && basic_of(a->otype) != bt) ||
        (a->fetch && basic_of(a->rtype) != bt))
        return fmpl_mpi_error(win, MPI_ERR_TYPE, func,
                              "accumulates need the origin, result and target datatypes made "
                              "of one and the same basic type");
    if (fmpl_handle_is_dynamic(a->op))
        return fmpl_mpi_error(win, MPI_ERR_OP, func,
                              "accumulates take predefined operations only (MPI 12.3.4)");
    fmpl_mpi_reduction r;
    rc = fmpl_mpi_reduction_make(a->op, fmpl_mpi_basic_handle(bt), &r);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(win, rc, func, "%s", r.why ? r.why : "invalid operation");
    fmpl_datatype *basic = fmpl_dt_basic((fmpl_basic_type)bt);
    int64_t n = bytes / fmpl_dt_size(basic);
    size_t c_bytes = (size_t)n * fmpl_op_elem_size(&r.op);
    int pair = fmpl_op_elem_size(&r.op) != (size_t)fmpl_dt_size(basic);
    acc_update u = {.op = r.op, .no_op = no_op, .compare = a->compare, .n = n,
                    .pair = pair ? basic : NULL, .result = a->fetch ? a->rbuf : NULL,
                    .rcount = a->rcount,
                    .rtype = a->fetch ? fmpl_mpi_datatype_get(a->rtype) : NULL};
    /* The origin as a C array of the basic type, and the pair conversion
     * area: on the stack when small (Fetch_and_op, Compare_and_swap), else
     * from the staging pool (no allocation once it is warm). */
    char small[2][ACC_STACK];
    char *origin = NULL, *c_layout = NULL;
    fmpl_datatype *o = no_op ? NULL : fmpl_mpi_datatype_get(a->otype);
    if (o && fmpl_dt_is_contiguous(o) && !pair) {
        u.origin = (const char *)a->obuf + fmpl_dt_true_lb(o);
    } else if (o) {
        origin = c_bytes <= ACC_STACK ? small[0] : fmpl_mpi_stage_get(c_bytes);
        if (origin)
            fmpl_dt_copy(a->obuf, a->ocount, o, origin, n, basic, NULL);
        u.origin = origin;
    }
    if (pair)
        u.c_layout = c_layout = c_bytes <= ACC_STACK ? small[1] : fmpl_mpi_stage_get(c_bytes);
    int err = (o && !u.origin) || (pair && !c_layout) ? FMPL_ERR_NO_MEMORY : FMPL_SUCCESS;
    if (!err && (pair || !update_atomic(&t, &u, bytes, (size_t)fmpl_dt_size(basic), &err)))
        err = fmpl_rma_update(t.w->rma, t.rank, t.disp, a->tcount, t.ttype, acc_apply, &u);
    if (origin != small[0])
        fmpl_mpi_stage_put(origin);
    if (c_layout != small[1])
        fmpl_mpi_stage_put(c_layout);
    if (err)
        return report(win, err, func);
    return done_request(win, request, func);
}

#define ACC(ob, oc, ot, r, d, tc, tt, o_)                                          \
    (acc_call){.obuf = (ob), .ocount = (oc), .otype = (ot), .rank = (r), .disp = (d), \
               .tcount = (tc), .ttype = (tt), .op = (o_)}

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    FMPL_CORE_GUARD();
    acc_call a = ACC(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                     target_count, target_datatype, op);
    return accumulate(&a, win, NO_REQUEST, "MPI_Accumulate");
}
FMPL_MPI_WEAK(Accumulate)

int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    FMPL_CORE_GUARD();
    acc_call a = ACC(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                     target_count, target_datatype, op);
    return accumulate(&a, win, NO_REQUEST, "MPI_Accumulate_c");
}
FMPL_MPI_WEAK(Accumulate_c)

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    acc_call a = ACC(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                     target_count, target_datatype, op);
    return accumulate(&a, win, request, "MPI_Raccumulate");
}
FMPL_MPI_WEAK(Raccumulate)

int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                       MPI_Request *request)
{
    FMPL_CORE_GUARD();
    acc_call a = ACC(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                     target_count, target_datatype, op);
    return accumulate(&a, win, request, "MPI_Raccumulate_c");
}
FMPL_MPI_WEAK(Raccumulate_c)

static int get_accumulate(const void *obuf, MPI_Count ocount, MPI_Datatype otype, void *rbuf,
                          MPI_Count rcount, MPI_Datatype rtype, int rank, MPI_Aint disp,
                          MPI_Count tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win,
                          MPI_Request *request, const char *func)
{
    acc_call a = ACC(obuf, ocount, otype, rank, disp, tcount, ttype, op);
    a.rbuf = rbuf;
    a.rcount = rcount;
    a.rtype = rtype;
    a.fetch = 1;
    return accumulate(&a, win, request, func);
}

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    FMPL_CORE_GUARD();
    return get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count,
                          target_datatype, op, win, NO_REQUEST, "MPI_Get_accumulate");
}
FMPL_MPI_WEAK(Get_accumulate)

int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win)
{
    FMPL_CORE_GUARD();
    return get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count,
                          target_datatype, op, win, NO_REQUEST, "MPI_Get_accumulate_c");
}
FMPL_MPI_WEAK(Get_accumulate_c)

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count,
                          target_datatype, op, win, request, "MPI_Rget_accumulate");
}
FMPL_MPI_WEAK(Rget_accumulate)

int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                           MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count,
                          target_datatype, op, win, request, "MPI_Rget_accumulate_c");
}
FMPL_MPI_WEAK(Rget_accumulate_c)

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    FMPL_CORE_GUARD();
    return get_accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                          target_disp, 1, datatype, op, win, NO_REQUEST, "MPI_Fetch_and_op");
}
FMPL_MPI_WEAK(Fetch_and_op)

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Compare_and_swap";
    if (!compare_addr || !result_addr || !origin_addr)
        return fmpl_mpi_error(win, MPI_ERR_BUFFER, func, "a buffer is NULL");
    if (!fmpl_mpi_is_predefined_type(datatype))
        return fmpl_mpi_error(win, MPI_ERR_TYPE, func,
                              "compare-and-swap takes a predefined datatype");
    acc_call a = ACC(origin_addr, 1, datatype, target_rank, target_disp, 1, datatype,
                     MPI_REPLACE);
    a.rbuf = result_addr;
    a.rcount = 1;
    a.rtype = datatype;
    a.fetch = 1;
    a.compare = compare_addr;
    return accumulate(&a, win, NO_REQUEST, func);
}
FMPL_MPI_WEAK(Compare_and_swap)
