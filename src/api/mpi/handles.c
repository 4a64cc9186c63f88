/* Handle tables: communicators and the request pool.
 *
 * Requests come from a pool that grows in chunks of 1024 and never shrinks,
 * so starting a message allocates nothing once the pool is warm, and a
 * request's address never changes (the protocol keeps pointers to it).
 * A request with a non-contiguous datatype holds a reference on the type
 * and, while in flight, a staging buffer (dt_staging.c): freeing the
 * request gives both back, unpacking a completed receive first (the
 * MPI_Request_free-while-active case); MPI_Finalize releases what requests
 * never completed still hold. */
#include "api/mpi/mpi_impl.h"
#include "api/mpi/intercomm.h"
#include "api/mpi/mpi_objects.h"
#include "base/error.h"
#include "progress/async.h"

#include <stdlib.h>
#include <string.h>

#define REQ_CHUNK 1024
#define REQ_MAX_CHUNKS 4096
#define COMM_MAX 65536

static fmpl_mpi_request *req_chunks[REQ_MAX_CHUNKS];
static int req_nchunks;
static fmpl_mpi_request *req_free;

static fmpl_mpi_comm *comms[COMM_MAX]; /* dynamic communicators */
static fmpl_mpi_comm comm_world, comm_self;

static int grow_requests(void)
{
    if (req_nchunks == REQ_MAX_CHUNKS)
        return 0;
    fmpl_mpi_request *chunk = calloc(REQ_CHUNK, sizeof *chunk);
    if (!chunk)
        return 0;
    int base = req_nchunks * REQ_CHUNK;
    req_chunks[req_nchunks++] = chunk;
    for (int i = REQ_CHUNK - 1; i >= 0; i--) {
        chunk[i].handle = fmpl_handle_make(FMPL_HK_REQUEST, base + i);
        chunk[i].next_free = req_free;
        req_free = &chunk[i];
    }
    return 1;
}

/* Requests freed by MPI_Request_free while active, linked through
 * next_free: they return to the pool once complete. */
fmpl_mpi_request *fmpl_mpi_req_freed_active;
#define req_freed_active fmpl_mpi_req_freed_active

void fmpl_mpi_request_free_when_done(fmpl_mpi_request *r)
{
    r->freed = 1;
    r->next_free = req_freed_active;
    req_freed_active = r;
}

void fmpl_mpi_requests_reap_slow(void)
{
    /* The list is taken whole: a completion step may complete (and so reap)
     * requests of its own (MPI_Isendrecv's two), which must not walk it. */
    fmpl_mpi_request *list = req_freed_active;
    req_freed_active = NULL;
    while (list) {
        fmpl_mpi_request *r = list;
        list = r->next_free;
        int done = r->kind == FMPL_MREQ_ASYNC ? !r->async || r->async->done : r->tm.complete;
        if (!done) {
            r->next_free = req_freed_active;
            req_freed_active = r;
            continue;
        }
        if (r->kind == FMPL_MREQ_ASYNC)
            fmpl_mpi_async_request_test(r); /* its completion step (a generalised
                                               request's query_fn) */
        fmpl_mpi_request_free(r);
    }
}

fmpl_mpi_request *fmpl_mpi_request_new(void)
{
    fmpl_mpi_requests_reap();
    if (!req_free && !grow_requests())
        return NULL;
    fmpl_mpi_request *r = req_free;
    req_free = r->next_free;
    int handle = r->handle;
    memset(r, 0, sizeof *r);
    r->handle = handle;
    return r;
}

void fmpl_mpi_request_unstage_slow(fmpl_mpi_request *r)
{
    if (!r->buf.data)
        return;
    int delivered = r->kind == FMPL_MREQ_RECV && !r->proc_null && r->tm.complete &&
                    !r->tm.cancelled;
    fmpl_mpi_buf_unstage(&r->buf, delivered ? r->tm.st_bytes : 0);
}

int fmpl_mpi_request_free(fmpl_mpi_request *r)
{
    int err = MPI_SUCCESS;
    if (r->async_release) /* a persistent operation's state, a generalised request's free_fn */
        err = r->async_release(r);
    if (r->buf.type) { /* non-contiguous data: staging and the type's reference */
        fmpl_mpi_request_unstage(r);
        fmpl_dt_unref(r->buf.type);
        r->buf.type = NULL;
    }
    r->kind = FMPL_MREQ_FREE;
    r->next_free = req_free;
    req_free = r;
    return err;
}

void fmpl_mpi_requests_finalize(void)
{
    for (int c = 0; c < req_nchunks; c++)
        for (int i = 0; i < REQ_CHUNK; i++) {
            fmpl_mpi_request *r = &req_chunks[c][i];
            if (r->kind == FMPL_MREQ_FREE)
                continue;
            if (r->async_release && !r->async) { /* an inactive persistent operation */
                r->async_release(r);
                r->async_release = NULL;
            }
            if (r->buf.type && r->buf.data)
                fmpl_mpi_buf_unstage(&r->buf, 0); /* never completed: nothing to unpack */
            fmpl_dt_unref(r->buf.type);
            r->buf.type = NULL;
        }
}

/* A live pool object: a request or a message (same handle kind). */
static fmpl_mpi_request *pool_get(int h)
{
    if (!fmpl_handle_is_dynamic(h) || fmpl_handle_kind(h) != FMPL_HK_REQUEST)
        return NULL;
    int i = fmpl_handle_index(h);
    if (i / REQ_CHUNK >= req_nchunks)
        return NULL;
    fmpl_mpi_request *r = &req_chunks[i / REQ_CHUNK][i % REQ_CHUNK];
    return r->kind == FMPL_MREQ_FREE ? NULL : r;
}

fmpl_mpi_request *fmpl_mpi_request_get(MPI_Request h)
{
    fmpl_mpi_request *r = pool_get(h);
    return r && r->kind != FMPL_MREQ_MESSAGE ? r : NULL;
}

fmpl_mpi_request *fmpl_mpi_message_get(MPI_Message h)
{
    fmpl_mpi_request *r = pool_get(h);
    return r && r->kind == FMPL_MREQ_MESSAGE ? r : NULL;
}

/* ------------------------------------------------------------ communicators */

fmpl_mpi_comm *fmpl_mpi_comm_get(MPI_Comm c)
{
    if (c == MPI_COMM_WORLD)
        return comm_world.team ? &comm_world : NULL;
    if (c == MPI_COMM_SELF)
        return comm_self.team ? &comm_self : NULL;
    if (!fmpl_handle_is_dynamic(c) || fmpl_handle_kind(c) != FMPL_HK_COMM)
        return NULL;
    int i = fmpl_handle_index(c);
    return i < COMM_MAX ? comms[i] : NULL;
}

int fmpl_mpi_comm_register(fmpl_team *t, MPI_Comm *handle)
{
    for (int i = 0; i < COMM_MAX; i++) {
        if (comms[i])
            continue;
        fmpl_mpi_comm *c = calloc(1, sizeof *c);
        if (!c)
            return MPI_ERR_NO_MEM;
        c->handle = fmpl_handle_make(FMPL_HK_COMM, i);
        c->team = t;
        c->errhandler = MPI_ERRORS_ARE_FATAL;
        c->refs = 1;
        comms[i] = c;
        *handle = c->handle;
        return MPI_SUCCESS;
    }
    return MPI_ERR_INTERN;
}

void fmpl_mpi_comm_unregister(fmpl_mpi_comm *c)
{
    if (c == &comm_world || c == &comm_self)
        return;
    int i = fmpl_handle_index(c->handle);
    if (comms[i] == c) /* a freed handle's slot may be a newer communicator's */
        comms[i] = NULL;
}

void fmpl_mpi_comm_release(fmpl_mpi_comm *c)
{
    if (c == &comm_world || c == &comm_self)
        return;
    fmpl_mpi_comm_unregister(c);
    fmpl_mpi_part_comm_free(c);
    free(c);
}

int fmpl_mpi_comms_init(void)
{
    comm_world = (fmpl_mpi_comm){.handle = MPI_COMM_WORLD, .team = fmpl_teams[0],
                                 .errhandler = MPI_ERRORS_ARE_FATAL, .refs = 1};
    strcpy(comm_world.name, "MPI_COMM_WORLD");
    comm_self = (fmpl_mpi_comm){.handle = MPI_COMM_SELF, .errhandler = MPI_ERRORS_ARE_FATAL,
                                .refs = 1};
    strcpy(comm_self.name, "MPI_COMM_SELF");
    return MPI_SUCCESS;
}

void fmpl_mpi_comm_set_self(fmpl_team *t) { comm_self.team = t; }

void fmpl_mpi_comms_finalize(void)
{
    for (int i = 0; i < COMM_MAX; i++) {
        if (comms[i]) {
            fmpl_mpi_comm_drop_objects(comms[i]); /* objects.c */
            fmpl_mpi_inter_finalize(comms[i]);    /* intercomm.c */
            fmpl_mpi_part_comm_free(comms[i]);    /* partitioned.c */
        }
        free(comms[i]);
        comms[i] = NULL;
    }
    fmpl_mpi_comm_drop_objects(&comm_world);
    fmpl_mpi_comm_drop_objects(&comm_self);
    fmpl_mpi_part_comm_free(&comm_world);
    fmpl_mpi_part_comm_free(&comm_self);
    comm_world.team = comm_self.team = NULL;
}
