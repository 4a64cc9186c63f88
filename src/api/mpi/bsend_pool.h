/* The buffers of buffered sends (bsend_pool.c).
 *
 * A pool is one attached buffer: the process's (MPI_Buffer_attach), a
 * communicator's (MPI_Comm_attach_buffer) or a session's
 * (MPI_Session_attach_buffer), either the user's memory or
 * MPI_BUFFER_AUTOMATIC (the library allocates each message's space).  Each
 * owner keeps a pointer to its pool (NULL: nothing attached); the pool
 * points back at that pointer so that MPI_Finalize, which drains and frees
 * every pool, can clear it.  A communicator freed with a pool attached
 * leaves the pool behind, orphaned: its messages are still delivered and
 * MPI_Finalize frees it. */
#ifndef FMPL_API_MPI_BSEND_POOL_H
#define FMPL_API_MPI_BSEND_POOL_H

#include "api/mpi/mpi_impl.h"

typedef struct fmpl_bsend_pool fmpl_bsend_pool;

/* The argument checks of every attach call: MPI_SUCCESS, or an error
 * class with *why saying what is wrong (`attached`: what the owner has
 * now, NULL if nothing). */
int fmpl_bsend_attach_refusal(const fmpl_bsend_pool *attached, const void *buffer,
                              MPI_Count size, const char **why);
/* A detached size for the int forms of detach: MPI_SUCCESS, or
 * MPI_ERR_COUNT with *size MPI_UNDEFINED when n does not fit. */
int fmpl_bsend_size_to_int(MPI_Count n, int *size);

/* Attach a buffer (or MPI_BUFFER_AUTOMATIC) as *slot, which must be NULL
 * (the caller reports an attached one).  MPI_SUCCESS or MPI_ERR_NO_MEM. */
int fmpl_bsend_pool_attach(fmpl_bsend_pool **slot, void *buffer, MPI_Count size);
/* Wait until every message in *slot has been delivered, give back what
 * was attached (MPI_BUFFER_AUTOMATIC and 0 for an automatic pool) and
 * clear *slot.  Nothing attached: NULL and 0. */
void fmpl_bsend_pool_detach(fmpl_bsend_pool **slot, void **buffer, MPI_Count *size);
/* Size of what was attached (for error messages). */
MPI_Count fmpl_bsend_pool_size(const fmpl_bsend_pool *p);
/* MPI_*_flush_buffer: wait until the messages in p (NULL: none) when
 * called have been delivered; p stays attached. */
void fmpl_bsend_pool_flush(fmpl_bsend_pool *p);
/* MPI_*_iflush_buffer: the same as a request (complete at once for NULL),
 * on `comm` for its errors.  MPI_SUCCESS or MPI_ERR_NO_MEM. */
int fmpl_bsend_pool_iflush(fmpl_bsend_pool *p, MPI_Comm comm, MPI_Request *request);
/* Copy (or pack) b's data into p and start sending it; reported on comm
 * from func (MPI_ERR_BUFFER when it does not fit). */
int fmpl_bsend_pool_send(fmpl_bsend_pool *p, const char *func, MPI_Comm comm, fmpl_team *team,
                         const fmpl_mpi_buf *b, int dest, int tag);
/* The owner goes (MPI_Comm_free): *slot is cleared and the pool kept
 * until its messages are out (MPI_Finalize frees it). */
void fmpl_bsend_pool_orphan(fmpl_bsend_pool **slot);
/* Sessions (session.c): where a live session keeps its pool, or NULL if
 * `session` is not one (finalized, never valid); its error handler. */
fmpl_bsend_pool **fmpl_mpi_session_bsend_slot(MPI_Session session);
MPI_Errhandler fmpl_mpi_session_errhandler(MPI_Session session);

#endif
