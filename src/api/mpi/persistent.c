/* Persistent point-to-point requests: MPI_Send_init, MPI_Bsend_init,
 * MPI_Ssend_init, MPI_Rsend_init, MPI_Recv_init (and their _c forms),
 * MPI_Start and MPI_Startall.
 *
 * A persistent request is a pool request (handles.c) with `persistent` set
 * and the call's arguments kept in it.  MPI_Start re-runs the operation on
 * the request's own fmpl_tm_req: it looks up the communicator and calls the
 * protocol, so starting allocates nothing with a contiguous datatype.  The
 * request keeps the data's description (fmpl_mpi_buf, with a reference on a
 * non-contiguous type, so MPI_Type_free after *_init is harmless); with a
 * non-contiguous type each start takes a staging buffer (packing a send's
 * data into it) and each completion unpacks a receive and gives it back.  The
 * Wait and Test families complete it like any request, except that it
 * becomes inactive instead of being freed (request.c); an inactive request
 * completes at once with an empty status.  MPI_Request_free frees it, after
 * completion if it is active.
 *
 * Modes: ready sends run as standard sends (MPI allows it); buffered ones
 * copy into the attached buffer at each start (bsend.c) and are complete
 * once copied. */
#include "api/mpi/mpi_impl.h"
#include "progress/progress.h"

static int init_request(const char *func, const void *buf, MPI_Aint count, MPI_Datatype type,
                        int peer, int tag, MPI_Comm comm, int kind, int mode,
                        MPI_Request *request)
{
    FMPL_MPI_CHECK_READY(comm);
    if (!request)
        return fmpl_mpi_error(comm, MPI_ERR_REQUEST, func, "request is NULL");
    fmpl_mpi_comm *c;
    fmpl_mpi_buf b;
    int rc = fmpl_mpi_p2p_check(func, comm, buf, count, type, peer, tag,
                                kind == FMPL_MREQ_RECV, &c, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_request *r = fmpl_mpi_request_new();
    if (!r)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a request");
    r->kind = kind;
    r->persistent = 1;
    r->active = 0;
    r->proc_null = peer == MPI_PROC_NULL;
    r->comm = comm;
    fmpl_mpi_request_hold(r, &b);
    r->peer = peer;
    r->tag = tag;
    r->mode = mode;
    *request = r->handle;
    return MPI_SUCCESS;
}

#define SEND_INIT(Name, mode, CountT)                                                      \
    int PMPI_##Name(const void *buf, CountT count, MPI_Datatype type, int dest, int tag,    \
                    MPI_Comm comm, MPI_Request *request)                                   \
    { FMPL_CORE_GUARD();                                                                                      \
        return init_request("MPI_" #Name, buf, count, type, dest, tag, comm,               \
                            FMPL_MREQ_SEND, mode, request);                                \
    }                                                                                      \
    FMPL_MPI_WEAK(Name)

SEND_INIT(Send_init, FMPL_TM_MODE_STANDARD, int)
SEND_INIT(Send_init_c, FMPL_TM_MODE_STANDARD, MPI_Count)
SEND_INIT(Ssend_init, FMPL_TM_MODE_SYNC, int)
SEND_INIT(Ssend_init_c, FMPL_TM_MODE_SYNC, MPI_Count)
/* A ready send may be sent as a standard one (MPI 3.6). */
SEND_INIT(Rsend_init, FMPL_TM_MODE_STANDARD, int)
SEND_INIT(Rsend_init_c, FMPL_TM_MODE_STANDARD, MPI_Count)
SEND_INIT(Bsend_init, FMPL_MPI_MODE_BUFFERED, int)
SEND_INIT(Bsend_init_c, FMPL_MPI_MODE_BUFFERED, MPI_Count)

int PMPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return init_request("MPI_Recv_init", buf, count, type, source, tag, comm, FMPL_MREQ_RECV, 0,
                        request);
}
FMPL_MPI_WEAK(Recv_init)

int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return init_request("MPI_Recv_init_c", buf, count, type, source, tag, comm,
                        FMPL_MREQ_RECV, 0, request);
}
FMPL_MPI_WEAK(Recv_init_c)

/* ------------------------------------------------------------ start */

/* The persistent request behind a handle, ready to start, or an error. */
static int startable(const char *func, MPI_Request h, fmpl_mpi_request **out)
{
    fmpl_mpi_request *r = fmpl_mpi_request_get(h);
    if (!r)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, func, "invalid request 0x%x",
                              (unsigned)h);
    if (!r->persistent)
        return fmpl_mpi_error(r->comm, MPI_ERR_REQUEST, func,
                              "request 0x%x is not persistent", (unsigned)h);
    if (r->active)
        return fmpl_mpi_error(r->comm, MPI_ERR_REQUEST, func,
                              "request 0x%x is already active", (unsigned)h);
    *out = r;
    return MPI_SUCCESS;
}

static int start(const char *func, fmpl_mpi_request *r)
{
    /* Persistent collectives: schedules (coll_nbc.c), or the state
     * machines with a restart step (neighbourhood collectives,
     * request_async.c). */
    if (r->kind == FMPL_MREQ_ASYNC)
        return r->async_restart ? fmpl_mpi_async_request_restart(r, func) : fmpl_mpi_nbc_start(r);
    if (r->proc_null) {
        r->active = 1;
        return MPI_SUCCESS;
    }
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(r->comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func,
                              "the communicator of request 0x%x was freed", (unsigned)r->handle);
    if (r->mode == FMPL_MPI_MODE_BUFFERED) {
        int rc = fmpl_mpi_bsend_start(func, r->comm, c->team, &r->buf, r->peer, r->tag);
        if (rc != MPI_SUCCESS)
            return rc;
        /* Complete once copied: only the status fields matter. */
        r->tm.kind = FMPL_TM_SEND;
        r->tm.cancelled = 0;
        r->tm.st_error = FMPL_SUCCESS;
        r->tm.st_bytes = r->buf.bytes;
        r->tm.complete = 1;
        r->active = 1;
        return MPI_SUCCESS;
    }
    int is_recv = r->kind == FMPL_MREQ_RECV;
    if (fmpl_mpi_buf_stage(&r->buf, !is_recv) != MPI_SUCCESS)
        return fmpl_mpi_error(r->comm, MPI_ERR_NO_MEM, func,
                              "no memory for a %ld-byte staging buffer (non-contiguous "
                              "datatype)", (long)r->buf.bytes);
    if (is_recv)
        fmpl_tm_irecv(&r->tm, c->team, r->buf.data, r->buf.bytes, r->peer, r->tag);
    else
        fmpl_tm_isend(&r->tm, c->team, r->buf.data, r->buf.bytes, r->peer, r->tag, r->mode);
    r->active = 1;
    return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!request)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Start", "request is NULL");
    fmpl_mpi_request *r = NULL;
    int rc = startable("MPI_Start", *request, &r);
    return rc != MPI_SUCCESS ? rc : start("MPI_Start", r);
}
FMPL_MPI_WEAK(Start)

/* Every handle is checked before any request starts, so an invalid handle
 * starts nothing.  A failure while starting (a handle listed twice, a freed
 * communicator, a full attached buffer) leaves the requests before it
 * started. */
int PMPI_Startall(int count, MPI_Request requests[])
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (count < 0)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Startall",
                              "count %d is negative", count);
    if (count > 0 && !requests)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Startall",
                              "the request array is NULL");
    for (int i = 0; i < count; i++) {
        fmpl_mpi_request *r = NULL;
        int rc = startable("MPI_Startall", requests[i], &r);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (int i = 0; i < count; i++) {
        /* Checked again: a handle listed twice is active the second time. */
        fmpl_mpi_request *r = NULL;
        int rc = startable("MPI_Startall", requests[i], &r);
        if (rc == MPI_SUCCESS)
            rc = start("MPI_Startall", r);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Startall)
