/* MPI point-to-point: checks, then the tag-matched protocol
 * (protocols/tag_match.c).  Blocking calls are a start and a wait on a
 * request that lives on the stack: the eager path allocates nothing.
 *
 * Datatypes (fmpl_mpi_buf, datatype_layout.c): a contiguous type, derived
 * ones with a non-zero true lower bound included, moves straight from or
 * into the user's memory at buf + true_lb.  A non-contiguous one moves as
 * its packed stream: a send packs into a staging buffer (dt_staging.c) and
 * sends those bytes; a receive receives into one and unpacks on completion
 * (the blocking calls at once, nonblocking ones in MPI_Wait/Test, request.c).
 * Both sides only need matching type signatures.  A receive never writes
 * more than its type describes: a longer message is truncated in the
 * staging buffer (MPI_ERR_TRUNCATE) and only what fits is unpacked.
 *
 * Every call exists with int counts and, as MPI_<name>_c, with MPI_Count
 * counts; both forms are one body (the macros below). */
#include "api/mpi/mpi_impl.h"
#include "progress/progress.h"

#include <string.h>

/* Checks shared by every send and receive: communicator, count, datatype,
 * peer (MPI_PROC_NULL allowed; MPI_ANY_SOURCE for receives), tag, buffer. */
static inline __attribute__((always_inline)) int check(const char *func, MPI_Comm comm, const void *buf, MPI_Aint count,
                 MPI_Datatype type, int peer, int tag, int is_recv, fmpl_mpi_comm **c,
                 fmpl_mpi_buf *b)
{
    *c = fmpl_mpi_comm_get(comm);
    if (!*c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    if (count < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "count %ld is negative", (long)count);
    int n = (*c)->team->size;
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= n) && !(is_recv && peer == MPI_ANY_SOURCE))
        return fmpl_mpi_error(comm, MPI_ERR_RANK, func, "rank %d is outside 0 .. %d", peer, n - 1);
    if (tag < 0 && !(is_recv && tag == MPI_ANY_TAG))
        return fmpl_mpi_error(comm, MPI_ERR_TAG, func, "tag %d is negative", tag);
    if (tag > 0x7fffffff - 1)
        return fmpl_mpi_error(comm, MPI_ERR_TAG, func, "tag %d is above MPI_TAG_UB", tag);
    return fmpl_mpi_buf_describe(comm, func, buf, count, type, 1, b);
}

static inline int wait_tm(fmpl_tm_req *r)
{
    return r->complete ? r->st_error : fmpl_progress_wait_tm(r);
}

static int no_staging(MPI_Comm comm, const char *func, const fmpl_mpi_buf *b)
{
    return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func,
                          "no memory for a %ld-byte staging buffer (non-contiguous datatype)",
                          (long)b->bytes);
}

static int send_blocking(const char *func, const void *buf, MPI_Aint count, MPI_Datatype type,
                         int dest, int tag, MPI_Comm comm, int mode)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    fmpl_mpi_buf b;
    int rc = check(func, comm, buf, count, type, dest, tag, 0, &c, &b);
    if (rc != MPI_SUCCESS || dest == MPI_PROC_NULL)
        return rc;
    /* Small contiguous standard sends complete in the call: no request. */
    if (mode == FMPL_TM_MODE_STANDARD && !b.type &&
        fmpl_tm_send_eager(c->team, b.data, b.bytes, dest, tag))
        return MPI_SUCCESS;
    if (fmpl_mpi_buf_stage(&b, 1) != MPI_SUCCESS)
        return no_staging(comm, func, &b);
    fmpl_tm_req r;
    fmpl_tm_isend(&r, c->team, b.data, b.bytes, dest, tag, mode);
    rc = wait_tm(&r);
    fmpl_mpi_buf_unstage(&b, 0);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                                               "send to rank %d failed", dest);
}

/* Both forms of a blocking send. */
#define BLOCKING_SEND(Name, mode, CountT)                                                  \
    int PMPI_##Name(const void *buf, CountT count, MPI_Datatype type, int dest, int tag,    \
                    MPI_Comm comm)                                                         \
    { FMPL_CORE_GUARD();                                                                                      \
        return send_blocking("MPI_" #Name, buf, count, type, dest, tag, comm, mode);       \
    }                                                                                      \
    FMPL_MPI_WEAK(Name)

BLOCKING_SEND(Send, FMPL_TM_MODE_STANDARD, int)
BLOCKING_SEND(Send_c, FMPL_TM_MODE_STANDARD, MPI_Count)
BLOCKING_SEND(Ssend, FMPL_TM_MODE_SYNC, int)
BLOCKING_SEND(Ssend_c, FMPL_TM_MODE_SYNC, MPI_Count)
/* A ready send may be sent as a standard one (MPI 3.6). */
BLOCKING_SEND(Rsend, FMPL_TM_MODE_STANDARD, int)
BLOCKING_SEND(Rsend_c, FMPL_TM_MODE_STANDARD, MPI_Count)

static int recv_blocking(const char *func, void *buf, MPI_Aint count, MPI_Datatype type,
                         int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    fmpl_mpi_buf b;
    int rc = check(func, comm, buf, count, type, source, tag, 1, &c, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
        return MPI_SUCCESS;
    }
    if (fmpl_mpi_buf_stage(&b, 0) != MPI_SUCCESS)
        return no_staging(comm, func, &b);
    fmpl_tm_req r;
    rc = fmpl_progress_recv_direct(&r, c->team, b.data, b.bytes, source, tag);
    fmpl_mpi_buf_unstage(&b, r.st_bytes);
    fmpl_mpi_requests_reap();
    int err = rc == FMPL_SUCCESS ? MPI_SUCCESS : fmpl_mpi_error_class_of(rc);
    if (status != MPI_STATUS_IGNORE)
        fmpl_mpi_status_set(status, r.st_source, r.st_tag, r.st_bytes, 0);
    if (err != MPI_SUCCESS)
        return fmpl_mpi_error(comm, err, func,
                              "message of more than %ld bytes from rank %d, tag %d",
                              (long)b.bytes, r.st_source, r.st_tag);
    return MPI_SUCCESS;
}

#define BLOCKING_RECV(Name, CountT)                                                        \
    int PMPI_##Name(void *buf, CountT count, MPI_Datatype type, int source, int tag,        \
                    MPI_Comm comm, MPI_Status *status)                                     \
    { FMPL_CORE_GUARD();                                                                                      \
        return recv_blocking("MPI_" #Name, buf, count, type, source, tag, comm, status);   \
    }                                                                                      \
    FMPL_MPI_WEAK(Name)

BLOCKING_RECV(Recv, int)
BLOCKING_RECV(Recv_c, MPI_Count)

/* ------------------------------------------------------------ nonblocking */

/* A request for a nonblocking send or receive: holds the data (staged) and
 * starts the protocol.  `mode` is the send mode; receives pass -1. */
static int start_nonblocking(const char *func, const void *buf, MPI_Aint count,
                             MPI_Datatype type, int peer, int tag, MPI_Comm comm, int mode,
                             MPI_Request *request)
{
    FMPL_MPI_CHECK_READY(comm);
    if (!request)
        return fmpl_mpi_error(comm, MPI_ERR_REQUEST, func, "request is NULL");
    int is_recv = mode < 0;
    fmpl_mpi_comm *c;
    fmpl_mpi_buf b;
    int rc = check(func, comm, buf, count, type, peer, tag, is_recv, &c, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_request *r = fmpl_mpi_request_new();
    if (!r)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a request");
    r->kind = is_recv ? FMPL_MREQ_RECV : FMPL_MREQ_SEND;
    r->comm = comm;
    if (peer == MPI_PROC_NULL) {
        r->proc_null = 1;
    } else {
        if (fmpl_mpi_buf_stage(&b, !is_recv) != MPI_SUCCESS) {
            fmpl_mpi_request_free(r);
            return no_staging(comm, func, &b);
        }
        if (b.type) /* contiguous data needs nothing kept */
            fmpl_mpi_request_hold(r, &b);
        if (is_recv)
            fmpl_tm_irecv(&r->tm, c->team, b.data, b.bytes, peer, tag);
        else
            fmpl_tm_isend(&r->tm, c->team, b.data, b.bytes, peer, tag, mode);
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

#define NONBLOCKING_SEND(Name, mode, CountT)                                               \
    int PMPI_##Name(const void *buf, CountT count, MPI_Datatype type, int dest, int tag,    \
                    MPI_Comm comm, MPI_Request *request)                                   \
    { FMPL_CORE_GUARD();                                                                                      \
        return start_nonblocking("MPI_" #Name, buf, count, type, dest, tag, comm, mode,    \
                                 request);                                                 \
    }                                                                                      \
    FMPL_MPI_WEAK(Name)

NONBLOCKING_SEND(Isend, FMPL_TM_MODE_STANDARD, int)
NONBLOCKING_SEND(Isend_c, FMPL_TM_MODE_STANDARD, MPI_Count)
NONBLOCKING_SEND(Issend, FMPL_TM_MODE_SYNC, int)
NONBLOCKING_SEND(Issend_c, FMPL_TM_MODE_SYNC, MPI_Count)
NONBLOCKING_SEND(Irsend, FMPL_TM_MODE_STANDARD, int)
NONBLOCKING_SEND(Irsend_c, FMPL_TM_MODE_STANDARD, MPI_Count)

#define NONBLOCKING_RECV(Name, CountT)                                                     \
    int PMPI_##Name(void *buf, CountT count, MPI_Datatype type, int source, int tag,        \
                    MPI_Comm comm, MPI_Request *request)                                   \
    { FMPL_CORE_GUARD();                                                                                      \
        return start_nonblocking("MPI_" #Name, buf, count, type, source, tag, comm, -1,    \
                                 request);                                                 \
    }                                                                                      \
    FMPL_MPI_WEAK(Name)

NONBLOCKING_RECV(Irecv, int)
NONBLOCKING_RECV(Irecv_c, MPI_Count)

static int sendrecv(const char *func, const void *sendbuf, MPI_Aint sendcount,
                    MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                    MPI_Aint recvcount, MPI_Datatype recvtype, int source, int recvtag,
                    MPI_Comm comm, MPI_Status *status)
{
    MPI_Request rq;
    int rc = start_nonblocking(func, recvbuf, recvcount, recvtype, source, recvtag, comm, -1,
                               &rq);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = send_blocking(func, sendbuf, sendcount, sendtype, dest, sendtag, comm,
                       FMPL_TM_MODE_STANDARD);
    int rc2 = PMPI_Wait(&rq, status);
    return rc != MPI_SUCCESS ? rc : rc2;
}

#define SENDRECV(Name, CountT)                                                             \
    int PMPI_##Name(const void *sendbuf, CountT sendcount, MPI_Datatype sendtype, int dest, \
                    int sendtag, void *recvbuf, CountT recvcount, MPI_Datatype recvtype,   \
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)            \
    { FMPL_CORE_GUARD();                                                                                      \
        return sendrecv("MPI_" #Name, sendbuf, sendcount, sendtype, dest, sendtag,         \
                        recvbuf, recvcount, recvtype, source, recvtag, comm, status);      \
    }                                                                                      \
    FMPL_MPI_WEAK(Name)

SENDRECV(Sendrecv, int)
SENDRECV(Sendrecv_c, MPI_Count)

/* ------------------------------------------------------------ probe */

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    fmpl_mpi_buf b;
    int rc = check("MPI_Iprobe", comm, NULL, 0, MPI_BYTE, source, tag, 1, &c, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
        return MPI_SUCCESS;
    }
    fmpl_progress();
    fmpl_tm_unexp *u = fmpl_tm_probe(c->team, source, tag);
    *flag = u != NULL;
    if (u && status != MPI_STATUS_IGNORE)
        fmpl_mpi_status_set(status, u->source, u->tag, u->size, 0);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Iprobe)

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    FMPL_CORE_GUARD();
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
                       fmpl_mpi_buf *b)
{
    return check(func, comm, buf, count, type, peer, tag, is_recv, c, b);
}
