/* Buffered mode: MPI_Buffer_attach/detach/flush/iflush, MPI_Bsend,
 * MPI_Ibsend (and the _c forms); MPI_Bsend_init starts through
 * fmpl_mpi_bsend_start too (persistent.c).
 *
 * The buffers themselves are pools (bsend_pool.c).  Which one a buffered
 * send uses (MPI-4.1 3.6): the communicator's if one is attached
 * (MPI_Comm_attach_buffer, bsend_scoped.c), else its session's if the
 * communicator derives from a session with one attached, else the
 * process's (MPI_Buffer_attach, here).  None: MPI_ERR_BUFFER.  Detach waits
 * until every message in the buffer has been delivered; flush does too but
 * leaves the buffer attached. */
#include "api/mpi/bsend_pool.h"

#include <limits.h>

static fmpl_bsend_pool *process_pool; /* MPI_Buffer_attach's */

int fmpl_mpi_bsend_start(const char *func, MPI_Comm comm, fmpl_team *team,
                         const fmpl_mpi_buf *b, int dest, int tag)
{
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    fmpl_bsend_pool *p = c ? c->bsend : NULL;
    if (!p && c && c->session)
        p = fmpl_mpi_session_bsend_slot(c->session) ? *fmpl_mpi_session_bsend_slot(c->session)
                                                    : NULL;
    if (!p)
        p = process_pool;
    if (!p)
        return fmpl_mpi_error(comm, MPI_ERR_BUFFER, func,
                              "no buffer is attached for buffered sends on this communicator "
                              "(MPI_Comm_attach_buffer%s, MPI_Buffer_attach)",
                              c && c->session ? ", MPI_Session_attach_buffer" : "");
    return fmpl_bsend_pool_send(p, func, comm, team, b, dest, tag);
}

/* ------------------------------------------------------------ the process's buffer */

static int attach(const char *func, void *buffer, MPI_Count size)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    const char *why;
    int rc = fmpl_bsend_attach_refusal(process_pool, buffer, size, &why);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, rc, func, "buffer %p, size %ld: %s", buffer,
                              (long)size, why);
    if (fmpl_bsend_pool_attach(&process_pool, buffer, size) != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, func,
                              "no memory for a buffer's bookkeeping");
    return MPI_SUCCESS;
}

static int detach(const char *func, void *buffer_addr, MPI_Count *size)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!buffer_addr || !size)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "buffer_addr or size is NULL");
    fmpl_bsend_pool_detach(&process_pool, buffer_addr, size);
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    FMPL_CORE_GUARD();
    return attach("MPI_Buffer_attach", buffer, size);
}
FMPL_MPI_WEAK(Buffer_attach)

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    FMPL_CORE_GUARD();
    return attach("MPI_Buffer_attach_c", buffer, size);
}
FMPL_MPI_WEAK(Buffer_attach_c)

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    FMPL_CORE_GUARD();
    MPI_Count n = 0;
    int rc = detach("MPI_Buffer_detach", buffer_addr, size ? &n : NULL);
    if (rc == MPI_SUCCESS && (rc = fmpl_bsend_size_to_int(n, size)) != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, rc, "MPI_Buffer_detach",
                              "the detached buffer's size %ld does not fit in an int "
                              "(use MPI_Buffer_detach_c)", (long)n);
    return rc;
}
FMPL_MPI_WEAK(Buffer_detach)

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    FMPL_CORE_GUARD();
    return detach("MPI_Buffer_detach_c", buffer_addr, size);
}
FMPL_MPI_WEAK(Buffer_detach_c)

int PMPI_Buffer_flush(void)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    fmpl_bsend_pool_flush(process_pool);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Buffer_flush)

int PMPI_Buffer_iflush(MPI_Request *request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!request)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_iflush", "request is NULL");
    int rc = fmpl_bsend_pool_iflush(process_pool, MPI_COMM_WORLD, request);
    return rc == MPI_SUCCESS ? rc
                             : fmpl_mpi_error(MPI_COMM_WORLD, rc, "MPI_Buffer_iflush",
                                              "no memory for a request");
}
FMPL_MPI_WEAK(Buffer_iflush)

/* ------------------------------------------------------------ sends */

static int bsend(const char *func, const void *buf, MPI_Aint count, MPI_Datatype type, int dest,
                 int tag, MPI_Comm comm)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    fmpl_mpi_buf b;
    int rc = fmpl_mpi_p2p_check(func, comm, buf, count, type, dest, tag, 0, &c, &b);
    if (rc != MPI_SUCCESS || dest == MPI_PROC_NULL)
        return rc;
    return fmpl_mpi_bsend_start(func, comm, c->team, &b, dest, tag);
}

static int ibsend(const char *func, const void *buf, MPI_Aint count, MPI_Datatype type,
                  int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    FMPL_MPI_CHECK_READY(comm);
    if (!request)
        return fmpl_mpi_error(comm, MPI_ERR_REQUEST, func, "request is NULL");
    int rc = bsend(func, buf, count, type, dest, tag, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_request *r = fmpl_mpi_request_new();
    if (!r)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a request");
    /* Complete now: the message is in the attached buffer (or goes
     * nowhere, to MPI_PROC_NULL). */
    r->kind = FMPL_MREQ_SEND;
    r->comm = comm;
    if (dest == MPI_PROC_NULL) {
        r->proc_null = 1;
    } else {
        r->kind = FMPL_MREQ_DONE;
        r->error = MPI_SUCCESS;
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return bsend("MPI_Bsend", buf, count, type, dest, tag, comm);
}
FMPL_MPI_WEAK(Bsend)

int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                 MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return bsend("MPI_Bsend_c", buf, count, type, dest, tag, comm);
}
FMPL_MPI_WEAK(Bsend_c)

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return ibsend("MPI_Ibsend", buf, count, type, dest, tag, comm, request);
}
FMPL_MPI_WEAK(Ibsend)

int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return ibsend("MPI_Ibsend_c", buf, count, type, dest, tag, comm, request);
}
FMPL_MPI_WEAK(Ibsend_c)

