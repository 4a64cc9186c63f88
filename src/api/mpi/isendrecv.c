/* MPI_Isendrecv and MPI_Isendrecv_replace (and _c): two messages, one
 * request.  The receive is posted first, then the send (so a ring of them
 * cannot deadlock on rendezvous sends), each as an ordinary pool request
 * (MPI_Irecv / MPI_Isend); an FMPL_MREQ_ASYNC request (request_async.c)
 * completes once both have, with the receive's status and the first error.
 * MPI_Cancel cancels the receive; MPI_Request_free of a pending one lets
 * both complete unseen.
 *
 * _replace sends a copy: the buffer's old contents are packed (or copied)
 * into a private buffer before the receive may overwrite them, and sent
 * from there as bytes; the copy is freed at completion. */
#include "api/mpi/mpi_impl.h"
#include "progress/async.h"

#include <stdlib.h>
#include <string.h>

typedef struct sendrecv_op {
    fmpl_async async;
    fmpl_mpi_request *send, *recv;
    void *copy; /* _replace: the data being sent */
} sendrecv_op;

static int both_done(fmpl_async *a)
{
    sendrecv_op *op = (sendrecv_op *)a;
    return fmpl_mpi_request_test(op->recv) && fmpl_mpi_request_test(op->send);
}

/* MPI_Cancel: the receive may be cancelled (then the status says so); the
 * send completes normally, as everywhere in FMPL. */
static int sendrecv_cancel(fmpl_mpi_request *r)
{
    sendrecv_op *op = r->async_state;
    if (op && op->recv->kind == FMPL_MREQ_RECV && !op->recv->proc_null)
        fmpl_tm_cancel_recv(&op->recv->tm);
    return MPI_SUCCESS;
}

static int sendrecv_complete(fmpl_mpi_request *r)
{
    sendrecv_op *op = r->async_state;
    MPI_Request hs = op->send->handle, hr = op->recv->handle;
    int es = fmpl_mpi_request_finish(op->send, &hs, MPI_STATUS_IGNORE);
    int er = fmpl_mpi_request_finish(op->recv, &hr, &r->async_status);
    r->async_has_status = 1;
    free(op->copy);
    free(op);
    return er != MPI_SUCCESS ? er : es;
}

/* Both sides checked, then started; *request is the combined request. */
static int isendrecv(const char *func, const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                     MPI_Comm comm, MPI_Request *request, void *copy)
{
    fmpl_mpi_comm *c;
    fmpl_mpi_buf sb, rb;
    sendrecv_op *op = NULL;
    fmpl_mpi_request *r = NULL;
    MPI_Request hs = MPI_REQUEST_NULL, hr = MPI_REQUEST_NULL;
    int rc = fmpl_mpi_p2p_check(func, comm, sendbuf, sendcount, sendtype, dest, sendtag, 0, &c,
                                &sb);
    if (rc == MPI_SUCCESS)
        rc = fmpl_mpi_p2p_check(func, comm, recvbuf, recvcount, recvtype, source, recvtag, 1, &c,
                                &rb);
    if (rc == MPI_SUCCESS && !request)
        rc = fmpl_mpi_error(comm, MPI_ERR_REQUEST, func, "request is NULL");
    if (rc != MPI_SUCCESS) {
        free(copy);
        return rc;
    }
    if (!(op = calloc(1, sizeof *op)) || !(r = fmpl_mpi_request_new())) {
        free(op);
        free(copy);
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a request");
    }
    /* Checked already: these fail only without memory. */
    rc = PMPI_Irecv_c(recvbuf, recvcount, recvtype, source, recvtag, comm, &hr);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend_c(sendbuf, sendcount, sendtype, dest, sendtag, comm, &hs);
    if (rc != MPI_SUCCESS) {
        if (hr != MPI_REQUEST_NULL) /* cannot be taken back: let it complete unseen */
            PMPI_Request_free(&hr);
        fmpl_mpi_request_free(r);
        free(op);
        free(copy);
        return rc;
    }
    op->send = fmpl_mpi_request_get(hs);
    op->recv = fmpl_mpi_request_get(hr);
    op->copy = copy;
    fmpl_mpi_async_request_start(r, comm, &op->async, sendrecv_complete, op);
    r->async_cancel = sendrecv_cancel;
    r->async_freeable = 1;
    fmpl_async_start(&op->async, both_done);
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                   int recvtag, MPI_Comm comm, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    return isendrecv("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                     recvcount, recvtype, source, recvtag, comm, request, NULL);
}
FMPL_MPI_WEAK(Isendrecv)

int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    return isendrecv("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                     recvcount, recvtype, source, recvtag, comm, request, NULL);
}
FMPL_MPI_WEAK(Isendrecv_c)

static int isendrecv_replace(const char *func, void *buf, MPI_Count count, MPI_Datatype type,
                             int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    FMPL_MPI_REPLACE_BEGIN(func, comm, buf, count, type, dest, sendtag, source, recvtag, c, b);
    void *copy = malloc(b.bytes > 0 ? (size_t)b.bytes : 1);
    if (!copy)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a %ld-byte copy",
                              (long)b.bytes);
    if (dest != MPI_PROC_NULL)
        fmpl_mpi_buf_pack_to(&b, copy);
    return isendrecv(func, copy, b.bytes, MPI_BYTE, dest, sendtag, buf, count, type, source,
                     recvtag, comm, request, copy);
}

FMPL_MPI_REPLACE_FORMS(Isendrecv_replace, isendrecv_replace, MPI_Request *)
