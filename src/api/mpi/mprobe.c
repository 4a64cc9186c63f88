/* Matched probes: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv (and the
 * _c forms of the receives).
 *
 * A matched probe takes the first matching unexpected message out of the
 * communicator's queue (fmpl_tm_probe + fmpl_tm_dequeue), so no other
 * receive or probe can match it any more, and hands it out as an
 * MPI_Message: a request-pool object of kind FMPL_MREQ_MESSAGE holding the
 * dequeued entry.  As in MPICH, message handles have the request kind
 * (0xb): MPI_MESSAGE_NULL is 0x2c000000 (= MPI_REQUEST_NULL) and
 * MPI_MESSAGE_NO_PROC, the message "found" by probing MPI_PROC_NULL, is the
 * builtin 0x6c000000.  MPI_Mrecv receives the entry with fmpl_tm_imrecv
 * (the payload of an eager message is copied out; a rendezvous one is
 * fetched) and frees the object; MPI_Imrecv turns the same pool object into
 * the receive request.  A non-contiguous receive type goes through a
 * staging buffer, unpacked on completion, as in pt2pt.c. */
#include "api/mpi/mpi_impl.h"
#include "progress/progress.h"

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    if (!flag || !message)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, "MPI_Improbe", "flag or message is NULL");
    fmpl_mpi_comm *c;
    fmpl_mpi_buf b;
    int rc = fmpl_mpi_p2p_check("MPI_Improbe", comm, NULL, 0, MPI_BYTE, source, tag, 1, &c,
                                &b);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
        return MPI_SUCCESS;
    }
    fmpl_progress();
    fmpl_tm_unexp *u = fmpl_tm_probe(c->team, source, tag);
    if (!u) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    fmpl_mpi_request *m = fmpl_mpi_request_new();
    if (!m)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Improbe", "no memory for a message");
    fmpl_tm_dequeue(c->team, u);
    m->kind = FMPL_MREQ_MESSAGE;
    m->comm = comm;
    m->msg = u;
    m->tm.team = c->team;
    *flag = 1;
    *message = m->handle;
    if (status != MPI_STATUS_IGNORE)
        fmpl_mpi_status_set(status, u->source, u->tag, u->size, 0);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Improbe)

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    FMPL_CORE_GUARD();
    int flag = 0, rc;
    fmpl_waiter w = FMPL_WAITER_INIT;
    while ((rc = PMPI_Improbe(source, tag, comm, &flag, message, status)) == MPI_SUCCESS &&
           !flag)
        fmpl_wait_once(&w);
    return rc;
}
FMPL_MPI_WEAK(Mprobe)

/* ------------------------------------------------------------ receives */

/* The message behind *message with the receive's arguments checked:
 * MPI_SUCCESS with *m set, or with *m NULL for MPI_MESSAGE_NO_PROC; or an
 * error.  *b describes the receive buffer, staged when its datatype is not
 * contiguous. */
static int take_message(const char *func, void *buf, MPI_Aint count, MPI_Datatype type,
                        MPI_Message *message, fmpl_mpi_request **m, fmpl_mpi_buf *b)
{
    *m = NULL;
    if (!message)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "message is NULL");
    MPI_Comm comm = MPI_COMM_WORLD;
    if (*message != MPI_MESSAGE_NO_PROC) {
        *m = fmpl_mpi_message_get(*message);
        if (!*m)
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, func, "%s 0x%x",
                                  *message == MPI_MESSAGE_NULL ? "the message is MPI_MESSAGE_NULL"
                                                               : "invalid message",
                                  (unsigned)*message);
        comm = (*m)->comm;
    }
    fmpl_mpi_comm *c;
    int rc = fmpl_mpi_p2p_check(func, comm, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, 1, &c,
                                b);
    if (rc == MPI_SUCCESS && *m && fmpl_mpi_buf_stage(b, 0) != MPI_SUCCESS)
        rc = fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func,
                            "no memory for a %ld-byte staging buffer (non-contiguous datatype)",
                            (long)b->bytes);
    if (rc != MPI_SUCCESS)
        *m = NULL;
    return rc;
}

static int mrecv(const char *func, void *buf, MPI_Aint count, MPI_Datatype type,
                 MPI_Message *message, MPI_Status *status)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    fmpl_mpi_request *m;
    fmpl_mpi_buf b;
    int rc = take_message(func, buf, count, type, message, &m, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!m) {
        *message = MPI_MESSAGE_NULL;
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
        return MPI_SUCCESS;
    }
    MPI_Comm comm = m->comm;
    fmpl_tm_req r;
    fmpl_tm_imrecv(&r, m->tm.team, b.data, b.bytes, m->msg);
    m->msg = NULL;
    fmpl_mpi_request_free(m);
    *message = MPI_MESSAGE_NULL;
    FMPL_WAIT_UNTIL(r.complete);
    fmpl_mpi_buf_unstage(&b, r.st_bytes);
    int err = r.st_error == FMPL_SUCCESS ? MPI_SUCCESS : fmpl_mpi_error_class_of(r.st_error);
    if (status != MPI_STATUS_IGNORE)
        fmpl_mpi_status_set(status, r.st_source, r.st_tag, r.st_bytes, 0);
    if (err != MPI_SUCCESS)
        return fmpl_mpi_error(comm, err, func,
                              "message of more than %ld bytes from rank %d, tag %d",
                              (long)b.bytes, r.st_source, r.st_tag);
    return MPI_SUCCESS;
}

static int imrecv(const char *func, void *buf, MPI_Aint count, MPI_Datatype type,
                  MPI_Message *message, MPI_Request *request)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!request)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, func, "request is NULL");
    fmpl_mpi_request *m;
    fmpl_mpi_buf b;
    int rc = take_message(func, buf, count, type, message, &m, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!m) {
        fmpl_mpi_request *r = fmpl_mpi_request_new();
        if (!r)
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, func,
                                  "no memory for a request");
        r->kind = FMPL_MREQ_RECV;
        r->comm = MPI_COMM_WORLD;
        r->proc_null = 1;
        *message = MPI_MESSAGE_NULL;
        *request = r->handle;
        return MPI_SUCCESS;
    }
    /* The message object becomes the request (same pool, same handle). */
    fmpl_tm_unexp *u = m->msg;
    m->msg = NULL;
    m->kind = FMPL_MREQ_RECV;
    fmpl_mpi_request_hold(m, &b);
    fmpl_tm_imrecv(&m->tm, m->tm.team, b.data, b.bytes, u);
    *message = MPI_MESSAGE_NULL;
    *request = m->handle;
    return MPI_SUCCESS;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    FMPL_CORE_GUARD();
    return mrecv("MPI_Mrecv", buf, count, type, message, status);
}
FMPL_MPI_WEAK(Mrecv)

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message,
                 MPI_Status *status)
{
    FMPL_CORE_GUARD();
    return mrecv("MPI_Mrecv_c", buf, count, type, message, status);
}
FMPL_MPI_WEAK(Mrecv_c)

int PMPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return imrecv("MPI_Imrecv", buf, count, type, message, request);
}
FMPL_MPI_WEAK(Imrecv)

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message,
                  MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return imrecv("MPI_Imrecv_c", buf, count, type, message, request);
}
FMPL_MPI_WEAK(Imrecv_c)
