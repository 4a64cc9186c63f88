/* Nonblocking and persistent collectives: the capture around the blocking
 * bodies, the data-movement helpers they call (coll_nbc.h), and the
 * requests (kind FMPL_MREQ_ASYNC; persistent ones keep their schedule and
 * restart it at each MPI_Start, allocating nothing). */
#include "api/mpi/coll_nbc.h"
#include "api/mpi/intercomm.h"
#include "progress/progress.h"

#include <string.h>

FMPL_TLS const char *fmpl_mpi_nbc_func;

/* ------------------------------------------------------------ data helpers */

/* Steps before the algorithm go into round 0 (the algorithm opens a new
 * phase); steps after it each open their own. */
static void post_phase(void) { fmpl_sched_phase(fmpl_coll_capture); }

void fmpl_mpi_coll_copy(void *dst, const void *src, size_t bytes)
{
    if (!fmpl_coll_capture) {
        if (bytes)
            memmove(dst, src, bytes);
        return;
    }
    fmpl_sched_copy(fmpl_coll_capture, 0, dst, src, (int64_t)bytes);
}

static void unref_step(void *arg) { fmpl_dt_unref(arg); }
static void unhold_step(void *arg) { fmpl_mpi_type_unhold((MPI_Datatype)(uintptr_t)arg); }

/* The schedule keeps a reference on t until it is freed (the caller may
 * free the type's handle before the collective completes).  Taken only
 * once its release is recorded: a schedule out of memory leaks nothing. */
static void keep_type(fmpl_datatype *t)
{
    if (fmpl_sched_on_free(fmpl_coll_capture, unref_step, t) == FMPL_SUCCESS)
        fmpl_dt_ref(t);
}

/* A copy of b for later steps: its byte arrays may be the body's reusable
 * scratch, so they are copied too, and its derived types are resolved and
 * referenced (the caller may free them before the collective completes). */
static fmpl_mpi_blocks *keep_blocks(const fmpl_mpi_blocks *b)
{
    fmpl_sched *s = fmpl_coll_capture;
    size_t arrays = b->bcounts ? 2 * (size_t)b->n * sizeof(int64_t) : 0;
    int ntypes = b->types ? b->n : 1;
    fmpl_mpi_blocks *k = fmpl_sched_alloc(s, sizeof *k + arrays);
    fmpl_datatype **held = fmpl_sched_alloc(s, (size_t)ntypes * sizeof *held);
    if (!k || !held)
        return NULL;
    *k = *b;
    for (int i = 0; i < ntypes; i++) {
        MPI_Datatype t = b->types ? b->types[i] : b->type;
        if (fmpl_mpi_is_predefined_type(t))
            continue;
        held[i] = fmpl_mpi_datatype_get(t);
        keep_type(held[i]);
    }
    k->held = held;
    if (arrays) {
        k->bcounts = (int64_t *)(k + 1);
        k->bdispls = k->bcounts + b->n;
        memcpy(k->bcounts, b->bcounts, (size_t)b->n * sizeof(int64_t));
        memcpy(k->bdispls, b->bdispls, (size_t)b->n * sizeof(int64_t));
    }
    return k;
}

static void pack_all_step(void *arg) { fmpl_mpi_blocks_pack_all(arg); }
static void unpack_all_step(void *arg) { fmpl_mpi_blocks_unpack_all(arg); }

void fmpl_mpi_coll_pack_all(const fmpl_mpi_blocks *b)
{
    if (!fmpl_coll_capture) {
        fmpl_mpi_blocks_pack_all(b);
        return;
    }
    fmpl_mpi_blocks *k = b->stage ? keep_blocks(b) : NULL;
    if (k)
        fmpl_sched_call(fmpl_coll_capture, 0, pack_all_step, k);
}

typedef struct one_block {
    fmpl_mpi_blocks *b;
    int p;
} one_block;

static void pack_one_step(void *arg)
{
    one_block *o = arg;
    fmpl_mpi_blocks_pack(o->b, o->p);
}

void fmpl_mpi_coll_pack(const fmpl_mpi_blocks *b, int p)
{
    if (!fmpl_coll_capture) {
        fmpl_mpi_blocks_pack(b, p);
        return;
    }
    if (!b->stage)
        return;
    one_block *o = fmpl_sched_alloc(fmpl_coll_capture, sizeof *o);
    if (o && (o->b = keep_blocks(b)) != NULL) {
        o->p = p;
        fmpl_sched_call(fmpl_coll_capture, 0, pack_one_step, o);
    }
}

void fmpl_mpi_coll_unstage_blocks(int rc, fmpl_mpi_blocks *send, fmpl_mpi_blocks *recv)
{
    if (!fmpl_coll_capture) {
        if (recv && rc == FMPL_SUCCESS)
            fmpl_mpi_blocks_unpack_all(recv);
        if (send)
            fmpl_mpi_blocks_done(send);
        if (recv)
            fmpl_mpi_blocks_done(recv);
        return;
    }
    fmpl_sched *s = fmpl_coll_capture;
    if (recv && recv->stage) {
        fmpl_mpi_blocks *k = keep_blocks(recv);
        post_phase();
        if (k)
            fmpl_sched_call(s, 0, unpack_all_step, k);
    }
    if (send && send->stage)
        fmpl_sched_on_free(s, fmpl_mpi_stage_put, send->stage);
    if (recv && recv->stage)
        fmpl_sched_on_free(s, fmpl_mpi_stage_put, recv->stage);
}

/* One contiguous buffer of a non-contiguous type (broadcast). */
static void buf_pack_step(void *arg)
{
    fmpl_mpi_buf *b = arg;
    int64_t written;
    fmpl_dt_pack(b->user, b->count, b->type, 0, b->data, b->bytes, &written);
}

static void buf_unpack_step(void *arg)
{
    fmpl_mpi_buf *b = arg;
    int64_t consumed;
    fmpl_dt_unpack(b->data, b->bytes, b->user, b->count, b->type, 0, &consumed);
}

static void buf_release(void *arg)
{
    fmpl_mpi_buf *b = arg;
    fmpl_mpi_stage_put(b->data);
    fmpl_dt_unref(b->type);
}

static fmpl_mpi_buf *keep_buf(const fmpl_mpi_buf *b)
{
    fmpl_mpi_buf *k = fmpl_sched_alloc(fmpl_coll_capture, sizeof *k);
    if (k)
        *k = *b;
    return k;
}

int fmpl_mpi_coll_buf_stage(fmpl_mpi_buf *b, int pack)
{
    if (!fmpl_coll_capture || !b->type)
        return fmpl_mpi_buf_stage(b, pack);
    int rc = fmpl_mpi_buf_stage(b, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_buf *k = keep_buf(b);
    if (!k) {
        fmpl_mpi_buf_unstage(b, 0);
        return MPI_ERR_NO_MEM;
    }
    fmpl_dt_ref(k->type);
    fmpl_sched_on_free(fmpl_coll_capture, buf_release, k);
    if (pack)
        fmpl_sched_call(fmpl_coll_capture, 0, buf_pack_step, k);
    return MPI_SUCCESS;
}

void fmpl_mpi_coll_buf_unstage(fmpl_mpi_buf *b, MPI_Aint received)
{
    if (!fmpl_coll_capture || !b->type) {
        fmpl_mpi_buf_unstage(b, received);
        return;
    }
    /* the staging buffer is the schedule's (buf_release) */
    fmpl_mpi_buf *k = received > 0 ? keep_buf(b) : NULL;
    post_phase();
    if (k)
        fmpl_sched_call(fmpl_coll_capture, 0, buf_unpack_step, k);
}

typedef struct reduction_move {
    const fmpl_mpi_reduction *r;
    const void *from;
    void *to;
    int64_t count;
} reduction_move;

static void reduction_in_step(void *arg)
{
    reduction_move *m = arg;
    fmpl_mpi_reduction_in(m->r, m->from, m->count, m->to);
}

static void reduction_out_step(void *arg)
{
    reduction_move *m = arg;
    fmpl_mpi_reduction_out(m->r, m->from, m->count, m->to);
}

static void reduction_move_step(const fmpl_mpi_reduction *r, const void *from, int64_t count,
                                void *to, void (*fn)(void *))
{
    reduction_move *m = fmpl_sched_alloc(fmpl_coll_capture, sizeof *m);
    if (!m)
        return;
    *m = (reduction_move){r, from, to, count};
    fmpl_sched_call(fmpl_coll_capture, 0, fn, m);
}

void fmpl_mpi_coll_reduction_in(const fmpl_mpi_reduction *r, const void *user, int64_t count,
                                void *stream)
{
    if (!fmpl_coll_capture)
        fmpl_mpi_reduction_in(r, user, count, stream);
    else
        reduction_move_step(r, user, count, stream, reduction_in_step);
}

void fmpl_mpi_coll_reduction_out(const fmpl_mpi_reduction *r, const void *stream,
                                 int64_t count, void *user)
{
    if (!fmpl_coll_capture) {
        fmpl_mpi_reduction_out(r, stream, count, user);
        return;
    }
    post_phase();
    reduction_move_step(r, stream, count, user, reduction_out_step);
}

void fmpl_mpi_coll_stage_put(void *p)
{
    if (!fmpl_coll_capture)
        fmpl_mpi_stage_put(p);
    else if (p)
        fmpl_sched_on_free(fmpl_coll_capture, fmpl_mpi_stage_put, p);
}

void *fmpl_mpi_coll_scratch(size_t bytes)
{
    return fmpl_coll_capture ? fmpl_sched_scratch(fmpl_coll_capture, bytes) : NULL;
}

const fmpl_mpi_reduction *fmpl_mpi_coll_reduction(const fmpl_mpi_reduction *r)
{
    if (!fmpl_coll_capture)
        return r;
    fmpl_mpi_reduction *k = fmpl_sched_alloc(fmpl_coll_capture, sizeof *k);
    if (!k)
        return r; /* the schedule is marked failed: never run */
    *k = *r;
    if (r->op.ctx == &r->ctx)
        k->op.ctx = &k->ctx;
    /* the caller may free its datatype before the collective completes */
    fmpl_datatype *types[] = {k->type, k->stream, k->ctx.derived};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (types[i])
            keep_type(types[i]);
    /* ... and a user function is still called with its handle (and may
     * query it) */
    if ((k->ctx.fn || k->ctx.fn_c) &&
        fmpl_sched_on_free(fmpl_coll_capture, unhold_step,
                           (void *)(uintptr_t)(unsigned)k->ctx.type) == FMPL_SUCCESS)
        fmpl_mpi_type_hold(k->ctx.type);
    return k;
}

/* ------------------------------------------------------------ requests */

int fmpl_mpi_nbc_begin(const char *func, MPI_Comm comm, MPI_Request *request)
{
    if (fmpl_mpi_state != FMPL_MPI_READY)
        return fmpl_mpi_error(comm, MPI_ERR_OTHER, func,
                              fmpl_mpi_state == FMPL_MPI_NEW ? "MPI is not initialized"
                                                             : "MPI was finalized");
    if (!request)
        return fmpl_mpi_error(comm, MPI_ERR_REQUEST, func, "request is NULL");
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    fmpl_coll_capture = fmpl_sched_new(FMPL_SCHED_NONBLOCKING);
    if (!fmpl_coll_capture)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a schedule");
    /* An intercommunicator's body moves data between the groups on its
     * view and runs the local halves on hidden teams (other lanes). */
    if (c && c->inter)
        fmpl_sched_bind_view(fmpl_coll_capture, &c->inter->view, c->inter->backing);
    fmpl_mpi_nbc_func = func;
    return MPI_SUCCESS;
}

static void comm_unhold_step(void *arg) { fmpl_mpi_comm_unhold(arg); }

static int nbc_complete(fmpl_mpi_request *r)
{
    fmpl_sched *s = r->async_state;
    int err = s->error == FMPL_SUCCESS ? MPI_SUCCESS : fmpl_mpi_error_class_of(s->error);
    if (!r->persistent)
        fmpl_sched_free(s);
    return err;
}

int fmpl_mpi_nbc_end(const char *func, MPI_Comm comm, MPI_Request *request, int persistent,
                     int rc)
{
    fmpl_sched *s = fmpl_coll_capture;
    fmpl_coll_capture = NULL;
    fmpl_mpi_nbc_func = NULL;
    if (rc == MPI_SUCCESS && s->error != FMPL_SUCCESS)
        rc = fmpl_mpi_error(comm, fmpl_mpi_error_class_of(s->error), func,
                            "the collective's schedule could not be built");
    fmpl_mpi_request *r = rc == MPI_SUCCESS ? fmpl_mpi_request_new() : NULL;
    if (rc == MPI_SUCCESS && !r)
        rc = fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a request");
    if (rc != MPI_SUCCESS) {
        fmpl_sched_free(s);
        return rc;
    }
    /* a body that had nothing to move still takes its instance number */
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    fmpl_sched_bind(s, c->team);
    /* the communicator's teams stay until the schedule is freed, whenever
     * the caller frees the communicator */
    if (fmpl_sched_on_free(s, comm_unhold_step, c) == FMPL_SUCCESS)
        fmpl_mpi_comm_hold(c);
    if (persistent) {
        fmpl_sched_prepare(s);
        r->kind = FMPL_MREQ_ASYNC;
        r->comm = comm;
        r->persistent = 1;
        r->async_complete = nbc_complete;
        r->async_state = s;
    } else {
        fmpl_sched_start(s);
        fmpl_mpi_async_request_start(r, comm, &s->async, nbc_complete, s);
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

/* The request's communicator still exists (it may have been freed since
 * *_init; the handle may even name a newer communicator). */
static int comm_alive(const fmpl_mpi_request *r)
{
    const fmpl_sched *s = r->async_state;
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(r->comm);
    return c && c->team == s->team;
}

int fmpl_mpi_nbc_start(fmpl_mpi_request *r)
{
    fmpl_sched *s = r->async_state;
    if (!comm_alive(r))
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Start",
                              "the communicator of persistent collective request 0x%x was "
                              "freed", (unsigned)r->handle);
    r->active = 1;
    r->error = MPI_SUCCESS;
    r->async = &s->async;
    fmpl_sched_start(s);
    return MPI_SUCCESS;
}

int fmpl_mpi_nbc_release(fmpl_mpi_request *r)
{
    if (r->async && !r->async->done)
        return 0;
    fmpl_sched_free(r->async_state);
    r->async_state = NULL;
    r->async = NULL;
    return 1;
}
