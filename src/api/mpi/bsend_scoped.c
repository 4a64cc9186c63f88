/* MPI-4.1's buffers of buffered sends attached to one communicator or one
 * session (3.6.1-3.6.2): MPI_Comm_attach_buffer, _detach_buffer,
 * _flush_buffer, _iflush_buffer and the MPI_Session_* ones (attach and
 * detach with their _c forms).
 *
 * Each is the process-wide call (bsend.c) on the owner's own pool: a
 * communicator keeps it in fmpl_mpi_comm.bsend, a session in its object
 * (session.c).  Which pool a buffered send takes is bsend.c's rule.  Errors
 * go to the communicator's or the session's handler; an invalid session is
 * reported on MPI_COMM_SELF, as session.c does. */
#include "api/mpi/bsend_pool.h"

/* Whose buffer a call is about: where its pool pointer lives, and where its
 * errors go. */
typedef struct owner {
    fmpl_bsend_pool **slot;
    MPI_Errhandler handler;
    int handle;
    MPI_Comm comm; /* iflush requests' */
} owner;

#define REFUSE(o, code, func, ...)                                                 \
    fmpl_mpi_error_handler((o)->handler, (o)->handle, (code), (func), __VA_ARGS__)

/* The owner of comm's buffer, or the error reported. */
static int comm_owner(MPI_Comm comm, const char *func, owner *o)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    *o = (owner){&c->bsend, c->errhandler, comm, comm};
    return MPI_SUCCESS;
}

static int session_owner(MPI_Session session, const char *func, owner *o)
{
    fmpl_bsend_pool **slot = fmpl_mpi_session_bsend_slot(session);
    if (!slot)
        return fmpl_mpi_error(MPI_COMM_SELF, MPI_ERR_SESSION, func, "invalid session 0x%x",
                              (unsigned)session);
    *o = (owner){slot, fmpl_mpi_session_errhandler(session), session, MPI_COMM_SELF};
    return MPI_SUCCESS;
}

static int attach(const owner *o, const char *func, void *buffer, MPI_Count size)
{
    const char *why;
    int rc = fmpl_bsend_attach_refusal(*o->slot, buffer, size, &why);
    if (rc != MPI_SUCCESS)
        return REFUSE(o, rc, func, "buffer %p, size %ld: %s", buffer, (long)size, why);
    if (fmpl_bsend_pool_attach(o->slot, buffer, size) != MPI_SUCCESS)
        return REFUSE(o, MPI_ERR_NO_MEM, func, "no memory for a buffer's bookkeeping");
    return MPI_SUCCESS;
}

static int detach(const owner *o, const char *func, void *buffer_addr, MPI_Count *size)
{
    if (!buffer_addr || !size)
        return REFUSE(o, MPI_ERR_ARG, func, "buffer_addr or size is NULL");
    fmpl_bsend_pool_detach(o->slot, buffer_addr, size);
    return MPI_SUCCESS;
}

/* The int form of detach. */
static int detach_int(const owner *o, const char *func, void *buffer_addr, int *size)
{
    MPI_Count n = 0;
    int rc = detach(o, func, buffer_addr, size ? &n : NULL);
    if (rc == MPI_SUCCESS && (rc = fmpl_bsend_size_to_int(n, size)) != MPI_SUCCESS)
        return REFUSE(o, rc, func,
                      "the detached buffer's size %ld does not fit in an int (use the _c form)",
                      (long)n);
    return rc;
}

static int iflush(const owner *o, const char *func, MPI_Request *request)
{
    if (!request)
        return REFUSE(o, MPI_ERR_ARG, func, "request is NULL");
    if (fmpl_bsend_pool_iflush(*o->slot, o->comm, request) != MPI_SUCCESS)
        return REFUSE(o, MPI_ERR_NO_MEM, func, "no memory for a request");
    return MPI_SUCCESS;
}

/* PMPI_<name>(handle h, args): find h's owner with find_owner, then body. */
#define OWNER_CALL(name, find_owner, h, params, body)                              \
    int PMPI_##name params                                                         \
    {                                                                              \
        FMPL_CORE_GUARD();                                                         \
        static const char func[] = "MPI_" #name;                                   \
        owner o = {0};                                                             \
        int rc = find_owner(h, func, &o);                                          \
        return rc != MPI_SUCCESS ? rc : (body);                                    \
    }                                                                              \
    FMPL_MPI_WEAK(name)
#define COMM_CALL(name, params, body) OWNER_CALL(name, comm_owner, comm, params, body)
#define SESSION_CALL(name, params, body) OWNER_CALL(name, session_owner, session, params, body)

/* ------------------------------------------------------------ communicators */

COMM_CALL(Comm_attach_buffer, (MPI_Comm comm, void *buffer, int size),
          attach(&o, func, buffer, size))
COMM_CALL(Comm_attach_buffer_c, (MPI_Comm comm, void *buffer, MPI_Count size),
          attach(&o, func, buffer, size))
COMM_CALL(Comm_detach_buffer, (MPI_Comm comm, void *buffer_addr, int *size),
          detach_int(&o, func, buffer_addr, size))
COMM_CALL(Comm_detach_buffer_c, (MPI_Comm comm, void *buffer_addr, MPI_Count *size),
          detach(&o, func, buffer_addr, size))
COMM_CALL(Comm_flush_buffer, (MPI_Comm comm), (fmpl_bsend_pool_flush(*o.slot), MPI_SUCCESS))
COMM_CALL(Comm_iflush_buffer, (MPI_Comm comm, MPI_Request *request),
          iflush(&o, func, request))

/* ------------------------------------------------------------ sessions */

SESSION_CALL(Session_attach_buffer, (MPI_Session session, void *buffer, int size),
             attach(&o, func, buffer, size))
SESSION_CALL(Session_attach_buffer_c, (MPI_Session session, void *buffer, MPI_Count size),
             attach(&o, func, buffer, size))
SESSION_CALL(Session_detach_buffer, (MPI_Session session, void *buffer_addr, int *size),
             detach_int(&o, func, buffer_addr, size))
SESSION_CALL(Session_detach_buffer_c, (MPI_Session session, void *buffer_addr, MPI_Count *size),
             detach(&o, func, buffer_addr, size))
SESSION_CALL(Session_flush_buffer, (MPI_Session session),
             (fmpl_bsend_pool_flush(*o.slot), MPI_SUCCESS))
SESSION_CALL(Session_iflush_buffer, (MPI_Session session, MPI_Request *request),
             iflush(&o, func, request))
