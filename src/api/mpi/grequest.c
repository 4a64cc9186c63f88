/* Generalised requests (MPI-4.0 13.2): MPI_Grequest_start and
 * MPI_Grequest_complete.  The request is an FMPL_MREQ_ASYNC one
 * (request_async.c) whose operation is the user's: its poll function
 * reports the flag MPI_Grequest_complete sets.
 *   - The Wait or Test that completes it (or MPI_Request_get_status) calls
 *     query_fn: the status it fills is the request's, its return value the
 *     request's error.
 *   - Freeing the request (that Wait or Test, or MPI_Request_free) calls
 *     free_fn.  Its error is the freeing call's (MPI-4.0 13.2: the call
 *     returns the error of the last callback, free_fn); when free_fn
 *     succeeds, query_fn's error stands.  In MPI_Waitall and the other
 *     multiple-completion calls it is the request's MPI_ERROR in
 *     MPI_ERR_IN_STATUS, as any request's error.
 *   - MPI_Cancel calls cancel_fn with whether MPI_Grequest_complete has
 *     been called, and returns its error.
 *   - A request freed while pending gets both callbacks inside the
 *     MPI_Grequest_complete that completes it; their errors have no caller
 *     left to go to. */
#include "api/mpi/mpi_impl.h"
#include "progress/async.h"
#include "progress/progress.h"

#include <stdlib.h>

typedef struct grequest {
    fmpl_async async;
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
    int completed; /* MPI_Grequest_complete was called */
} grequest;

static int completed(fmpl_async *a) { return ((grequest *)a)->completed; }

/* Wait/Test (or MPI_Request_get_status) found it complete: the status. */
static int grequest_complete(fmpl_mpi_request *r)
{
    grequest *g = r->async_state;
    MPI_Status *s = &r->async_status;
    fmpl_mpi_status_empty(s);
    r->async_has_status = 1;
    return g->query_fn ? g->query_fn(g->extra_state, s) : MPI_SUCCESS;
}

/* The request is freed (after Wait/Test completed it, or MPI_Request_free
 * once complete): free_fn, whose error the freeing call returns. */
static int grequest_release(fmpl_mpi_request *r)
{
    grequest *g = r->async_state;
    int err = g && g->free_fn ? g->free_fn(g->extra_state) : MPI_SUCCESS;
    free(g);
    r->async_state = NULL;
    r->async_release = NULL;
    return err;
}

static int grequest_cancel(fmpl_mpi_request *r)
{
    grequest *g = r->async_state;
    return g && g->cancel_fn ? g->cancel_fn(g->extra_state, g->completed) : MPI_SUCCESS;
}

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!request)
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_ARG, "request is NULL");
    grequest *g = calloc(1, sizeof *g);
    fmpl_mpi_request *r = g ? fmpl_mpi_request_new() : NULL;
    if (!r) {
        free(g);
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "no memory for a request");
    }
    *g = (grequest){.query_fn = query_fn, .free_fn = free_fn, .cancel_fn = cancel_fn,
                    .extra_state = extra_state};
    fmpl_mpi_async_request_start(r, MPI_COMM_WORLD, &g->async, grequest_complete, g);
    r->async_cancel = grequest_cancel;
    r->async_release = grequest_release;
    r->async_freeable = 1;
    fmpl_async_start(&g->async, completed);
    *request = r->handle;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    fmpl_mpi_request *r = fmpl_mpi_request_get(request);
    if (!r || r->kind != FMPL_MREQ_ASYNC || r->async_cancel != grequest_cancel || !r->async)
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                            "0x%x is not a pending generalised request", (unsigned)request);
    grequest *g = r->async_state;
    if (g->completed)
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                            "generalised request 0x%x is already complete", (unsigned)request);
    g->completed = 1;
    if (r->freed) { /* MPI_Request_free came first: query_fn and free_fn run now */
        fmpl_progress(); /* the engine sees the flag */
        fmpl_mpi_requests_reap();
    }
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Grequest_complete)
