/* MPI point-to-point: checks, then the tag-matched protocol
 * (protocols/tag_match.c).  Blocking calls are a start and a wait on a
 * request that lives on the stack: the eager path allocates nothing. */
#include "api/mpi/mpi_impl.h"
#include "progress/progress.h"

#include <string.h>

/* Checks shared by every send and receive: communicator, count, datatype,
 * peer (MPI_PROC_NULL allowed; MPI_ANY_SOURCE for receives), tag. */
static int check(const char *func, MPI_Comm comm, const void *buf, MPI_Aint count,
                 MPI_Datatype type, int peer, int tag, int is_recv, fmpl_mpi_comm **c,
                 MPI_Aint *bytes)
{
    *c = fmpl_mpi_comm_get(comm);
    if (!*c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    if (count < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "count %ld is negative", (long)count);
    MPI_Aint size;
    int contiguous;
    if (fmpl_mpi_type_layout(type, &size, &contiguous) != MPI_SUCCESS)
        return fmpl_mpi_type_check(comm, type, func);
    int rc = fmpl_mpi_plain_type(comm, type, contiguous, func);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = (*c)->team->size;
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= n) && !(is_recv && peer == MPI_ANY_SOURCE))
        return fmpl_mpi_error(comm, MPI_ERR_RANK, func, "rank %d is outside 0 .. %d", peer, n - 1);
    if (tag < 0 && !(is_recv && tag == MPI_ANY_TAG))
        return fmpl_mpi_error(comm, MPI_ERR_TAG, func, "tag %d is negative", tag);
    if (tag > 0x7fffffff - 1)
        return fmpl_mpi_error(comm, MPI_ERR_TAG, func, "tag %d is above MPI_TAG_UB", tag);
    if (!buf && count > 0 && size > 0)
        return fmpl_mpi_error(comm, MPI_ERR_BUFFER, func, "buffer is NULL with count %ld",
                              (long)count);
    *bytes = count * size;
    return MPI_SUCCESS;
}

static int wait_tm(fmpl_tm_req *r)
{
    FMPL_WAIT_UNTIL(r->complete);
    return r->st_error;
}

static int send_blocking(const char *func, const void *buf, int count, MPI_Datatype type,
                         int dest, int tag, MPI_Comm comm, int mode)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    MPI_Aint bytes = 0;
    int rc = check(func, comm, buf, count, type, dest, tag, 0, &c, &bytes);
    if (rc != MPI_SUCCESS || dest == MPI_PROC_NULL)
        return rc;
    fmpl_tm_req r;
    fmpl_tm_isend(&r, c->team, buf, bytes, dest, tag, mode);
    rc = wait_tm(&r);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                                               "send to rank %d failed", dest);
}

int PMPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_blocking("MPI_Send", buf, count, type, dest, tag, comm, FMPL_TM_MODE_STANDARD);
}
FMPL_MPI_WEAK(Send)

int PMPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_blocking("MPI_Ssend", buf, count, type, dest, tag, comm, FMPL_TM_MODE_SYNC);
}
FMPL_MPI_WEAK(Ssend)

/* A ready send may be sent as a standard one (MPI 3.6). */
int PMPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_blocking("MPI_Rsend", buf, count, type, dest, tag, comm, FMPL_TM_MODE_STANDARD);
}
FMPL_MPI_WEAK(Rsend)

int PMPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    MPI_Aint bytes = 0;
    int rc = check("MPI_Recv", comm, buf, count, type, source, tag, 1, &c, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        return MPI_SUCCESS;
    }
    fmpl_tm_req r;
    fmpl_tm_irecv(&r, c->team, buf, bytes, source, tag);
    rc = wait_tm(&r);
    int err = rc == FMPL_SUCCESS ? MPI_SUCCESS : fmpl_mpi_error_class_of(rc);
    if (status != MPI_STATUS_IGNORE)
        fmpl_mpi_status_set(status, r.st_source, r.st_tag, err, r.st_bytes, 0);
    if (err != MPI_SUCCESS)
        return fmpl_mpi_error(comm, err, "MPI_Recv",
                              "message of more than %ld bytes from rank %d, tag %d",
                              (long)bytes, r.st_source, r.st_tag);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Recv)

/* ------------------------------------------------------------ nonblocking */

static int start_send(const char *func, const void *buf, int count, MPI_Datatype type,
                      int dest, int tag, MPI_Comm comm, int mode, MPI_Request *request)
{
    FMPL_MPI_CHECK_READY(comm);
    if (!request)
        return fmpl_mpi_error(comm, MPI_ERR_REQUEST, func, "request is NULL");
    fmpl_mpi_comm *c;
    MPI_Aint bytes = 0;
    int rc = check(func, comm, buf, count, type, dest, tag, 0, &c, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_request *r = fmpl_mpi_request_new();
    if (!r)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a request");
    r->kind = FMPL_MREQ_SEND;
    r->comm = comm;
    if (dest == MPI_PROC_NULL)
        r->proc_null = 1;
    else
        fmpl_tm_isend(&r->tm, c->team, buf, bytes, dest, tag, mode);
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return start_send("MPI_Isend", buf, count, type, dest, tag, comm, FMPL_TM_MODE_STANDARD,
                      request);
}
FMPL_MPI_WEAK(Isend)

int PMPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return start_send("MPI_Issend", buf, count, type, dest, tag, comm, FMPL_TM_MODE_SYNC, request);
}
FMPL_MPI_WEAK(Issend)

int PMPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return start_send("MPI_Irsend", buf, count, type, dest, tag, comm, FMPL_TM_MODE_STANDARD,
                      request);
}
FMPL_MPI_WEAK(Irsend)

int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    FMPL_MPI_CHECK_READY(comm);
    if (!request)
        return fmpl_mpi_error(comm, MPI_ERR_REQUEST, "MPI_Irecv", "request is NULL");
    fmpl_mpi_comm *c;
    MPI_Aint bytes = 0;
    int rc = check("MPI_Irecv", comm, buf, count, type, source, tag, 1, &c, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_request *r = fmpl_mpi_request_new();
    if (!r)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Irecv", "no memory for a request");
    r->kind = FMPL_MREQ_RECV;
    r->comm = comm;
    if (source == MPI_PROC_NULL)
        r->proc_null = 1;
    else
        fmpl_tm_irecv(&r->tm, c->team, buf, bytes, source, tag);
    *request = r->handle;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Irecv)

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Request rq;
    int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &rq);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Send(sendbuf, sendcount, sendtype, dest, sendtag, comm);
    int rc2 = PMPI_Wait(&rq, status);
    return rc != MPI_SUCCESS ? rc : rc2;
}
FMPL_MPI_WEAK(Sendrecv)

/* ------------------------------------------------------------ probe */

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    MPI_Aint bytes = 0;
    int rc = check("MPI_Iprobe", comm, NULL, 0, MPI_BYTE, source, tag, 1, &c, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        return MPI_SUCCESS;
    }
    fmpl_progress();
    fmpl_tm_unexp *u = fmpl_tm_probe(c->team, source, tag);
    *flag = u != NULL;
    if (u && status != MPI_STATUS_IGNORE)
        fmpl_mpi_status_set(status, u->source, u->tag, MPI_SUCCESS, u->size, 0);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Iprobe)

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag = 0, rc;
    fmpl_waiter w = FMPL_WAITER_INIT;
    while ((rc = PMPI_Iprobe(source, tag, comm, &flag, status)) == MPI_SUCCESS && !flag)
        fmpl_wait_once(&w);
    return rc;
}
FMPL_MPI_WEAK(Probe)

/* ------------------------------------------------------------ shared checks */

/* For persistent.c, bsend.c, mprobe.c and replace.c. */
int fmpl_mpi_p2p_check(const char *func, MPI_Comm comm, const void *buf, MPI_Aint count,
                       MPI_Datatype type, int peer, int tag, int is_recv, fmpl_mpi_comm **c,
                       MPI_Aint *bytes)
{
    return check(func, comm, buf, count, type, peer, tag, is_recv, c, bytes);
}
