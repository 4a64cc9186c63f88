/* A request wrapped around another one (mpi_impl.h,
 * fmpl_mpi_request_wrap): the caller's hooks run at the inner request's
 * start and completion, in the program's thread, so that what the inner
 * operation works on (a Fortran array section's contiguous copy) can be
 * refreshed before it runs and read back after it ends.  The shape of
 * MPI_Isendrecv's two-in-one (isendrecv.c):
 *
 *   wrap            inner request I (just returned by an MPI call), outer
 *                   request W of kind FMPL_MREQ_ASYNC, whose fmpl_async is
 *                   done once I is; W's handle replaces I's
 *   MPI_Wait/Test   progress until I is done; W's completion step completes
 *                   I (I's status and error become W's), runs `complete`,
 *                   then (W not persistent) `release`
 *   MPI_Start(W)    `start`, MPI_Start(I)
 *   Request_free    an inactive persistent W: frees I, runs `release`; a
 *                   pending W: allowed when it is for I (point-to-point),
 *                   the completion step runs when I completes
 *   MPI_Cancel(W)   MPI_Cancel(I)
 *
 * The poll function only reads I's state (it may run on the agent thread);
 * I's own completion step runs inside W's. */
#include "api/mpi/mpi_impl.h"
#include "progress/async.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct wrapped {
    fmpl_async async;
    fmpl_mpi_request *inner;
    MPI_Request inner_handle;
    const fmpl_mpi_request_hooks *hooks;
    max_align_t state[]; /* the caller's */
} wrapped;

/* Finished, whether or not its completion step has run: reads only. */
static int inner_done(fmpl_async *a)
{
    const fmpl_mpi_request *r = ((wrapped *)a)->inner;
    if (r->proc_null || r->kind == FMPL_MREQ_DONE)
        return 1;
    if (r->kind == FMPL_MREQ_ASYNC)
        return !r->async || r->async->done;
    return (r->persistent && !r->active) || r->tm.complete;
}

static void wrapped_free(wrapped *w)
{
    w->hooks->release(w->state);
    free(w);
}

static int wrapped_complete(fmpl_mpi_request *r)
{
    wrapped *w = r->async_state;
    fmpl_mpi_request_test(w->inner); /* done: runs its completion step */
    int err = fmpl_mpi_request_finish(w->inner, &w->inner_handle, &r->async_status);
    r->async_has_status = 1;
    w->hooks->complete(w->state);
    if (!r->persistent)
        wrapped_free(w);
    return err;
}

static int wrapped_restart(fmpl_mpi_request *r, const char *func, fmpl_async **a)
{
    (void)func;
    wrapped *w = r->async_state;
    w->hooks->start(w->state);
    int rc = PMPI_Start(&w->inner_handle);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_async_start(&w->async, inner_done);
    *a = &w->async;
    return MPI_SUCCESS;
}

static int wrapped_release(fmpl_mpi_request *r)
{
    wrapped *w = r->async_state;
    /* Inactive (persistent): nothing more to complete.  At MPI_Finalize
     * the inner request may have gone first; then this fails harmlessly. */
    PMPI_Request_free(&w->inner_handle);
    wrapped_free(w);
    r->async_state = NULL;
    return MPI_SUCCESS;
}

static int wrapped_cancel(fmpl_mpi_request *r)
{
    wrapped *w = r->async_state;
    return w ? PMPI_Cancel(&w->inner_handle) : MPI_SUCCESS; /* NULL: complete */
}

/* No memory to wrap it: the operation ends here instead. */
static void end_here(MPI_Request *request, int persistent)
{
    if (persistent)
        PMPI_Request_free(request); /* never started */
    else
        PMPI_Wait(request, MPI_STATUS_IGNORE);
    *request = MPI_REQUEST_NULL;
}

void *fmpl_mpi_request_wrap(MPI_Request *request, const fmpl_mpi_request_hooks *hooks,
                            size_t state_size)
{
    FMPL_CORE_GUARD();
    fmpl_mpi_request *inner = fmpl_mpi_request_get(*request);
    if (!inner)
        return NULL;
    wrapped *w = calloc(1, sizeof *w + state_size);
    fmpl_mpi_request *r = w ? fmpl_mpi_request_new() : NULL;
    if (!r) {
        free(w);
        end_here(request, inner->persistent);
        return NULL;
    }
    w->inner = inner;
    w->inner_handle = *request;
    w->hooks = hooks;
    if (inner->persistent) {
        fmpl_mpi_async_request_persistent(r, inner->comm, w, wrapped_complete, wrapped_restart,
                                          wrapped_release);
    } else {
        fmpl_mpi_async_request_start(r, inner->comm, &w->async, wrapped_complete, w);
        /* Freeing it pending is what freeing the inner request would be. */
        r->async_freeable = inner->kind != FMPL_MREQ_ASYNC || inner->async_freeable;
        fmpl_async_start(&w->async, inner_done);
    }
    r->async_cancel = wrapped_cancel;
    *request = r->handle;
    return w->state;
}
